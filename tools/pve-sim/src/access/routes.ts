/**
 * /access/users, /access/users/{userid}/token/{tokenid}, /access/groups, /access/roles, /access/acl,
 * /access/permissions (pve-access-control API2/User.pm, API2/Group.pm, API2/Role.pm, API2/ACL.pm,
 * API2/AccessControl.pm `permissions`).
 * The per-route privilege checks of apidoc.json run before these handlers (api2-check.ts); what the
 * handlers check themselves is here.
 */
import { randomUUID } from 'node:crypto'
import type { AuthState } from '../http/auth.js'
import { type Method, type Handler, type RequestContext, type Route } from '../http/types.js'
import { PveHttpError } from '../model/errors.js'
import { bool } from '../api/params.js'
import {
  AccessState,
  normalizePath,
  privsObject,
  REALMS,
  splitTokenId,
  validAclPath,
  type AclNode,
  type GroupInfo,
  type UserInfo,
} from './state.js'

type Table = [Method, string, Handler][]

const fail = (msg: string): PveHttpError => new PveHttpError(500, msg)
const paramFail = (errors: Record<string, string>): PveHttpError =>
  new PveHttpError(400, 'Parameter verification failed.', errors)
const list = (v: unknown): string[] => (typeof v === 'string' ? v.split(/[,;\s]+/).filter(Boolean) : [])
const s = (ctx: RequestContext, k: string): string | undefined =>
  ctx.params[k] === undefined || ctx.params[k] === null ? undefined : String(ctx.params[k])
const realmOf = (userid: string): string => userid.slice(userid.lastIndexOf('@') + 1)

/** AccessControl check_user_exist; `wrap` is lock_user_config's message prefix when the check runs under it */
function requireUser(a: AccessState, userid: string, wrap?: string): UserInfo {
  const u = a.users.get(userid)
  if (!u) throw fail(`${wrap ? `${wrap}: ` : ''}no such user ('${userid}')`)
  return u
}

/** Perl truth: user.cfg writes a false text field as empty and parse_user_config keeps only true ones */
const perlTrue = (v: string | undefined): v is string => v !== undefined && v !== '' && v !== '0'

function tokenView(t: { privsep: boolean; expire: number; comment?: string }): Record<string, unknown> {
  return { privsep: t.privsep ? 1 : 0, expire: t.expire, ...(perlTrue(t.comment) ? { comment: t.comment } : {}) }
}

/**
 * API2/User.pm $extract_user_data over a user as parse_user_config reads user.cfg back: text fields only when
 * true, and `email` as '' when it is unset but a later field of the `user:` line (comment, keys) is not, as
 * Perl's split keeps the empty field then. `full` adds `groups` (sorted) and `tokens` (by name; null without any).
 */
function extractUserData(a: AccessState, u: UserInfo, full: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { enable: u.enable ? 1 : 0, expire: u.expire }
  if (perlTrue(u.firstname)) out.firstname = u.firstname
  if (perlTrue(u.lastname)) out.lastname = u.lastname
  if (perlTrue(u.email)) out.email = u.email
  else if (perlTrue(u.comment) || perlTrue(u.keys)) out.email = ''
  if (perlTrue(u.comment)) out.comment = u.comment
  if (perlTrue(u.keys)) out.keys = u.keys
  if (!full) return out
  out.groups = a.groupsOf(u.userid)
  out.tokens =
    u.tokens.size === 0
      ? null
      : Object.fromEntries(
          [...u.tokens.entries()].sort(([x], [y]) => x.localeCompare(y)).map(([id, t]) => [id, tokenView(t)]),
        )
  return out
}

/** create_user sets a field `if $param->{x}`, update_user `if defined`: the same once user.cfg is read back */
function setUserFields(u: UserInfo, ctx: RequestContext): void {
  for (const k of ['comment', 'email', 'firstname', 'lastname', 'keys'] as const) {
    const v = s(ctx, k)
    if (v !== undefined) u[k] = v
  }
  if (ctx.params.enable !== undefined) u.enable = bool(ctx, 'enable') === true
  if (ctx.params.expire !== undefined) u.expire = Number(ctx.params.expire)
}

