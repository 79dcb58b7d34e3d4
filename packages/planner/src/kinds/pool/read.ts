/**
 * Reads the resource pools (pve-manager PVE::API2::Pool): `GET /pools`, then `GET /pools?poolid=` per pool for
 * its members, which read_pool lists for every guest that exists (it checks `Pool.Audit` only), so a pool's
 * members are known even where the token cannot see the guests. 1 + pools requests per cycle. A failed read
 * makes every pool unknown, never absent: no pool is created, changed or deleted and no membership is planned.
 */
import type { LiveInventory, LivePool, Observed } from '../../inventory.js'
import type { ReadContext } from '../kind.js'
import type { LiveReader } from '../../ports.js'

export async function readPoolsOf(ctx: ReadContext): Promise<Pick<LiveInventory, 'pools'>> {
  return { pools: await readPools(ctx.reader, ctx.read) }
}

export async function readPools(
  reader: LiveReader,
  read: <T>(fn: () => Promise<T>) => Promise<T>,
): Promise<Observed<readonly LivePool[]>> {
  const list = reader.pools.bind(reader)
  const one = reader.pool.bind(reader)
  try {
    const ids = (await read(() => list())).map((p) => p.poolid)
    const pools = await Promise.all(
      ids.map(async (poolid): Promise<LivePool> => {
        const d = await read(() => one(poolid))
        const vmids: number[] = []
        const storages: string[] = []
        for (const m of d.members) {
          if (m.type === 'storage') storages.push(m.storage ?? m.id.replace(/^storage\/(?:[^/]+\/)?/, ''))
          else if (m.vmid !== undefined) vmids.push(m.vmid)
        }
        return {
          poolid,
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
