import type { Identity } from '../contract.js'
import { sdnIdentity } from '../../manifest/sdn.js'
import { vnetKey } from './references.js'
import type { VNetManifest } from './types.js'

/** A VNet declares the SDN vnet of its `spec.id` (`/etc/pve/sdn/vnets.cfg`). */
export function vnetIdentity(m: VNetManifest): Identity[] {
  return sdnIdentity(vnetKey(m.spec.id), 'vnet', m)
}
