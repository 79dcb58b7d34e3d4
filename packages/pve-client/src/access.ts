/**
 * Codecs of the access listings (pve-access-control): one request per kind, never one per object. A row without
 * the id PVE always gives it (`userid`, `groupid`, `roleid`, an ACL entry's `path`/`ugid`/`roleid`/`type`) makes the
 * whole listing a PVE_PROTOCOL error, so the access kinds are unreadable for the cycle, never read as absent.
 */
import { defined, list, obj, rows } from './decode.js'
import type { AccessGroup, AccessRole, AccessToken, AccessUser, AclEntry, RealmInfo } from './wire/access.js'
import { WireError } from './wire/errors.js'
import { optBool, optInt, optStr, toKey } from './wire/scalars.js'

/** PVE lists some sets as a `,`-joined string (a user's `groups`, a group's `users`, a role's `privs`), some as a list */
function names(v: unknown, field: string): string[] {
  if (v == null || v === '') return []
  if (typeof v === 'string')
    return v
      .split(',')
      .filter((s) => s !== '')
      .sort()
  if (Array.isArray(v)) return v.map((x, i) => toKey(x, `${field}[${i}]`)).sort()
  throw new WireError('WIRE_SCALAR', 'expected a list or a comma-separated string', field)
}

function decodeToken(o: Record<string, unknown>): AccessToken {
  return defined({
    tokenid: toKey(o.tokenid, 'tokenid'),
    privsep: optBool(o.privsep, 'privsep') ?? true,
    expire: optInt(o.expire, 'expire') ?? 0,
    comment: optStr(o.comment, 'comment'),
  })
}

/** `GET /access/users?full=1` (API2::User index): users with their groups and tokens */
export function decodeAccessUsers(v: unknown): AccessUser[] {
  return rows(v, 'users', (o) =>
    defined({
      userid: toKey(o.userid, 'userid'),
      enable: optBool(o.enable, 'enable') ?? true,
      expire: optInt(o.expire, 'expire') ?? 0,
      comment: optStr(o.comment, 'comment'),
      email: optStr(o.email, 'email') || undefined,
      firstname: optStr(o.firstname, 'firstname'),
      lastname: optStr(o.lastname, 'lastname'),
      groups: names(o.groups, 'groups'),
      tokens: (o.tokens == null ? [] : list(o.tokens, 'tokens').map(decodeToken)).sort((a, b) =>
        a.tokenid < b.tokenid ? -1 : a.tokenid > b.tokenid ? 1 : 0,
      ),
    }),
  )
}

/** `GET /access/groups` (API2::Group index) */
export function decodeAccessGroups(v: unknown): AccessGroup[] {
  return rows(v, 'groups', (o) =>
    defined({
      groupid: toKey(o.groupid, 'groupid'),
      comment: optStr(o.comment, 'comment'),
      users: names(o.users, 'users'),
    }),
  )
}

/** `GET /access/roles` (API2::Role index) */
export function decodeAccessRoles(v: unknown): AccessRole[] {
  return rows(v, 'roles', (o) => ({
    roleid: toKey(o.roleid, 'roleid'),
    privs: names(o.privs, 'privs'),
    special: optBool(o.special, 'special') ?? false,
  }))
}

const ACL_TYPES = new Set(['user', 'group', 'token'])

/** `GET /access/acl` (API2::ACL read_acl): one row per path, principal and role */
export function decodeAcl(v: unknown): AclEntry[] {
  return rows(v, 'acl', (o) => {
    const type = toKey(o.type, 'type')
    if (!ACL_TYPES.has(type)) throw new WireError('WIRE_SCALAR', `expected user, group or token, got ${type}`, 'type')
    return {
      path: toKey(o.path, 'path'),
      type: type as AclEntry['type'],
      ugid: toKey(o.ugid, 'ugid'),
      roleid: toKey(o.roleid, 'roleid'),
      propagate: optBool(o.propagate, 'propagate') ?? true,
    }
  })
}

/** `GET /access/domains` (API2::Domains index) */
export function decodeRealms(v: unknown): RealmInfo[] {
  return rows(v, 'domains', (o) => ({ realm: toKey(o.realm, 'realm'), type: toKey(o.type, 'type') }))
}

/** the answer of generate_token: `full-tokenid` and `value` (the secret) */
export function decodeNewToken(v: unknown): { fullTokenid: string; value: string } {
  const o = obj(v, 'token')
  return { fullTokenid: toKey(o['full-tokenid'], 'full-tokenid'), value: toKey(o.value, 'value') }
}
