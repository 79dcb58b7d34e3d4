import type { Identity } from '../contract.js'
import { idPath } from '../../manifest/sdn.js'
import { vnetKey } from './references.js'
import type { VNetManifest } from './types.js'

/** A VNet declares the SDN vnet of its `spec.id` (`/etc/pve/sdn/vnets.cfg`). */
export function vnetIdentity(m: VNetManifest): Identity[] {
  return [
    {
      key: vnetKey(m.spec.id),
      label: `PVE SDN vnet id ${JSON.stringify(m.spec.id)}`,
      path: idPath(m),
      code: 'sdn-id-duplicate',
    },
  ]
}
