/**
 * /cluster/sdn (pve-network PVE::API2::Network::SDN: index, and `reload`, the apply) and each node's zone status
 * (PVE::API2::Network::SDN::Nodes::Zones over PVE::Network::SDN::Zones::status).
 */
import type { Cluster } from '../model/cluster.js'
import { onNode } from '../model/sdn.js'
import { bool, str, type RouteTable } from './params.js'
import { lockToken, sortedIds } from './sdn-objects.js'
import { sdnControllerRoutes } from './sdn-controllers.js'
import { sdnSubnetRoutes } from './sdn-subnets.js'
import { sdnVnetRoutes } from './sdn-vnets.js'
import { sdnZoneRoutes } from './sdn-zones.js'

export function sdnRoutes(c: Cluster): RouteTable {
  const sdn = c.sdn
  return [
    ['GET', '/cluster/sdn', () => ['vnets', 'zones', 'controllers', 'ipams', 'dns', 'fabrics'].map((id) => ({ id }))],
    [
      'PUT',
      '/cluster/sdn',
      (ctx) => {
        // under the lock: commit_config (the running config and its version now), the lock released on request
        sdn.locked('could not commit SDN config', lockToken(ctx), () => {
          sdn.commit()
          if (lockToken(ctx) !== undefined && bool(ctx, 'release-lock') !== false) sdn.lockToken = undefined
        })
        // the `reloadnetworkall` worker starts each node's reload (`pvesh set /nodes/<node>/network`, a
        // `srvreload` task there) and ends without waiting for them; a node it cannot reach is a warning
        const first = [...c.nodes.keys()][0] ?? ''
        return c.dispatch(first, 'reloadnetworkall', '', ctx.caller.actor, {
          run: (task) => {
            for (const node of [...c.nodes.values()]) {
              task.log(`${node.name}: reloading network config`)
              if (!node.online) {
                task.warn(`${node.name}: no such node or node offline`)
                continue
              }
              c.dispatch(node.name, 'srvreload', 'networking', ctx.caller.actor, { run: () => sdn.reload(node.name) })
            }
          },
        })
      },
    ],
    [
      'GET',
      '/nodes/{node}/sdn/zones',
      (ctx) => {
        const node = str(ctx, 'node') ?? ''
        c.requireNode(node)
        const running = sdn.running
        if (!running) return []
        // a local file older than the running version reads `pending` (please reload)
        const local = sdn.nodes.get(node)?.version
        const status = local !== undefined && local >= running.version ? 'available' : 'pending'
        return sortedIds(running.ids.zones)
          .filter(([, z]) => onNode(z, node))
          .map(([zone]) => ({ zone, status }))
      },
    ],
    ...sdnZoneRoutes(c),
    ...sdnVnetRoutes(c),
    ...sdnSubnetRoutes(c),
    ...sdnControllerRoutes(c),
  ]
}
