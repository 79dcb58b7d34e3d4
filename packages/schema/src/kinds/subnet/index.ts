/** The Subnet kind's schema side (kinds/contract.ts). */
import type { SchemaKind } from '../contract.js'
import { finaliseSubnet } from './finalise.js'
import { subnetIdentity } from './identity.js'
import { subnetReferences } from './references.js'
import { subnetSpecSchema } from './schema.js'
import type { SubnetManifest } from './types.js'

export const subnet = {
  name: 'Subnet',
  aliases: ['SdnSubnet'],
  root: 'subnet',
  description:
    "A PVE SDN subnet of a vnet (`/cluster/sdn/vnets/{vnet}/subnets`); PVE keeps no comment on it, so ProxOps deletes one only with its vnet's marker.",
  spec: subnetSpecSchema,
  guest: false,
  allowEmpty: false,
  finalise: finaliseSubnet,
  references: subnetReferences,
  identity: subnetIdentity,
} as const satisfies SchemaKind<SubnetManifest>
