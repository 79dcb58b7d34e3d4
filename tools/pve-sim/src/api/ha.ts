import type { Cluster } from '../model/cluster.js'
import { fail500 } from '../model/errors.js'
import { str, type RouteTable } from './routes.js'

/**
 * /cluster/ha (pve-ha-manager PVE::API2::HA::Resources, Groups, Rules). Groups exist on 8.x; on 9.x they are
 * migrated to rules and every groups call dies (have_groups_been_migrated). Status endpoints are not modelled.
 */
export function haRoutes(c: Cluster): RouteTable {
  const ha = c.ha
  const nine = c.pveVersion !== '8.4'
  const migrated = (what: string) => {
    if (ha.groupsMigrated()) throw fail500(`cannot ${what}: ha groups have been migrated to rules`)
  }
  const table: RouteTable = [
    [
      'GET',
      '/cluster/ha',
      () => [{ id: 'status' }, { id: 'resources' }, { id: 'groups' }, ...(nine ? [{ id: 'rules' }] : [])],
    ],
    [
      'GET',
      '/cluster/ha/resources',
      (ctx) => {
        const type = str(ctx, 'type')
        return [...ha.resources.keys()]
          .sort()
          .map((sid) => ha.item(sid))
          .filter((r) => type === undefined || r.type === type)
      },
    ],
    ['POST', '/cluster/ha/resources', (ctx) => ha.create(ctx.params)],
    ['GET', '/cluster/ha/resources/{sid}', (ctx) => ha.item(ha.parseSid(str(ctx, 'sid') ?? '').sid)],
    ['PUT', '/cluster/ha/resources/{sid}', (ctx) => ha.update(ctx.params)],
    [
      'DELETE',
      '/cluster/ha/resources/{sid}',
      (ctx) => {
        const { sid } = ha.parseSid(str(ctx, 'sid') ?? '')
        ha.remove(sid)
        // purge (9.x, default 1): the resource leaves every rule; a rule left empty is deleted
        if (nine && ctx.params.purge !== false) {
          for (const [id, rule] of ha.rules) {
            const left = String(rule.resources ?? '')
              .split(',')
              .filter((r) => r !== '' && r !== sid)
            if (left.length === 0) ha.rules.delete(id)
            else rule.resources = left.join(',')
          }
        }
        return null
      },
    ],
    [
      'GET',
      '/cluster/ha/groups',
      () => {
        migrated('index groups')
        return [...ha.groups.keys()].sort().map((group) => ({ group, type: 'group', ...ha.groups.get(group) }))
      },
    ],
    [
      'POST',
      '/cluster/ha/groups',
      (ctx) => {
        migrated('create group')
        return createGroup(c, ctx.params)
      },
    ],
    [
      'GET',
      '/cluster/ha/groups/{group}',
      (ctx) => {
        migrated('read group')
        const group = str(ctx, 'group') ?? ''
        const g = ha.groups.get(group)
        if (!g) throw fail500(`no such ha group '${group}'`)
        return { group, type: 'group', ...g }
      },
    ],
    [
      'DELETE',
      '/cluster/ha/groups/{group}',
      (ctx) => {
        migrated('delete group')
        const group = str(ctx, 'group') ?? ''
        if (!ha.groups.delete(group)) throw fail500(`no such ha group '${group}'`)
        return null
      },
    ],
  ]
  if (nine) {
    table.push(
      [
        'GET',
        '/cluster/ha/rules',
        (ctx) => {
          const type = str(ctx, 'type')
          return [...ha.rules.keys()]
            .sort()
            .map((rule): Record<string, unknown> => ({ rule, ...ha.rules.get(rule) }))
            .filter((r) => type === undefined || r.type === type)
        },
      ],
      ['POST', '/cluster/ha/rules', (ctx) => createRule(c, ctx.params)],
      [
        'GET',
        '/cluster/ha/rules/{rule}',
        (ctx) => {
          const rule = str(ctx, 'rule') ?? ''
          const r = ha.rules.get(rule)
          if (!r) throw fail500(`no such ha rule '${rule}'`)
          return { rule, ...r }
        },
      ],
      [
        'DELETE',
        '/cluster/ha/rules/{rule}',
        (ctx) => {
          const rule = str(ctx, 'rule') ?? ''
          if (!ha.rules.delete(rule)) throw fail500(`no such ha rule '${rule}'`)
          return null
        },
      ],
    )
  }
  return table
}

/** PVE::API2::HA::Groups create (8.x): nodes `node[:prio],...` must be cluster nodes */
function createGroup(c: Cluster, params: Record<string, unknown>): null {
  const group = String(params.group)
  if (c.ha.groups.has(group)) throw fail500(`ha group ID '${group}' already defined`)
  const nodes = String(params.nodes ?? '')
  for (const n of nodes.split(',').filter(Boolean)) {
    const name = n.split(':')[0] as string
    if (!c.nodes.has(name)) throw fail500(`node '${name}' does not exist`)
  }
  const conf: Record<string, unknown> = { nodes }
  for (const k of ['restricted', 'nofailback'] as const)
    if (params[k] !== undefined) conf[k] = params[k] === true ? 1 : 0
  if (params.comment !== undefined) conf.comment = String(params.comment)
  c.ha.groups.set(group, conf)
  return null
}

/** PVE::API2::HA::Rules create (9.x): resources must be configured HA resources */
function createRule(c: Cluster, params: Record<string, unknown>): null {
  const rule = String(params.rule)
  if (c.ha.rules.has(rule)) throw fail500(`ha rule '${rule}' already defined`)
  const resources = String(params.resources ?? '')
    .split(',')
    .filter(Boolean)
    .map((r) => c.ha.parseSid(r).sid)
  for (const sid of resources)
    if (!c.ha.resources.has(sid)) throw fail500(`resource '${sid}' is not configured as HA resource`)
  const conf: Record<string, unknown> = { type: String(params.type), resources: resources.sort().join(',') }
  for (const k of ['nodes', 'affinity', 'comment'] as const) if (params[k] !== undefined) conf[k] = String(params[k])
  for (const k of ['strict', 'disable'] as const) if (params[k] !== undefined) conf[k] = params[k] === true ? 1 : 0
  c.ha.rules.set(rule, conf)
  return null
}
