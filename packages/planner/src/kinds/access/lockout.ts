/**
 * The lock-out guards (docs/access.md#lock-out): a plan must not remove or weaken what the credential ProxOps runs
 * as holds (its token, its user, the groups it is in, the ACL entries that grant any of them and the roles those
 * entries name), nor take away the last principal that holds Permissions.Modify on `/` (besides root@pam, which is
 * never touched but may be unusable: PAM logins are often off). Such actions are blocked with a `lockout` anomaly
 * in diff, unless the cluster's `access.acknowledge-lockout` is set (then the anomaly says so and they run).
 * The privileges follow PVE::AccessControl::roles and PVE::RPCEnvironment::permissions: a user's own entries, its
 * groups', and for a token its own (cut to its user's when privilege-separated).
 */
import type { AclEntry } from '@proxops/pve-client/wire'
import type { Anomaly, PlanParams } from '../../plan-types.js'
import { objectKind, type Draft } from '../../kit/draft.js'
import type { AccessEnv } from './plan.js'

const list = (v: PlanParams[string] | undefined): string[] =>
  typeof v === 'string' ? v.split(',').filter((x) => x !== '') : typeof v === 'number' ? [String(v)] : []

/** what one draft takes away, if anything, from a set of principals */
interface Principals {
  users: Set<string>
  groups: Set<string>
  tokens: Set<string>
}

/** the principals of the running credential: its token, its user, the user's groups */
function credentialPrincipals(env: AccessEnv, credential: string): Principals {
  const bang = credential.lastIndexOf('!')
  const user = bang > 0 ? credential.slice(0, bang) : credential
  return {
    users: new Set([user]),
    groups: new Set(env.live.groupsOf(user)),
    tokens: new Set(bang > 0 ? [credential] : []),
  }
}

const grants = (p: Principals, e: Pick<AclEntry, 'type' | 'ugid'>): boolean =>
  e.type === 'user' ? p.users.has(e.ugid) : e.type === 'group' ? p.groups.has(e.ugid) : p.tokens.has(e.ugid)

/** why a draft weakens what `p` holds, or undefined */
function weakens(env: AccessEnv, p: Principals, draft: Draft): string | undefined {
  const entries = [...env.live.entries.values()].filter((e) => grants(p, e))
  const grantedRoles = new Set(entries.map((e) => e.roleid))
  for (const r of draft.requests) {
    switch (r.call) {
      case 'deleteUser':
        if (p.users.has(r.userid)) return `it deletes user ${r.userid}`
        break
      case 'updateUser':
        if (!p.users.has(r.userid)) break
        if (r.params.enable === 0) return `it disables user ${r.userid}`
        if (r.params.expire !== undefined && r.params.expire !== 0) return `it sets an expiry on user ${r.userid}`
        if (r.params.groups !== undefined) {
          const kept = new Set(list(r.params.groups))
          const left = [...p.groups].filter((g) => !kept.has(g))
          if (left.length > 0) return `it takes user ${r.userid} out of group ${left.join(', ')}`
        }
        break
      case 'deleteToken':
        if (p.tokens.has(`${r.userid}!${r.tokenid}`)) return `it deletes token ${r.userid}!${r.tokenid}`
        break
      case 'updateToken':
        if (!p.tokens.has(`${r.userid}!${r.tokenid}`)) break
        if (r.params.privsep === 1) return `it turns on privilege separation of token ${r.userid}!${r.tokenid}`
        if (r.params.expire !== undefined && r.params.expire !== 0)
          return `it sets an expiry on token ${r.userid}!${r.tokenid}`
        break
      case 'deleteGroup':
        if (p.groups.has(r.groupid)) return `it deletes group ${r.groupid}`
        break
      case 'deleteRole':
        if (grantedRoles.has(r.roleid)) return `it deletes role ${r.roleid}`
        break
      case 'updateRole': {
        if (!grantedRoles.has(r.roleid)) break
        const kept = new Set(list(r.params.privs))
        const lost = (env.live.roles.get(r.roleid)?.privs ?? []).filter((x) => !kept.has(x))
        if (lost.length > 0) return `it takes ${lost.join(', ')} from role ${r.roleid}`
        break
      }
      case 'updateAcl': {
        const path = String(r.params.path)
        const roles = new Set(list(r.params.roles))
        const hit = (type: AclEntry['type'], ids: string[]) =>
          ids.some((ugid) =>
            entries.some(
              (e) =>
                e.path === path &&
                e.type === type &&
                e.ugid === ugid &&
                roles.has(e.roleid) &&
                (r.params.delete === 1 || (e.propagate && r.params.propagate === 0)),
            ),
          )
        if (
          hit('user', list(r.params.users)) ||
          hit('group', list(r.params.groups)) ||
          hit('token', list(r.params.tokens))
        )
          return `it ${r.params.delete === 1 ? 'removes' : 'stops propagating'} an ACL entry on ${path} that grants it`
        break
      }
      default:
        break
    }
  }
  return undefined
}

