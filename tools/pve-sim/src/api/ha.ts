import type { Cluster } from '../model/cluster.js'
import { fail500 } from '../model/errors.js'
import type { RuleEnv } from '../model/ha-rules.js'
import { haStatusCurrent } from '../model/ha-status.js'
import { str, type RouteTable } from './params.js'

/**
 * /cluster/ha (pve-ha-manager PVE::API2::HA::Resources, Groups, Rules). Groups exist on 8.x; on 9.x they are
 * migrated to rules and every groups call dies (have_groups_been_migrated). Of the status endpoints, `current`
 * (PVE::API2::HA::Status `status`, model/ha-status.ts).
 * `migrate` and `relocate` queue a crm command (model/ha.ts `motion`).
 */
export function haRoutes(c: Cluster): RouteTable {
  const ha = c.ha
  const nine = c.pveVersion !== '8.4'
  // the CRM reads the rules and groups every round: a change may move services (select_service_node)
  const placed = <T>(result: T): T => {
    ha.manager.wakeAll()
    return result
  }
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
    ['GET', '/cluster/ha/status/current', () => haStatusCurrent(c, ha)],
    [
      'POST',
      '/cluster/ha/resources/{sid}/migrate',
      (ctx) => ha.motion('migrate', str(ctx, 'sid') ?? '', str(ctx, 'node') ?? ''),
    ],
    [
      'POST',
      '/cluster/ha/resources/{sid}/relocate',
      (ctx) => ha.motion('relocate', str(ctx, 'sid') ?? '', str(ctx, 'node') ?? ''),
    ],
    ['GET', '/cluster/ha/resources/{sid}', (ctx) => ha.item(ha.parseSid(str(ctx, 'sid') ?? '').sid)],
    ['PUT', '/cluster/ha/resources/{sid}', (ctx) => ha.update(ctx.params)],
    [
      'DELETE',
      '/cluster/ha/resources/{sid}',
      // purge (9.x, default 1): the resource also leaves every rule
      (ctx) => ha.remove(str(ctx, 'sid') ?? '', ctx.params.purge !== false),
    ],
    [
      'GET',
      '/cluster/ha/groups',
      () => {
        migrated('index groups')
        return ha.groups.list()
      },
    ],
    [
      'POST',
      '/cluster/ha/groups',
      (ctx) => {
        migrated('create group')
        return placed(ha.groups.create(ctx.params))
      },
    ],
    [
      'GET',
      '/cluster/ha/groups/{group}',
      (ctx) => {
        migrated('read group')
        return ha.groups.item(str(ctx, 'group') ?? '')
      },
    ],
    [
      'PUT',
      '/cluster/ha/groups/{group}',
      (ctx) => {
        migrated('update group')
        return placed(ha.groups.update(ctx.params))
      },
    ],
    [
      'DELETE',
      '/cluster/ha/groups/{group}',
      (ctx) => {
        migrated('delete group')
        return placed(ha.groups.remove(str(ctx, 'group') ?? '', (g) => ha.groupUser(g)))
      },
    ],
  ]
  if (nine) {
    const env: RuleEnv = {
      configured: (sid) => ha.resources.has(sid),
      nodeExists: (node) => c.nodes.has(node),
      // the manager status knows every cluster node (online or not)
      nodes: () => [...c.nodes.keys()],
    }
    // create_rule / update_rule die while groups are left to migrate (have_groups_been_migrated)
    const groupsLeft = (what: string) => {
      if (!ha.groupsMigrated()) throw fail500(`cannot ${what} ha rule: ha groups have not been migrated yet`)
    }
    table.push(
      ['GET', '/cluster/ha/rules', (ctx) => ha.rules.list(env, str(ctx, 'type'), str(ctx, 'resource'))],
      [
        'POST',
        '/cluster/ha/rules',
        (ctx) => {
          groupsLeft('create')
          return placed(ha.rules.create(ctx.params, env))
        },
      ],
      ['GET', '/cluster/ha/rules/{rule}', (ctx) => ha.rules.read(str(ctx, 'rule') ?? '', env)],
      [
        'PUT',
        '/cluster/ha/rules/{rule}',
        (ctx) => {
          groupsLeft('update')
          return placed(ha.rules.update(ctx.params, env))
        },
      ],
      ['DELETE', '/cluster/ha/rules/{rule}', (ctx) => placed(ha.rules.remove(str(ctx, 'rule') ?? ''))],
    )
  }
  return table
}
