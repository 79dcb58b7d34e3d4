import type { RequestContext, Route } from '../http/types.js'
import { int, str, type RouteTable } from './params.js'
import type { Cluster } from '../model/cluster.js'
import { fail400 } from '../model/errors.js'
import { clusterResources, nodesList, version } from '../model/views.js'
import { taskRoutes } from './tasks.js'
import { guestRoutes } from './guests.js'
import { storageRoutes } from './storage.js'
import { storageConfigRoutes } from './storage-config.js'
import { clusterOptionsRoutes } from './cluster-options.js'
import { nodeRoutes } from './nodes.js'
import { haRoutes } from './ha.js'
import { firewallRoutes } from './firewall.js'
import { poolRoutes } from './pools.js'
import { backupRoutes } from './backup.js'
import { replicationRoutes } from './replication.js'
import { sdnRoutes } from './sdn.js'

/** every route, each settling due tasks first so state is current */
export function buildRoutes(c: Cluster): Route[] {
  const table: RouteTable = [
    ['GET', '/version', () => version(c)],
    ['GET', '/nodes', () => nodesList(c)],
    ['GET', '/cluster/resources', (ctx) => clusterResources(c, str(ctx, 'type'))],
    ['GET', '/cluster/config/nodes', () => [...c.nodes.values()].map((n) => ({ node: n.name }))],
    ['GET', '/cluster/status', () => clusterStatus(c)],
    ['GET', '/cluster/nextid', (ctx) => nextId(c, int(ctx, 'vmid'))],
    ...taskRoutes(c),
    ...guestRoutes(c),
    ...storageRoutes(c),
    ...storageConfigRoutes(c),
    ...clusterOptionsRoutes(c),
    ...nodeRoutes(c),
    ...haRoutes(c),
    ...firewallRoutes(c),
    ...poolRoutes(c),
    ...backupRoutes(c),
    ...replicationRoutes(c),
    ...sdnRoutes(c),
  ]
  return table.map(([method, path, handler]) => ({
    method,
    path,
    handler: (ctx: RequestContext) => {
      c.settle()
      return handler(ctx)
    },
  }))
}

/** `/cluster/nextid` answers a JSON string; with `vmid`, that id if free, else 400 */
function nextId(c: Cluster, vmid: number | undefined): string {
  if (vmid !== undefined) {
    if (c.guests.has(vmid)) throw fail400({ vmid: `VM ${vmid} already exists` })
    return String(vmid)
  }
  return String(c.nextId())
}

/**
 * pve-manager PVE::API2::Cluster get_status: the cluster entry (corosync's view) and one entry per member
 * (quorum: Cluster.quorate).
 */
function clusterStatus(c: Cluster): Record<string, unknown>[] {
  const nodes = [...c.nodes.values()]
  const quorate = c.quorate() ? 1 : 0
  const out: Record<string, unknown>[] = [
    { type: 'cluster', id: 'cluster', name: 'sim', nodes: nodes.length, quorate, version: nodes.length },
  ]
  nodes.forEach((n, i) => {
    out.push({
      type: 'node',
      id: `node/${n.name}`,
      name: n.name,
      nodeid: i + 1,
      ip: c.nodeIp(n.name),
      online: n.online ? 1 : 0,
      local: i === 0 ? 1 : 0,
      level: '',
    })
  })
  return out
}
