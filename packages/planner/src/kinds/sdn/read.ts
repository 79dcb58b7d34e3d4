/**
 * Reading the SDN kinds: the zones, vnets and controllers listings with `pending=1` (pending_config: each object's
 * running values, `state` and pending keys), then every vnet's subnets (PVE lists subnets per vnet only). Every
 * vnet's, not only the declared ones': `PUT /cluster/sdn` applies every pending edit, so one left pending on any
 * subnet must be seen before ProxOps applies (docs/network.md). Read only when the desired state declares SDN
 * objects (or for adopt); a failed read makes SDN unknown: nothing SDN is planned.
 */
import type { LiveInventory } from '../../inventory.js'
import type { ReadContext } from '../../kit/kind.js'
import { compare, errorText } from '../../kit/text.js'

export async function readSdn(ctx: ReadContext): Promise<Pick<LiveInventory, 'sdn'>> {
  if (!ctx.options.sdn) return {}
  const r = ctx.reader
  try {
    const [zones, vnets, controllers] = await Promise.all([
      ctx.read(() => r.sdn('zones')),
      ctx.read(() => r.sdn('vnets')),
      ctx.read(() => r.sdn('controllers')),
    ])
    // a vnet only in the running config (deleted in the file) still lists its running subnets
    const subnets = (await Promise.all(vnets.map((v) => ctx.read(() => r.sdnSubnets(v.id))))).flat()
    const byId = <T extends { id: string }>(xs: T[]) => xs.sort((a, b) => compare(a.id, b.id))
    return {
      sdn: {
        known: { zones: byId(zones), vnets: byId(vnets), controllers: byId(controllers), subnets: byId(subnets) },
      },
    }
  } catch (error) {
    ctx.options.signal?.throwIfAborted()
    return { sdn: { unreadable: `read failed: ${errorText(error)}` } }
  }
}
