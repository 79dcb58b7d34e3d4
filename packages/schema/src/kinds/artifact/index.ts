/** The artifact kinds' schema side (kinds/contract.ts): ISO, CTTemplate and DiskImage share one spec. */
import type { SchemaKind } from '../contract.js'
import { finaliseArtifact } from './finalise.js'
import { artifactIdentity, artifactReferences } from './identity.js'
import { artifactSpecSchema, type ArtifactKind } from './schema.js'
import type { CtTemplateManifest, DiskImageManifest, IsoManifest } from './types.js'

/** each artifact kind's other spellings, kind root and description */
const OWN = {
  ISO: [[], 'iso', 'An ISO image downloaded onto storage with `iso` content.'],
  CTTemplate: [['CTT'], 'ctt', 'A container template archive downloaded onto storage with `vztmpl` content.'],
  DiskImage: [['DISK'], 'diskimage', 'A disk image downloaded onto storage with `import` content, to seed VM disks.'],
} as const satisfies Record<ArtifactKind, readonly [readonly string[], string, string]>

/** the registry entry of one artifact kind: its own facts, and the parts every artifact kind shares */
function artifactKind<const K extends ArtifactKind>(name: K) {
  const [aliases, root, description] = OWN[name]
  const shared = {
    guest: false,
    allowEmpty: false,
    finalise: finaliseArtifact,
    references: artifactReferences,
  } as const
  return { name, aliases, root, description, spec: artifactSpecSchema(name), ...shared, identity: artifactIdentity }
}

export const iso = artifactKind('ISO') satisfies SchemaKind<IsoManifest>
export const ctTemplate = artifactKind('CTTemplate') satisfies SchemaKind<CtTemplateManifest>
export const diskImage = artifactKind('DiskImage') satisfies SchemaKind<DiskImageManifest>
