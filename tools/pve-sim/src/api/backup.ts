import type { Cluster } from '../model/cluster.js'
import { str, type RouteTable } from './params.js'

/** /cluster/backup (pve-manager PVE::API2::Backup): index, create_job, read_job, update_job, delete_job */
export function backupRoutes(c: Cluster): RouteTable {
  const jobs = c.backupJobs
  return [
    ['GET', '/cluster/backup', () => jobs.list()],
    ['POST', '/cluster/backup', (ctx) => jobs.create(ctx.params)],
    ['GET', '/cluster/backup/{id}', (ctx) => jobs.item(str(ctx, 'id') ?? '')],
    ['PUT', '/cluster/backup/{id}', (ctx) => jobs.update(ctx.params)],
    ['DELETE', '/cluster/backup/{id}', (ctx) => jobs.remove(str(ctx, 'id') ?? '')],
  ]
}
