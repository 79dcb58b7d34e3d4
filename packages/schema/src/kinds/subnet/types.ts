/** The normalised Subnet manifest (docs/schema-reference.md#subnet): the schema's output, finalised. */
import type { Envelope } from '../contract.js'
import type { Out } from '../../manifest/infer.js'
import type { subnetSpecSchema } from './schema.js'

export type SubnetSpec = Out<typeof subnetSpecSchema>
export type SubnetManifest = Envelope<'Subnet', SubnetSpec>
