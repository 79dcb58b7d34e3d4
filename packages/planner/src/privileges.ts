/**
 * What a plan needs from the API token before anything is written, and what is left of the plan once the
 * token's privileges are known (docs/getting-started.md "A least-privilege token"). Each kind says what its
 * requests need (`Kind.privileges`, following PVE's own checks); this module collects them for a plan and
 * checks them against what the token holds.
 */
import { describeAction as describe, kindOf } from './kinds/index.js'
import { objectKind } from './kit/draft.js'
import type { Grant, RequestNeed } from './kit/privileges.js'
import { compareAnomalies, compareSkips, summaryOf } from './plan/order.js'
import type { Action, Anomaly, Plan, PveRequest, Skip } from './plan-types.js'

export type { Grant }

export type PrivilegeNeed =
  | {
      /** the action that needs it */
      action: string
      /** the PVE config key (or request parameter) it is for; absent for the call itself */
      key?: string
      /** satisfied when any one alternative is */
      anyOf: readonly Grant[]
    }
  | { action: string; key: string; rootOnly: string }

/** what one request needs, from the action's kind, which sends it */
function requestNeeds(r: PveRequest, action: Action): RequestNeed[] {
  const kind = kindOf(action)
  const of = kind.privileges[r.call] as ((r: PveRequest, a: Action) => RequestNeed[]) | undefined
  if (!of) throw new Error(`kind ${kind.name} does not declare what a ${r.call} request needs`)
  return of(r, action)
}

/** Every privilege the plan's actions need, in plan order (pure). */
export function privilegeNeeds(plan: Plan): PrivilegeNeed[] {
  const out: PrivilegeNeed[] = []
  for (const a of plan.actions) {
    for (const r of a.requests) {
      for (const n of requestNeeds(r, a)) {
        if (typeof n.need === 'string') out.push({ action: a.id, key: n.key ?? r.call, rootOnly: n.need })
        else out.push({ action: a.id, ...(n.key !== undefined ? { key: n.key } : {}), anyOf: n.need })
      }
    }
  }
  return out
}

/** The ACL paths whose privileges decide the needs, sorted (one `GET /access/permissions?path=` each). */
export function neededPaths(needs: readonly PrivilegeNeed[]): string[] {
  const paths = new Set<string>()
  for (const n of needs) if ('anyOf' in n) for (const g of n.anyOf) paths.add(g.path)
  return [...paths].sort()
}

/** The built-in role that grants a privilege with the least else (none for the root-group Sys.* privileges). */
const GRANTING_ROLE: Readonly<Record<string, string>> = {
  'VM.Audit': 'PVEAuditor',
  'VM.PowerMgmt': 'PVEVMUser',
  'VM.Config.CDROM': 'PVEVMUser',
  'VM.Config.Cloudinit': 'PVEVMUser',
  'Datastore.AllocateSpace': 'PVEDatastoreUser',
  'Datastore.Audit': 'PVEAuditor',
  'Datastore.Allocate': 'PVEDatastoreAdmin',
  'Datastore.AllocateTemplate': 'PVEDatastoreAdmin',
  'SDN.Use': 'PVESDNUser',
  'Sys.Audit': 'PVEAuditor',
  'Mapping.Use': 'PVEMappingUser',
}
const roleFor = (priv: string): string | undefined =>
  GRANTING_ROLE[priv] ?? (priv.startsWith('VM.') ? 'PVEVMAdmin' : undefined)

/** the `pveum` command that grants `privs` on `path` to the token (and its user: a privsep token gets the intersection) */
export function pveumGrant(actor: string, path: string, privs: readonly string[]): string {
  const i = actor.lastIndexOf('!')
  const who = i > 0 ? `--users ${actor.slice(0, i)} --tokens '${actor}'` : `--users ${actor}`
  const roles = [...new Set(privs.map(roleFor))]
  if (roles.length === 1 && roles[0] !== undefined) return `pveum acl modify ${path} ${who} --roles ${roles[0]}`
  const role = `ProxOps-${privs.join('-')}`
  return `pveum role add ${role} --privs ${privs.join(',')} && pveum acl modify ${path} ${who} --roles ${role}`
}

