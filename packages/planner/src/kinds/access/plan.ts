/**
 * Planning the access objects (pure): creates and updates of the declared roles, groups, users, tokens and ACL
 * entries (pve-access-control API2::Role create_role/update_role, API2::Group, API2::User create_user/update_user,
 * generate_token/update_token_info, API2::ACL update_acl), the findings PVE would refuse them for, the lock-out
 * guards (lockout.ts) and the prune candidates (prune.ts). docs/access.md
 *
 * Ownership without a state file: groups, users and tokens carry this entry's marker as the first word of their
 * comment (kit/ownership.ts), which a declaration writes; roles have no comment, so a role is this entry's when its
 * id starts with the cluster's `access.role-prefix`. ACL entries have no comment either: one is deleted only when
 * its principal is this entry's; for every other principal ProxOps only adds or changes what git declares.
 * Built-in roles, root@pam and the realms are never written.
 */
import type { AclManifest, GroupManifest, RoleManifest, TokenManifest, UserManifest } from '@proxops/schema'
import { aclEntries, tokenFullId } from '@proxops/schema'
import type { Anomaly, FieldDiff, Skip } from '../../plan-types.js'
import { clusterObjectBase, objectKind, type Draft } from '../../kit/draft.js'
import { emptyPlan, type KindContext, type KindPlan } from '../../kit/kind.js'
import { commentWord } from '../../kit/ownership.js'
import {
  accessAddresses,
  aclAddress,
  desiredAccess,
  entryKey,
  groupAddress,
  LiveIndex,
  ownership,
  roleAddress,
  tokenAddress,
  userAddress,
  type DesiredAccess,
  type Ownership,
} from './model.js'
import { guardLockout } from './lockout.js'
import { accessPrunes } from './prune.js'

type Kind = 'Role' | 'Group' | 'User' | 'Token' | 'ACL'
type Base = Pick<Draft, 'resource' | 'address' | 'kind' | 'name' | 'node' | 'disruption' | 'tier' | 'level'>

export interface AccessEnv {
  d: DesiredAccess
  live: LiveIndex
  own: Ownership
  pveVersion: string
  drafts: Draft[]
  anomalies: Anomaly[]
  skips: Skip[]
  levelOf(key: string): number
}

const bool = (b: boolean): number => (b ? 1 : 0)
const sameSet = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i])

export function planAccess(ctx: KindContext): KindPlan {
  const out = emptyPlan()
  const d = desiredAccess(ctx.desired.manifests)
  const observed = ctx.live.access
  if (observed === undefined || 'unreadable' in observed) {
    const why =
      observed === undefined
        ? 'the access objects were not read this cycle'
        : `the access objects could not be read this cycle (${observed.unreadable})`
    for (const m of ctx.desired.manifests) {
      if (m.kind !== 'Role' && m.kind !== 'Group' && m.kind !== 'User' && m.kind !== 'Token' && m.kind !== 'ACL')
        continue
      for (const address of accessAddresses(m))
        out.skips.push({
          code: 'unknown',
          address,
          kind: m.kind,
          node: '',
          message: `${why}; no create, update or delete`,
        })
    }
    return out
  }
  const env: AccessEnv = {
    d,
    live: new LiveIndex(observed.known),
    own: ownership(ctx.policy),
    pveVersion: ctx.live.pveVersion,
    drafts: [],
    anomalies: out.anomalies,
    skips: out.skips,
    levelOf: (k) => ctx.levelOf(k),
  }
  for (const m of [...d.roles.values()]) planRole(env, m)
  for (const m of [...d.groups.values()]) planGroup(env, m)
  for (const m of [...d.users.values()]) planUser(env, m)
  for (const m of [...d.tokens.values()]) planToken(env, m)
  for (const m of d.acls) planAcl(env, m)
  const prunes = accessPrunes(env)
  const guarded = guardLockout(env, [...env.drafts, ...prunes.all.map((c) => c.draft)])
  out.drafts.push(...env.drafts.filter((x) => !guarded.blocked.has(x)))
  out.anomalies.push(...guarded.anomalies)
  out.prunes = prunes.group((c) => !guarded.blocked.has(c.draft))
  return out
}

