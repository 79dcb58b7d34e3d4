import type { Identity } from '../contract.js'
import type { SubnetManifest } from './types.js'

/** A Subnet declares the subnet of its CIDR on its vnet (PVE keys it `<zone>-<network>-<mask>`). */
export function subnetIdentity(m: SubnetManifest): Identity[] {
  return [
    {
      key: `sdn-subnet:${m.spec.vnet}:${m.spec.cidr}`,
      label: `PVE SDN subnet ${m.spec.cidr} of vnet ${JSON.stringify(m.spec.vnet)}`,
      path: ['spec', 'cidr'],
      code: 'sdn-id-duplicate',
    },
  ]
}