/** privileges on a path: a set, or `all` (root@pam) */
export type Privileges = ReadonlyMap<string, ReadonlySet<string>>

const describeAction = (a: Action): string => `${describe(a).label} of ${a.address}`

/**
 * The plan with every action whose privileges are missing taken out (and the actions that depend on it),
 * each missing privilege reported as a `missing-privilege` anomaly with the pveum line that grants it.
 * `actor`: the token id (`user@realm!name`) or, for a ticket, the user. root@pam itself may do everything.
 */
export function checkPrivileges(plan: Plan, needs: readonly PrivilegeNeed[], granted: Privileges, actor: string): Plan {
  if (actor === 'root@pam') return plan
  const byId = new Map(plan.actions.map((a) => [a.id, a]))
  const anomalies: Anomaly[] = []
  const blocked = new Set<string>()
  const seen = new Set<string>()
  const has = (g: Grant): boolean => g.privs.every((p) => granted.get(g.path)?.has(p) ?? false)
  for (const n of needs) {
    const a = byId.get(n.action)
    if (!a) continue
    const field = n.key === undefined ? undefined : (a.diffs.find((d) => d.key === n.key)?.field ?? n.key)
    let message: string
    if ('rootOnly' in n) {
      message = `${describeAction(a)}: ${n.rootOnly}; ${actor} cannot do it (PVE checks the caller is root@pam itself, which no API token is)`
    } else {
      if (n.anyOf.some(has)) continue
      const first = n.anyOf[0] as Grant
      const missing = first.privs.filter((p) => !(granted.get(first.path)?.has(p) ?? false))
      const alt =
        n.anyOf.length > 1
          ? ` (or ${n.anyOf
              .slice(1)
              .map((g) => `${g.privs.join('+')} on ${g.path}`)
              .join(', or ')})`
          : ''
      message = `${describeAction(a)}: ${actor} lacks ${missing.join(', ')} on ${first.path}${alt}${n.key !== undefined ? ` (for ${n.key})` : ''}; grant it with: ${pveumGrant(actor, first.path, missing)}`
    }
    blocked.add(a.id)
    if (seen.has(message)) continue
    seen.add(message)
    anomalies.push({
      code: 'missing-privilege',
      address: a.address,
      kind: objectKind(a.address),
      ...(field !== undefined ? { field } : {}),
      message,
    })
  }
  if (blocked.size === 0) return plan
  // dependants of a blocked action cannot succeed either: same object (dependsOn) or a prerequisite (requires)
  const skips: Skip[] = []
  for (let grew = true; grew;) {
    grew = false
    const blockedAddresses = new Set(plan.actions.filter((a) => blocked.has(a.id)).map((a) => a.address))
    for (const a of plan.actions) {
      if (blocked.has(a.id)) continue
      const cause = a.dependsOn.find((d) => blocked.has(d)) ?? a.requires.find((r) => blockedAddresses.has(r))
      if (cause === undefined) continue
      blocked.add(a.id)
      grew = true
      skips.push({
        code: 'missing-privilege',
        address: a.address,
        kind: objectKind(a.address),
        node: a.node,
        ...(a.vmid !== undefined ? { vmid: a.vmid } : {}),
        message: `${describeAction(a)} waits for ${cause}, which the token lacks privileges for`,
      })
    }
  }
  const actions = plan.actions.filter((a) => !blocked.has(a.id))
  const allAnomalies = [...plan.anomalies, ...anomalies].sort(compareAnomalies)
  const allSkips = [...plan.skips, ...skips].sort(compareSkips)
  return {
    ...plan,
    actions,
    anomalies: allAnomalies,
    skips: allSkips,
    summary: summaryOf(actions, allAnomalies, allSkips, plan.pending),
  }
}