function base(env: AccessEnv, kind: Kind, name: string, address: string): Base {
  return clusterObjectBase(kind, name, address, env.levelOf(`${kind}/${name}`))
}

function refused(env: AccessEnv, b: Base, field: string, message: string): void {
  env.anomalies.push({ code: 'access-refused', address: b.address, kind: objectKind(b.address), field, message })
}

/** another cluster entry's object: never taken over */
function elsewhere(env: AccessEnv, b: Base, what: string, comment: string | undefined): boolean {
  if (env.own.comment(comment) !== 'other') return false
  env.anomalies.push({
    code: 'owned-elsewhere',
    address: b.address,
    kind: objectKind(b.address),
    message: `${what} carries another cluster entry's marker (${commentWord(comment)}); ${b.resource ?? ''} does not take it over`,
  })
  return true
}

/** one field's diff and the parameter that writes it, when the live value differs */
function field(
  diffs: FieldDiff[],
  params: Record<string, string | number>,
  key: string,
  desired: string | number | undefined,
  live: string | number | undefined,
): void {
  if (desired === undefined || String(desired) === String(live ?? '')) return
  diffs.push({
    field: `spec.${key}`,
    key,
    ...(live !== undefined ? { before: String(live) } : {}),
    after: String(desired),
  })
  params[key] = desired
}

function planRole(env: AccessEnv, m: RoleManifest): void {
  const id = m.spec.roleid
  const b = base(env, 'Role', m.metadata.name, roleAddress(id))
  const live = env.live.roles.get(id)
  if (live?.special) {
    refused(env, b, 'spec.roleid', `role ${id} is one of PVE's built-in roles, which cannot be modified`)
    return
  }
  const unknown = env.live.validPrivs ? m.spec.privs.filter((p) => !env.live.validPrivs?.has(p)) : []
  if (unknown.length > 0) {
    refused(
      env,
      b,
      'spec.privs',
      `PVE ${env.pveVersion} does not know the privilege${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')} (verify_privname); the role is not written`,
    )
    return
  }
  const privs = [...m.spec.privs].sort()
  if (!live) {
    env.drafts.push({
      ...b,
      type: 'create',
      reason: `${b.address}: not on PVE; will create`,
      diffs: [{ field: 'spec.privs', key: 'privs', after: privs.join(',') }],
      requests: [{ call: 'createRole', params: { roleid: id, privs: privs.join(',') } }],
    })
    return
  }
  if (sameSet(live.privs, privs)) return
  env.drafts.push({
    ...b,
    type: 'update',
    reason: `${b.address}: drift (privs)`,
    diffs: [{ field: 'spec.privs', key: 'privs', before: live.privs.join(','), after: privs.join(',') }],
    // without `append`, update_role replaces the role's privileges
    requests: [{ call: 'updateRole', roleid: id, params: { privs: privs.join(',') } }],
  })
}

function planGroup(env: AccessEnv, m: GroupManifest): void {
  const id = m.spec.groupid
  const b = base(env, 'Group', m.metadata.name, groupAddress(id))
  const live = env.live.groups.get(id)
  const comment = env.own.marked(m.spec.comment)
  if (!live) {
    env.drafts.push({
      ...b,
      type: 'create',
      reason: `${b.address}: not on PVE; will create`,
      diffs: [{ field: 'spec.comment', key: 'comment', after: comment }],
      requests: [{ call: 'createGroup', params: { groupid: id, comment } }],
    })
    return
  }
  if (elsewhere(env, b, `group ${id}`, live.comment) || live.comment === comment) return
  env.drafts.push({
    ...b,
    type: 'update',
    reason: `${b.address}: ${env.own.comment(live.comment) === 'self' ? '' : 'claimed; '}drift (comment)`,
    diffs: [
      {
        field: 'spec.comment',
        key: 'comment',
        ...(live.comment !== undefined ? { before: live.comment } : {}),
        after: comment,
      },
    ],
    requests: [{ call: 'updateGroup', groupid: id, params: { comment } }],
  })
}

