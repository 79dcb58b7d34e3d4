/** The SdnController kind's schema side (kinds/contract.ts). */
import type { SchemaKind } from '../contract.js'
import { finaliseSdnController } from './finalise.js'
import { sdnControllerIdentity } from './identity.js'
import { controllerSpecSchema } from './schema.js'
import type { SdnControllerManifest } from './types.js'

export const sdnController = {
  name: 'SdnController',
  aliases: ['Controller'],
  root: 'sdncontroller',
  description:
    'The PVE SDN EVPN controller (`/cluster/sdn/controllers`); PVE keeps no comment on it, so ProxOps never deletes one.',
  spec: controllerSpecSchema,
  guest: false,
  allowEmpty: false,
  finalise: finaliseSdnController,
  references: () => [],
  identity: sdnControllerIdentity,
} as const satisfies SchemaKind<SdnControllerManifest>
