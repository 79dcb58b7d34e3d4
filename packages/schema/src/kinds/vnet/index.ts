/** The VNet kind's schema side (kinds/contract.ts). */
import type { SchemaKind } from '../contract.js'
import { finaliseVNet } from './finalise.js'
import { vnetIdentity } from './identity.js'
import { vnetReferences } from './references.js'
import { vnetSpecSchema } from './schema.js'
import type { VNetManifest } from './types.js'

export const vnet = {
  name: 'VNet',
  aliases: ['SdnVnet'],
  root: 'vnet',
  description: 'A PVE SDN vnet (`/cluster/sdn/vnets`), owned through a marker in its alias.',
  spec: vnetSpecSchema,
  guest: false,
  allowEmpty: false,
  finalise: finaliseVNet,
  references: vnetReferences,
  identity: vnetIdentity,
} as const satisfies SchemaKind<VNetManifest>
