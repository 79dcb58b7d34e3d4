/**
 * The guests this cluster entry manages (docs/safety.md#what-points-at-a-guest): the ones its manifests declare,
 * unless the guest kind found the vmid held on PVE by a guest that is not this entry's (another entry's, an
 * untagged guest of another name, one of the other type or outside the allowlist). Whatever ProxOps writes that
 * reaches a guest (a backup job's selection; the HA resource, firewall and pool membership, which live on a
 * planned guest) may reach only these. Pure.
 */
import { isGuest } from '../desired.js'
import type { KindContext } from './kind.js'

export type ManagedGuests = (vmid: number) => string | undefined

/** Why `vmid` is not a guest this entry manages, or undefined when it is. */
export function managedGuests(ctx: Pick<KindContext, 'desired' | 'foreignGuests'>): ManagedGuests {
  const declared = new Set(ctx.desired.manifests.flatMap((m) => (isGuest(m) ? [m.spec.vmid] : [])))
  return (vmid) => (!declared.has(vmid) ? 'no guest of this cluster declares it' : ctx.foreignGuests.get(vmid))
}
