import type { RequestContext } from '../http/types.js'
import type { Cluster } from '../model/cluster.js'
import { fail400, fail500 } from '../model/errors.js'
import { resourceItem, storageResourceItem } from '../model/views.js'
import { bool, str, type RouteTable } from './params.js'

type Item = Record<string, unknown>

/** PVE::Tools::split_list: `,`, `;` and whitespace separate */
function splitList(v: string | undefined): string[] {
  return (v ?? '').split(/[,;\s]+/).filter((x) => x !== '')
}

/**
 * /pools (pve-manager PVE::API2::Pool: index, create_pool, update_pool, read_pool, delete_pool and the
 * deprecated `/pools/{poolid}` forms). 8.4 and 9.1 serve the same API: apidoc.json and apidoc-pve8.json list
 * identical parameters and returns for both paths.
 */
export function poolRoutes(c: Cluster): RouteTable {
  const pools = c.pools

  /** index with a poolid: the pool's members that still exist, guests by vmid then storages */
  const poolInfo = (poolid: string, type: string | undefined): Item => {
    const e = pools.pools.get(poolid)
    if (!e) throw fail500(`pool '${poolid}' does not exist`)
    const members: Item[] = []
    for (const vmid of [...e.vms].map(String).sort()) {
      const g = c.guests.get(Number(vmid))
      if (!g || (type !== undefined && type !== g.type)) continue
      // extract_vm_stats only: lock, tags, hastate and pool are what Cluster.pm resources adds on top
      const { lock: _l, tags: _t, hastate: _h, ...stats } = resourceItem(c, g)
      members.push(stats)
    }
    if (type === undefined || type === 'storage') {
      // the answering node (the first) if the storage is enabled there, else the first node it is restricted to
      const local = [...c.nodes.values()][0]
      for (const sid of [...e.storage].sort()) {
        const d = c.storage.get(sid)
        if (!d || !local) continue
        const name = d.nodes && !d.nodes.includes(local.name) ? [...d.nodes].sort()[0] : local.name
        const n = name === undefined ? undefined : c.nodes.get(name)
        if (n) members.push(storageResourceItem(n, d))
      }
    }
    return { members, ...(e.comment !== undefined ? { comment: e.comment } : {}), poolid }
  }

  const index = (ctx: RequestContext): Item[] => {
    const poolid = str(ctx, 'poolid')
    const type = str(ctx, 'type')
    // the schema's `requires => 'poolid'` (the HTTP layer's validation says the same)
    if (type !== undefined && poolid === undefined) throw fail400({ poolid: "missing property required by 'type'" })
    if (poolid !== undefined) return [poolInfo(poolid, type)]
    return [...pools.pools.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([poolid, e]) => ({ poolid, ...(e.comment !== undefined ? { comment: e.comment } : {}) }))
  }

  const update = (ctx: RequestContext): null => {
    const vms = str(ctx, 'vms')
    const storage = str(ctx, 'storage')
    pools.update({
      poolid: str(ctx, 'poolid') ?? '',
      ...(str(ctx, 'comment') !== undefined ? { comment: str(ctx, 'comment') } : {}),
      ...(vms !== undefined ? { vms: splitList(vms).map(Number) } : {}),
      ...(storage !== undefined ? { storage: splitList(storage) } : {}),
      delete: bool(ctx, 'delete') === true,
      allowMove: bool(ctx, 'allow-move') === true,
    })
    return null
  }

  const remove = (ctx: RequestContext): null => {
    const poolid = str(ctx, 'poolid') ?? ''
    pools.remove(
      poolid,
      (vmid) => c.guests.has(vmid),
      (sid) => c.storage.get(sid) !== undefined,
    )
    // delete_pool: the pool's ACLs go in the same user.cfg write (AccessControl delete_pool_acl)
    c.aclCleanup.pool(poolid)
    return null
  }

  return [
    ['GET', '/pools', index],
    [
      'POST',
      '/pools',
      (ctx) => {
        pools.create(str(ctx, 'poolid') ?? '', str(ctx, 'comment'))
        return null
      },
    ],
    ['PUT', '/pools', update],
    ['DELETE', '/pools', remove],
    ['GET', '/pools/{poolid}', (ctx) => poolInfo(str(ctx, 'poolid') ?? '', str(ctx, 'type'))],
    ['PUT', '/pools/{poolid}', update],
    ['DELETE', '/pools/{poolid}', remove],
  ]
}
