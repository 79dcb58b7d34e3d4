/** The artifact kinds' schema side (kinds/contract.ts): ISO, CTTemplate and DiskImage share one spec. */
import type { SchemaKind } from '../contract.js'
import { finaliseArtifact } from './finalise.js'
import { artifactIdentity, artifactReferences } from './identity.js'
import { artifactSpecSchema } from './schema.js'
import type { CtTemplateManifest, DiskImageManifest, IsoManifest } from './types.js'

const common = {
  guest: false,
  allowEmpty: false,
  finalise: finaliseArtifact,
  references: artifactReferences,
  identity: artifactIdentity,
} as const

export const iso = {
  name: 'ISO',
  aliases: [],
  root: 'iso',
  description: 'An ISO image downloaded onto storage with `iso` content.',
  spec: artifactSpecSchema('ISO'),
  ...common,
} as const satisfies SchemaKind<IsoManifest>

export const ctTemplate = {
  name: 'CTTemplate',
  aliases: ['CTT'],
  root: 'ctt',
  description: 'A container template archive downloaded onto storage with `vztmpl` content.',
  spec: artifactSpecSchema('CTTemplate'),
  ...common,
} as const satisfies SchemaKind<CtTemplateManifest>

export const diskImage = {
  name: 'DiskImage',
  aliases: ['DISK'],
  root: 'diskimage',
  description: 'A disk image downloaded onto storage with `import` content, to seed VM disks.',
  spec: artifactSpecSchema('DiskImage'),
  ...common,
} as const satisfies SchemaKind<DiskImageManifest>
