/** The normalised VNet manifest (docs/schema-reference.md#vnet): the schema's output, finalised. */
import type { Envelope } from '../contract.js'
import type { Defaulted, Out } from '../../manifest/infer.js'
import type { vnetSpecSchema } from './schema.js'

/** `id` defaults to `metadata.name` */
export type VNetSpec = Defaulted<Out<typeof vnetSpecSchema>, 'id'>
export type VNetManifest = Envelope<'VNet', VNetSpec>
