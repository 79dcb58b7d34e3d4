/**
 * Reads the resource pools (pve-manager PVE::API2::Pool): `GET /pools` for the ids and comments, and the members in
 * as few requests as PVE allows. `/cluster/resources` (which observe() reads anyway) carries each guest's `pool`
 * (PVE::API2::Cluster resources), so most pools cost nothing more. A pool whose membership decides a write is read
 * with `GET /pools?poolid=` as well, because read_pool lists every member that exists (it checks `Pool.Audit`
 * only), also guests this token cannot see, and member storages: the pools the desired state names
 * (ObserveOptions.pools) and the pools this entry marked (ObserveOptions.ownership: its prune candidates, which
 * the plan deletes only when empty). Other entries' and other tools' marked pools are never written, so their
 * members come from /cluster/resources too. 1 + those pools requests per cycle. A failed read makes every pool
 * unknown, never absent: no pool is created, changed or deleted and no membership is planned.
 */
import type { ClusterResource, PoolInfo } from '@proxops/pve-client/wire'
import type { LiveInventory, LivePool, Observed } from '../../inventory.js'
import type { ReadContext } from '../../kit/kind.js'
import type { LiveReader } from '../../ports.js'
import type { Policy } from '../../plan-types.js'
import { commentOwner } from '../../kit/ownership.js'

/** the marker word ProxOps writes first into what it owns (kit/ownership.ts commentMarker) */
const MARKED = /^managed-by=/

export async function readPools(ctx: ReadContext): Promise<Pick<LiveInventory, 'pools'>> {
  const { pools: exact, ownership } = ctx.options
  return {
    pools: await readPoolList(ctx.reader, ctx.read, {
      resources: ctx.resources,
      exact,
      ...(ownership !== undefined ? { ownership } : {}),
    }),
  }
}

export async function readPoolList(
  reader: LiveReader,
  read: <T>(fn: () => Promise<T>) => Promise<T>,
  from: {
    /** /cluster/resources as observe() read it; absent: every pool is read with its own request */
    resources?: readonly ClusterResource[]
    /** the pools read with their own request besides the marked ones; `all` (the default) reads every pool so */
    exact?: readonly string[] | 'all'
    /** whose marker makes a pool a prune candidate; absent: every `managed-by=` pool is read on its own */
    ownership?: Pick<Policy, 'ownershipTag' | 'clusterEntry'>
  } = {},
): Promise<Observed<readonly LivePool[]>> {
  const list = reader.pools.bind(reader)
  const one = reader.pool.bind(reader)
  const exact = from.exact ?? 'all'
  const named = new Set(exact === 'all' ? [] : exact)
  const { ownership } = from
  const marked = (p: PoolInfo): boolean =>
    ownership !== undefined ? commentOwner(p.comment, ownership) === 'self' : MARKED.test(p.comment ?? '')
  const own = (p: PoolInfo): boolean =>
    exact === 'all' || from.resources === undefined || named.has(p.poolid) || marked(p)
  try {
    const listed = await read(() => list())
    const byResources = membersByPool(from.resources ?? [])
    const pools = await Promise.all(
      listed.map(async (p): Promise<LivePool> => {
        if (!own(p))
          return {
            poolid: p.poolid,
            ...(p.comment !== undefined ? { comment: p.comment } : {}),
            vmids: byResources.get(p.poolid) ?? [],
            storages: [],
          }
        const d = await read(() => one(p.poolid))
        const vmids: number[] = []
        const storages: string[] = []
        for (const m of d.members) {
          if (m.type === 'storage') storages.push(m.storage ?? m.id.replace(/^storage\/(?:[^/]+\/)?/, ''))
          else if (m.vmid !== undefined) vmids.push(m.vmid)
        }
        return {
          poolid: p.poolid,
          ...(d.comment !== undefined ? { comment: d.comment } : {}),
          vmids: vmids.sort((a, b) => a - b),
          storages: storages.sort(),
        }
      }),
    )
    return { known: pools.sort((a, b) => (a.poolid < b.poolid ? -1 : a.poolid > b.poolid ? 1 : 0)) }
  } catch (error) {
    return { unreadable: error instanceof Error ? error.message : String(error) }
  }
}

/** pool -> its guests' vmids, sorted, from the `pool` of /cluster/resources' guest rows */
function membersByPool(resources: readonly ClusterResource[]): Map<string, number[]> {
  const out = new Map<string, number[]>()
  for (const r of resources) {
    if ((r.type !== 'qemu' && r.type !== 'lxc') || r.pool === undefined || r.vmid === undefined) continue
    const list = out.get(r.pool) ?? []
    list.push(r.vmid)
    out.set(r.pool, list)
  }
  for (const list of out.values()) list.sort((a, b) => a - b)
  return out
}
