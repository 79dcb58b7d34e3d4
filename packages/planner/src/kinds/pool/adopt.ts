/**
 * adopt for pools: each live pool the selection kept becomes a Pool manifest (`spec.id` when the pool id is not
 * a manifest name, the comment without ProxOps' marker), and a guest in a pool gets `spec.pool`. Pure.
 */
import type { Kind } from '@proxops/schema'
import type { LiveInventory } from '../../inventory.js'
import { adoptedFile, type AdoptedFile } from '../../kit/adopt.js'
import { commentText } from '../../kit/ownership.js'

type Claim = (kind: Kind, base: string, id: string | number) => string

export function adoptPools(
  live: LiveInventory,
  cluster: string,
  only: readonly string[] | undefined,
  claim: Claim,
  sanitise: (raw: string, fallback: string) => string,
  ownershipTag: string,
): AdoptedFile[] {
  if ('unreadable' in live.pools) return []
  const wanted = only === undefined ? undefined : new Set(only)
  return live.pools.known
    .filter((p) => !wanted || wanted.has(p.poolid))
    .map((p) => {
      const name = claim('Pool', sanitise(p.poolid, 'pool'), p.poolid)
      const comment = commentText(p.comment, ownershipTag)
      return adoptedFile('Pool', cluster, name, {
        ...(name !== p.poolid ? { id: p.poolid } : {}),
        ...(comment !== undefined ? { comment } : {}),
      })
    })
}

/** vmid -> the pool it is in (a guest is in at most one), or a warning when the pools could not be read */
export function poolMemberships(live: LiveInventory): { of: Map<number, string>; warning?: string } {
  const of = new Map<number, string>()
  if ('unreadable' in live.pools)
    return { of, warning: `the pools could not be read (${live.pools.unreadable}); spec.pool was not adopted` }
  for (const p of live.pools.known) for (const vmid of p.vmids) of.set(vmid, p.poolid)
  return { of }
}