function planUser(env: AccessEnv, m: UserManifest): void {
  const s = m.spec
  const id = s.userid
  const b = base(env, 'User', m.metadata.name, userAddress(id))
  const realm = id.slice(id.lastIndexOf('@') + 1)
  if (!env.live.realms.has(realm)) {
    refused(
      env,
      b,
      'spec.userid',
      `realm ${realm} does not exist on PVE (create_user: domain '${realm}' does not exist)`,
    )
    return
  }
  const missing = (s.groups ?? []).filter((g) => !env.live.groups.has(g) && !env.d.groups.has(g))
  if (missing.length > 0) {
    refused(
      env,
      b,
      'spec.groups',
      `no such group ${missing.join(', ')}: neither on PVE nor declared (create_user: no such group)`,
    )
    return
  }
  const live = env.live.users.get(id)
  const comment = env.own.marked(s.comment)
  const groups = s.groups === undefined ? undefined : [...s.groups].sort().join(',')
  if (!live) {
    const params: Record<string, string | number | { secret: { refs: string[]; encoding: 'plain' } }> = {
      userid: id,
      comment,
    }
    const diffs: FieldDiff[] = [{ field: 'spec.comment', key: 'comment', after: comment }]
    const p: Record<string, string | number> = {}
    field(diffs, p, 'email', s.email, undefined)
    field(diffs, p, 'firstname', s.firstname, undefined)
    field(diffs, p, 'lastname', s.lastname, undefined)
    field(diffs, p, 'enable', s.enable === undefined ? undefined : bool(s.enable), undefined)
    field(diffs, p, 'expire', s.expire, undefined)
    if (groups !== undefined && groups !== '') field(diffs, p, 'groups', groups, undefined)
    Object.assign(params, p)
    const ref = s['password-ref']
    if (ref !== undefined) {
      params.password = { secret: { refs: [ref], encoding: 'plain' } }
      diffs.push({ field: 'spec.password-ref', key: 'password', after: '(sensitive)' })
    }
    env.drafts.push({
      ...b,
      type: 'create',
      reason: `${b.address}: not on PVE; will create`,
      diffs: diffs.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)),
      requests: [{ call: 'createUser', params: params }],
    })
    return
  }
  if (elsewhere(env, b, `user ${id}`, live.comment)) return
  const diffs: FieldDiff[] = []
  const params: Record<string, string | number> = {}
  field(diffs, params, 'comment', comment, live.comment)
  field(diffs, params, 'email', s.email, live.email)
  field(diffs, params, 'firstname', s.firstname, live.firstname)
  field(diffs, params, 'lastname', s.lastname, live.lastname)
  field(diffs, params, 'enable', s.enable === undefined ? undefined : bool(s.enable), bool(live.enable))
  field(diffs, params, 'expire', s.expire, live.expire)
  // a declared list replaces the membership (update_user without append); '' leaves every group
  field(diffs, params, 'groups', groups, env.live.groupsOf(id).join(','))
  if (diffs.length === 0) return
  env.drafts.push({
    ...b,
    type: 'update',
    reason: `${b.address}: ${env.own.comment(live.comment) === 'self' ? '' : 'claimed; '}drift (${diffs.map((x) => x.key).join(', ')})`,
    diffs: diffs.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)),
    requests: [{ call: 'updateUser', userid: id, params }],
  })
}