/** create_user / update_user: every listed group must exist (`no such group`), checked before anything is written */
function requireGroups(a: AccessState, groups: string[], wrap: string): GroupInfo[] {
  return groups.map((g) => {
    const info = a.groups.get(g)
    if (!info) throw fail(`${wrap}: no such group '${g}'`)
    return info
  })
}

function parsePrivs(a: AccessState, v: unknown): string[] {
  const privs = list(v)
  for (const p of privs) if (!a.privileges.valid.has(p)) throw fail(`invalid privilege '${p}'`)
  return privs
}

export function accessRoutes(a: AccessState, auth: AuthState): Route[] {
  const actor = (ctx: RequestContext): string => ctx.caller.actor
  const table: Table = [
    [
      'GET',
      '/access/users',
      // index: everyone with User.Modify or Sys.Audit on /access/groups, else the members of the groups the caller
      // holds them on, and the caller; `full` lists groups `,`-joined and tokens as an array
      (ctx) => {
        const privs = ['User.Modify', 'Sys.Audit']
        const all = a.checkAny(actor(ctx), '/access/groups', privs, true)
        const allowed = all ? undefined : a.groupMemberJoin(a.filterGroups(actor(ctx), privs))
        const self = splitTokenId(actor(ctx))?.[0] ?? actor(ctx)
        const enabled = bool(ctx, 'enabled')
        const full = bool(ctx, 'full') === true
        return [...a.users.values()]
          .filter((u) => !allowed || allowed.has(u.userid) || u.userid === self)
          .filter((u) => enabled === undefined || u.enable === enabled)
          .sort((x, y) => (x.userid < y.userid ? -1 : x.userid > y.userid ? 1 : 0))
          .map((u) => {
            const entry = extractUserData(a, u, full)
            if (full) {
              entry.groups = (entry.groups as string[]).join(',')
              const tokens = entry.tokens as Record<string, Record<string, unknown>> | null
              if (tokens) entry.tokens = Object.entries(tokens).map(([tokenid, t]) => ({ tokenid, ...t }))
            }
            return { ...entry, 'realm-type': realmOf(u.userid), userid: u.userid }
          })
      },
    ],
    [
      'POST',
      '/access/users',
      (ctx) => {
        const userid = s(ctx, 'userid') ?? ''
        const realm = realmOf(userid)
        if (!REALMS.some((r) => r.realm === realm)) throw fail(`create user failed: domain '${realm}' does not exist`)
        if (a.users.has(userid)) throw fail(`create user failed: user '${userid}' already exists`)
        const groups = requireGroups(a, list(ctx.params.groups), 'create user failed')
        const u: UserInfo = { userid, enable: true, expire: 0, tokens: new Map() }
        setUserFields(u, ctx)
        const pw = s(ctx, 'password')
        if (pw !== undefined && realm === 'pve') u.password = pw
        a.users.set(userid, u)
        for (const g of groups) g.users.add(userid)
        return null
      },
    ],
    // read_user: $extract_user_data with `full`; no userid or realm-type, unlike the index
    ['GET', '/access/users/{userid}', (ctx) => extractUserData(a, requireUser(a, s(ctx, 'userid') ?? ''), true)],
    [
      'PUT',
      '/access/users/{userid}',
      (ctx) => {
        const userid = s(ctx, 'userid') ?? ''
        const u = requireUser(a, userid, 'update user failed')
        // without `append`, a given `groups` replaces every membership (delete_user_group), even when empty
        const groups = requireGroups(a, list(ctx.params.groups), 'update user failed')
        setUserFields(u, ctx)
        if (s(ctx, 'groups') !== undefined && bool(ctx, 'append') !== true)
          for (const g of a.groups.values()) g.users.delete(userid)
        for (const g of groups) g.users.add(userid)
        return null
      },
    ],
    [
      'DELETE',
      '/access/users/{userid}',
      (ctx) => {
        const userid = s(ctx, 'userid') ?? ''
        const u = requireUser(a, userid)
        for (const name of u.tokens.keys()) auth.tokens.delete(`${userid}!${name}`)
        a.users.delete(userid)
        // delete_user_group, delete_user_acl
        for (const g of a.groups.values()) g.users.delete(userid)
        a.dropAclsOf(userid, false)
        return null
      },
    ],

    // API2/Group.pm: index (cut to the groups the caller may see in views.ts), create_group, read_group,
    // update_group, delete_group
    [
      'GET',
      '/access/groups',
      () =>
        [...a.groups.keys()].sort().map((groupid) => {
          const g = a.groups.get(groupid) as GroupInfo
          // `users` is always defined (a group line makes `users => {}`), so an empty group lists ''
          return {
            groupid,
            ...(perlTrue(g.comment) ? { comment: g.comment } : {}),
            users: [...g.users].sort().join(','),
          }
        }),
    ],
    [
      'POST',
      '/access/groups',
      (ctx) => {
        const groupid = s(ctx, 'groupid') ?? ''
        if (a.groups.has(groupid)) throw fail(`create group failed: group '${groupid}' already exists`)
        const comment = s(ctx, 'comment')
        a.groups.set(groupid, { ...(perlTrue(comment) ? { comment } : {}), users: new Set() })
        return null
      },
    ],
    [
      'GET',
      '/access/groups/{groupid}',
      (ctx) => {
        const groupid = s(ctx, 'groupid') ?? ''
        const g = a.groups.get(groupid)
        if (!g) throw fail(`group '${groupid}' does not exist`)
        return { members: [...g.users].sort(), ...(perlTrue(g.comment) ? { comment: g.comment } : {}) }
      },
    ],
    [
      'PUT',
      '/access/groups/{groupid}',
      (ctx) => {
        const groupid = s(ctx, 'groupid') ?? ''
        const g = a.groups.get(groupid)
        if (!g) throw fail(`update group failed: group '${groupid}' does not exist`)
        const comment = s(ctx, 'comment')
        if (comment !== undefined) g.comment = comment
        return null
      },
    ],
    [
      'DELETE',
      '/access/groups/{groupid}',
      (ctx) => {
        const groupid = s(ctx, 'groupid') ?? ''
        if (!a.groups.delete(groupid)) throw fail(`delete group failed: group '${groupid}' does not exist`)
        a.dropGroupAcls(groupid)
        return null
      },
    ],
    [
      'GET',
      '/access/users/{userid}/token',
      (ctx) => {
        const u = requireUser(a, s(ctx, 'userid') ?? '')
        return [...u.tokens.entries()]
          .sort(([x], [y]) => x.localeCompare(y))
          .map(([tokenid, t]) => ({ tokenid, ...tokenView(t) }))
      },
    ],
    [
      'GET',
      '/access/users/{userid}/token/{tokenid}',
      (ctx) => {
        const userid = s(ctx, 'userid') ?? ''
        const name = s(ctx, 'tokenid') ?? ''
        const t = requireUser(a, userid).tokens.get(name)
        if (!t) throw fail(`no such token '${name}' for user '${userid}'`)
        return tokenView(t)
      },
    ],
    // generate_token: privsep defaults to 1; the secret is shown once, in `value`
    [
      'POST',
      '/access/users/{userid}/token/{tokenid}',
      (ctx) => {
        const userid = s(ctx, 'userid') ?? ''
        const name = s(ctx, 'tokenid') ?? ''
        const u = requireUser(a, userid)
        if (u.tokens.has(name)) throw paramFail({ tokenid: 'Token already exists.' })
        const info = {
          privsep: bool(ctx, 'privsep') !== false,
          // generate_token sets expire only when given; write_user_config stores `expire || 0` (not the user's)
          expire: ctx.params.expire !== undefined ? Number(ctx.params.expire) : 0,
          ...(s(ctx, 'comment') ? { comment: s(ctx, 'comment') as string } : {}),
        }
        const full = `${userid}!${name}`
        const value = randomUUID()
        u.tokens.set(name, info)
        auth.addToken({ id: full, secret: value })
        return { info: tokenView(info), value, 'full-tokenid': full }
      },
    ],
    [
      'PUT',
      '/access/users/{userid}/token/{tokenid}',
      (ctx) => {
        const userid = s(ctx, 'userid') ?? ''
        const name = s(ctx, 'tokenid') ?? ''
        const t = requireUser(a, userid).tokens.get(name)
        if (!t) throw fail(`update token failed: no such token '${name}' for user '${userid}'`)
        if (ctx.params.privsep !== undefined) t.privsep = bool(ctx, 'privsep') === true
        if (ctx.params.expire !== undefined) t.expire = Number(ctx.params.expire)
        if (s(ctx, 'comment') !== undefined) t.comment = s(ctx, 'comment')
        return tokenView(t)
      },
    ],
    [
      'DELETE',
      '/access/users/{userid}/token/{tokenid}',
      (ctx) => {
        const userid = s(ctx, 'userid') ?? ''
        const name = s(ctx, 'tokenid') ?? ''
        const u = requireUser(a, userid)
        if (!u.tokens.has(name)) throw fail(`delete token failed: no such token '${name}' for user '${userid}'`)
        u.tokens.delete(name)
        auth.tokens.delete(`${userid}!${name}`)
        a.dropAclsOf(`${userid}!${name}`, true)
        return null
      },
    ],

    [
      'GET',
      '/access/roles',
      () =>
        a.roleNames().map((roleid) => ({
          roleid,
          privs: [...(a.role(roleid) ?? [])].sort().join(','),
          special: a.privileges.builtinRoles.has(roleid) ? 1 : 0,
        })),
    ],
    [
      'POST',
      '/access/roles',
      (ctx) => {
        const roleid = s(ctx, 'roleid') ?? ''
        if (/^PVE/i.test(roleid))
          throw paramFail({ roleid: "cannot use role ID starting with the (case-insensitive) 'PVE' namespace" })
        if (a.role(roleid)) throw fail(`create role failed: role '${roleid}' already exists`)
        const privs = parsePrivs(a, ctx.params.privs)
        a.customRoles.set(roleid, new Set(privs))
        return null
      },
    ],
    [
      'GET',
      '/access/roles/{roleid}',
      (ctx) => {
        const role = a.role(s(ctx, 'roleid') ?? '')
        if (!role) throw fail(`role '${s(ctx, 'roleid') ?? ''}' does not exist`)
        return Object.fromEntries([...role].sort().map((p) => [p, 1]))
      },
    ],
    [
      'PUT',
      '/access/roles/{roleid}',
      (ctx) => {
        const roleid = s(ctx, 'roleid') ?? ''
        if (a.privileges.builtinRoles.has(roleid)) throw fail(`auto-generated role '${roleid}' cannot be modified`)
        const role = a.customRoles.get(roleid)
        if (!role) throw fail(`update role failed: role '${roleid}' does not exist`)
        const privs = parsePrivs(a, ctx.params.privs)
        if (bool(ctx, 'append') !== true) role.clear()
        for (const p of privs) role.add(p)
        return null
      },
    ],
    [
      'DELETE',
      '/access/roles/{roleid}',
      (ctx) => {
        const roleid = s(ctx, 'roleid') ?? ''
        if (a.privileges.builtinRoles.has(roleid)) throw fail(`auto-generated role '${roleid}' cannot be deleted`)
        if (!a.customRoles.delete(roleid)) throw fail(`delete role failed: role '${roleid}' does not exist`)
        // delete_role leaves the ACL entries ("fixme: delete role from acl?"), but parse_user_config drops every entry
        // naming a role that does not exist ('ignore invalid acl role') when user.cfg is read back: users', groups'
        // and tokens' alike
        for (const node of a.acl.values())
          for (const m of [...node.users.values(), ...node.groups.values(), ...node.tokens.values()]) m.delete(roleid)
        return null
      },
    ],

    // read_acl: only the paths the caller may audit or modify permissions on
    [
      'GET',
      '/access/acl',
      (ctx) => {
        const audit = a.check(actor(ctx), '/access', ['Sys.Audit'], true)
        const out: Record<string, unknown>[] = []
        for (const path of [...a.acl.keys()].sort()) {
          if (!audit && !a.checkPermModify(actor(ctx), path, true)) continue
          const node = a.acl.get(path)
          if (!node) continue
          for (const [type, m] of [
            ['user', node.users],
            ['group', node.groups],
            ['token', node.tokens],
          ] as const) {
            for (const [ugid, roles] of [...m.entries()].sort(([x], [y]) => x.localeCompare(y))) {
              for (const [roleid, propagate] of [...roles.entries()].sort(([x], [y]) => x.localeCompare(y))) {
                out.push({ path, type, ugid, roleid, propagate: propagate ? 1 : 0 })
              }
            }
          }
        }
        return out
      },
    ],
    // update_acl
    [
      'PUT',
      '/access/acl',
      (ctx) => {
        const users = list(ctx.params.users)
        const tokens = list(ctx.params.tokens)
        const groups = list(ctx.params.groups)
        if (users.length === 0 && tokens.length === 0 && groups.length === 0) {
          const msg = "either 'users', 'groups' or 'tokens' is required."
          throw paramFail({ users: msg, groups: msg, tokens: msg })
        }
        const raw = s(ctx, 'path') ?? ''
        const path = normalizePath(raw)
        const del = bool(ctx, 'delete') === true
        if (!path || (!del && !validAclPath(path))) throw paramFail({ path: `invalid ACL path '${raw}'` })
        const propagate = bool(ctx, 'propagate') !== false
        const mine = a.permissions(actor(ctx), path)
        const updateAclNode = (node: AclNode): void => {
          for (const role of list(ctx.params.roles)) {
            const privs = a.role(role)
            if (!privs) throw fail(`ACL update failed: role '${role}' does not exist`)
            if (!mine.has('Permissions.Modify')) {
              const verb = del ? 'remove' : 'add'
              for (const p of privs) {
                if (!mine.has(p))
                  throw paramFail({
                    role: `Cannot ${verb} role '${role}' - requires 'Permissions.Modify' or superset of privileges.`,
                  })
                if (propagate && !del && mine.get(p) !== propagate) {
                  throw paramFail({
                    role: `Cannot ${verb} role '${role}' with propagation - requires 'Permissions.Modify' or propagated superset of privileges.`,
                  })
                }
              }
              if (role === 'NoAccess')
                throw paramFail({ role: `Cannot ${verb} role '${role}' - requires 'Permissions.Modify'` })
            }
            for (const group of groups) {
              if (!a.groups.has(group)) throw fail(`ACL update failed: group '${group}' does not exist`)
              apply(node.groups, group, role, propagate, del)
            }
            for (const userid of users) {
              if (!a.users.has(userid)) throw fail(`ACL update failed: user '${userid}' does not exist`)
              apply(node.users, userid, role, propagate, del)
            }
            for (const tokenid of tokens) {
              const split = splitTokenId(tokenid)
              if (!split || !a.token(tokenid))
                throw fail(`ACL update failed: no such token '${split?.[1] ?? tokenid}' for user '${split?.[0] ?? ''}'`)
              apply(node.tokens, tokenid, role, propagate, del)
            }
          }
        }
        const node = a.aclNode(path, true)
        if (!node) return null
        // user.cfg is written once at the end: a failure leaves every entry of the path as it was
        const copy = (m: Map<string, Map<string, boolean>>) => new Map([...m].map(([k, v]) => [k, new Map(v)]))
        const before = { users: copy(node.users), groups: copy(node.groups), tokens: copy(node.tokens) }
        try {
          updateAclNode(node)
        } catch (err) {
          Object.assign(node, before)
          throw err
        }
        return null
      },
    ],

    // permissions: one's own (or an owned token's) without privileges, anyone else's with Sys.Audit on /access
    [
      'GET',
      '/access/permissions',
      (ctx) => {
        const me = actor(ctx)
        const who = s(ctx, 'userid') ?? me
        const owner = splitTokenId(who)?.[0]
        if (who !== me && owner !== me) a.check(me, '/access', ['Sys.Audit'])
        const path = s(ctx, 'path')
        if (path !== undefined) return { [path]: privsObject(a.permissions(who, path)) }
        return a.effectivePermissions(who)
      },
    ],
  ]
  return table.map(([method, path, handler]) => ({ method, path, handler }))
}

function apply(m: Map<string, Map<string, boolean>>, id: string, role: string, propagate: boolean, del: boolean): void {
  let roles = m.get(id)
  if (del) {
    roles?.delete(role)
    if (roles?.size === 0) m.delete(id)
    return
  }
  if (!roles) m.set(id, (roles = new Map<string, boolean>()))
  roles.set(role, propagate)
}
