/** The normalised SdnController manifest (docs/schema-reference.md#sdncontroller): the schema's output, finalised. */
import type { Envelope } from '../contract.js'
import type { Defaulted, Out } from '../../manifest/infer.js'
import type { controllerSpecSchema } from './schema.js'

/** `id` defaults to `metadata.name` */
export type SdnControllerSpec = Defaulted<Out<typeof controllerSpecSchema>, 'id'>
export type SdnControllerManifest = Envelope<'SdnController', SdnControllerSpec>