function planToken(env: AccessEnv, m: TokenManifest): void {
  const s = m.spec
  const full = tokenFullId(m)
  const b = base(env, 'Token', m.metadata.name, tokenAddress(full))
  if (!env.live.users.has(s.userid) && !env.d.users.has(s.userid)) {
    refused(env, b, 'spec.userid', `user ${s.userid} is neither on PVE nor declared (generate_token: no such user)`)
    return
  }
  const live = env.live.tokens.get(full)
  const comment = env.own.marked(s.comment)
  const diffs: FieldDiff[] = []
  const params: Record<string, string | number> = {}
  field(diffs, params, 'comment', comment, live?.comment)
  field(diffs, params, 'expire', s.expire, live?.expire)
  field(
    diffs,
    params,
    'privsep',
    s.privsep === undefined ? undefined : bool(s.privsep),
    live ? bool(live.privsep) : undefined,
  )
  if (!live) {
    env.drafts.push({
      ...b,
      type: 'create',
      reason: `${b.address}: not on PVE; will create (its secret is written age-encrypted, never shown)`,
      diffs: diffs.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)),
      requests: [{ call: 'createToken', userid: s.userid, tokenid: s.tokenid, params }],
    })
    return
  }
  if (elsewhere(env, b, `token ${full}`, live.comment) || diffs.length === 0) return
  env.drafts.push({
    ...b,
    type: 'update',
    reason: `${b.address}: ${env.own.comment(live.comment) === 'self' ? '' : 'claimed; '}drift (${diffs.map((x) => x.key).join(', ')})`,
    diffs: diffs.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)),
    // update_token_info changes privsep, expire and comment in place: no re-creation, the secret stays
    requests: [{ call: 'updateToken', userid: s.userid, tokenid: s.tokenid, params }],
  })
}

function planAcl(env: AccessEnv, m: AclManifest): void {
  const s = m.spec
  const b = base(env, 'ACL', m.metadata.name, aclAddress(s.path, m.metadata.name))
  const missing: string[] = []
  for (const r of s.roles) if (!env.live.roles.has(r) && !env.d.roles.has(r)) missing.push(`role ${r}`)
  for (const u of s.users ?? []) if (!env.live.users.has(u) && !env.d.users.has(u)) missing.push(`user ${u}`)
  for (const g of s.groups ?? []) if (!env.live.groups.has(g) && !env.d.groups.has(g)) missing.push(`group ${g}`)
  for (const t of s.tokens ?? []) if (!env.live.tokens.has(t) && !env.d.tokens.has(t)) missing.push(`token ${t}`)
  if (missing.length > 0) {
    refused(env, b, 'spec', `${missing.join(', ')}: neither on PVE nor declared (update_acl would refuse the entry)`)
    return
  }
  const changed: FieldDiff[] = []
  for (const e of aclEntries(m)) {
    const key = entryKey({ path: s.path, ...e })
    const live = env.live.entries.get(key)
    if (live && live.propagate === s.propagate) continue
    changed.push({
      field: 'spec.roles',
      key: `${e.type}:${e.ugid}:${e.roleid}`,
      ...(live ? { before: `propagate=${bool(live.propagate)}` } : {}),
      after: `propagate=${bool(s.propagate)}`,
    })
  }
  if (changed.length === 0) return
  const params: Record<string, string | number> = {
    path: s.path,
    roles: s.roles.join(','),
    propagate: bool(s.propagate),
  }
  if (s.users?.length) params.users = s.users.join(',')
  if (s.groups?.length) params.groups = s.groups.join(',')
  if (s.tokens?.length) params.tokens = s.tokens.join(',')
  env.drafts.push({
    ...b,
    type: changed.every((c) => c.before === undefined) ? 'create' : 'update',
    reason: `${b.address}: ${changed.length} ACL entr${changed.length === 1 ? 'y' : 'ies'} to grant`,
    diffs: changed.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0)),
    requests: [{ call: 'updateAcl', params }],
  })
}
