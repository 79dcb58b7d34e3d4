import type { Identity } from '../contract.js'
import type { GuestManifest } from './types.js'

/** The identity key of the guest with `vmid`, whatever its kind and node. */
export const guestKey = (vmid: number): string => `vmid:${vmid}`

/**
 * A guest declares its vmid, which is cluster-wide in PVE (one /etc/pve/nodes/<node>/{qemu-server,lxc}/<vmid>.conf
 * namespace across nodes and both guest types), and so does its HA resource (`vm:<vmid>` / `ct:<vmid>`).
 */
export function guestIdentity(m: GuestManifest): Identity[] {
  return [
    {
      key: guestKey(m.spec.vmid),
      label: `PVE id ${m.spec.vmid}`,
      where: ` on node "${m.spec.node}"`,
      rule: 'vmids are unique across the whole cluster',
      path: ['spec', 'vmid'],
      code: 'duplicate-vmid',
    },
  ]
}
