/** The normalised Zone manifest (docs/schema-reference.md#zone): the schema's output, finalised. */
import type { Envelope } from '../contract.js'
import type { Defaulted, Out } from '../../manifest/infer.js'
import type { zoneSpecSchema } from './schema.js'

/** `id` defaults to `metadata.name` */
export type ZoneSpec = Defaulted<Out<typeof zoneSpecSchema>, 'id'>
export type ZoneManifest = Envelope<'Zone', ZoneSpec>
