/** The normalised Pool manifest (docs/schema-reference.md#pool): the schema's output, finalised. */
import type { Envelope } from '../contract.js'
import type { Defaulted, Out } from '../../manifest/infer.js'
import type { poolSpecSchema } from './schema.js'

/** `id` defaults to `metadata.name` */
export type PoolSpec = Defaulted<Out<typeof poolSpecSchema>, 'id'>
export type PoolManifest = Envelope<'Pool', PoolSpec>