/** the principals holding Permissions.Modify on `/` through an entry there (enabled users, their tokens, groups with an enabled member) */
function modifyHolders(env: AccessEnv): { principals: Principals; label: string }[] {
  const out: { principals: Principals; label: string }[] = []
  for (const e of env.live.entries.values()) {
    if (e.path !== '/' || !(env.live.roles.get(e.roleid)?.privs.includes('Permissions.Modify') ?? false)) continue
    const p: Principals = { users: new Set(), groups: new Set(), tokens: new Set() }
    if (e.type === 'user' && env.live.users.get(e.ugid)?.enable) p.users.add(e.ugid)
    else if (e.type === 'token' && env.live.users.get(e.ugid.slice(0, e.ugid.lastIndexOf('!')))?.enable)
      p.tokens.add(e.ugid)
    else if (
      e.type === 'group' &&
      (env.live.groups.get(e.ugid)?.users ?? []).some((u) => env.live.users.get(u)?.enable)
    )
      p.groups.add(e.ugid)
    else continue
    out.push({ principals: p, label: `${e.type} ${e.ugid} (${e.roleid} on /)` })
  }
  return out
}

/**
 * The drafts (and prune candidates) the guards block, and their anomalies. With the acknowledgement nothing is
 * blocked; the anomalies still say what the plan takes away.
 */
export function guardLockout(env: AccessEnv, drafts: readonly Draft[]): { blocked: Set<Draft>; anomalies: Anomaly[] } {
  const blocked = new Set<Draft>()
  const anomalies: Anomaly[] = []
  const access = env.own.policy.access
  const ack = access?.acknowledgeLockout === true
  const block = (d: Draft, message: string) => {
    anomalies.push({
      code: 'lockout',
      address: d.address,
      kind: objectKind(d.address),
      message: ack
        ? `${message}; access.acknowledge-lockout is set, so it runs`
        : `${message}; blocked (set access.acknowledge-lockout in the cluster config to allow it)`,
    })
    if (!ack) blocked.add(d)
  }
  const credential = access?.credential
  if (credential !== undefined && credential !== 'root@pam') {
    const p = credentialPrincipals(env, credential)
    for (const d of drafts) {
      const why = weakens(env, p, d)
      if (why !== undefined) block(d, `${why}, which the running credential ${credential} holds`)
    }
  }
  // the last holders of Permissions.Modify on /: block every action that takes it from any of them
  const holders = modifyHolders(env)
  if (holders.length > 0) {
    const hits = new Map<Draft, string[]>()
    const untouched = holders.filter((h) => {
      const taking = drafts.filter((d) => weakens(env, h.principals, d) !== undefined)
      for (const d of taking) hits.set(d, [...(hits.get(d) ?? []), h.label])
      return taking.length === 0
    })
    if (untouched.length === 0)
      for (const [d, labels] of hits)
        if (!blocked.has(d))
          block(
            d,
            `the plan takes Permissions.Modify on / from its last holders (${labels.join(', ')}); root@pam alone would be left`,
          )
  }
  return { blocked, anomalies }
}
