/** The normalised artifact manifests (docs/schema-reference.md#iso): the schema's output, finalised. */
import type { Envelope } from '../contract.js'
import type { Completed, Out } from '../../manifest/infer.js'
import type { isoSpecSchema } from './schema.js'

type ArtifactSpecOut = Out<typeof isoSpecSchema>
export type ChecksumAlgorithm = NonNullable<NonNullable<ArtifactSpecOut['checksum']>['algorithm']>

/** the three artifact kinds share one spec */
export type ArtifactSpec = Completed<
  Omit<ArtifactSpecOut, 'node'>,
  {
    /** every node the file must exist on; the legacy `node` promoted; de-duplicated, order kept */
    nodes: string[]
    /** both or neither (the value lower-cased) */
    checksum?: { algorithm: ChecksumAlgorithm; value: string }
  }
>

export type IsoManifest = Envelope<'ISO', ArtifactSpec>
export type CtTemplateManifest = Envelope<'CTTemplate', ArtifactSpec>
export type DiskImageManifest = Envelope<'DiskImage', ArtifactSpec>
export type ArtifactManifest = IsoManifest | CtTemplateManifest | DiskImageManifest
