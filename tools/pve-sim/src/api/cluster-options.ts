import type { Cluster } from '../model/cluster.js'
import { str, type RouteTable } from './params.js'

/**
 * /cluster/options (pve-manager PVE::API2::Cluster get_options / set_options): GET returns datacenter.cfg as
 * parse_datacenter_config reads it plus `allowed-tags`; PUT sets the given options (as written) and removes the
 * `delete` ones, under the file's lock. The parameters are checked against the API schema before the handler.
 */
export function clusterOptionsRoutes(c: Cluster): RouteTable {
  const dc = c.datacenter
  return [
    // get_allowed_tags: the simulator's callers are privileged, and it tracks no tag registry: none listed
    ['GET', '/cluster/options', () => ({ ...dc.read(), 'allowed-tags': [] })],
    [
      'PUT',
      '/cluster/options',
      (ctx) => {
        const del = (str(ctx, 'delete') ?? '').split(/[,;\s]+/).filter((k) => k !== '')
        for (const [k, v] of Object.entries(ctx.params))
          if (k !== 'delete' && v !== undefined) dc.options.set(k, v === true ? '1' : v === false ? '0' : String(v))
        for (const k of del) dc.options.delete(k)
        return null
      },
    ],
  ]
}
