import type { Cluster } from '../model/cluster.js'
import { bool, str, type RouteTable } from './params.js'

/** /cluster/replication (pve-manager PVE::API2::ReplicationConfig: index, read, create, delete) */
export function replicationRoutes(c: Cluster): RouteTable {
  const jobs = c.replication
  return [
    ['GET', '/cluster/replication', () => jobs.list()],
    ['POST', '/cluster/replication', (ctx) => jobs.create(ctx.params)],
    ['GET', '/cluster/replication/{id}', (ctx) => jobs.read(str(ctx, 'id') ?? '')],
    [
      'DELETE',
      '/cluster/replication/{id}',
      (ctx) => jobs.remove(str(ctx, 'id') ?? '', bool(ctx, 'keep') === true, bool(ctx, 'force') === true),
    ],
  ]
}
