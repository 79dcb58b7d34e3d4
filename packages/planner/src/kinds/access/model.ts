/**
 * The access objects as the plan sees them: the declared manifests by PVE id, the live user.cfg indexed, the
 * addresses a plan reports them under, and which of them this cluster entry owns (docs/access.md#ownership).
 */
import type { AclManifest, GroupManifest, Manifest, RoleManifest, TokenManifest, UserManifest } from '@proxops/schema'
import { aclEntries, tokenFullId } from '@proxops/schema'
import type { AccessToken, AccessUser, AclEntry } from '@proxops/pve-client/wire'
import type { LiveAccess } from '../../inventory.js'
import type { Policy } from '../../plan-types.js'
import { commentMarker, commentOwner, type CommentOwner } from '../../kit/ownership.js'

export const roleAddress = (id: string): string => `Role/${id}`
export const groupAddress = (id: string): string => `Group/${id}`
export const userAddress = (id: string): string => `User/${id}`
export const tokenAddress = (full: string): string => `Token/${full}`
/** a declared ACL manifest: its path and name (two manifests may grant on one path) */
export const aclAddress = (path: string, name: string): string => `ACL/${path}(${name})`
/** one live entry no manifest declares */
export const aclEntryAddress = (e: Pick<AclEntry, 'path' | 'type' | 'ugid' | 'roleid'>): string =>
  `ACL/${e.path}(${e.type} ${e.ugid} ${e.roleid})`
export const entryKey = (e: Pick<AclEntry, 'path' | 'type' | 'ugid' | 'roleid'>): string =>
  `${e.path}|${e.type}|${e.ugid}|${e.roleid}`

/** The addresses of one access manifest's objects. */
export function accessAddresses(m: Manifest): string[] {
  switch (m.kind) {
    case 'Role':
      return [roleAddress(m.spec.roleid)]
    case 'Group':
      return [groupAddress(m.spec.groupid)]
    case 'User':
      return [userAddress(m.spec.userid)]
    case 'Token':
      return [tokenAddress(tokenFullId(m))]
    case 'ACL':
      return [aclAddress(m.spec.path, m.metadata.name)]
    default:
      return []
  }
}

export interface DesiredAccess {
  roles: Map<string, RoleManifest>
  groups: Map<string, GroupManifest>
  users: Map<string, UserManifest>
  tokens: Map<string, TokenManifest>
  acls: AclManifest[]
  /** every declared ACL entry -> its propagate flag */
  entries: Map<string, boolean>
  count: number
}

export function desiredAccess(manifests: readonly Manifest[]): DesiredAccess {
  const d: DesiredAccess = {
    roles: new Map(),
    groups: new Map(),
    users: new Map(),
    tokens: new Map(),
    acls: [],
    entries: new Map(),
    count: 0,
  }
  for (const m of manifests) {
    if (m.kind === 'Role') d.roles.set(m.spec.roleid, m)
    else if (m.kind === 'Group') d.groups.set(m.spec.groupid, m)
    else if (m.kind === 'User') d.users.set(m.spec.userid, m)
    else if (m.kind === 'Token') d.tokens.set(tokenFullId(m), m)
    else if (m.kind === 'ACL') {
      d.acls.push(m)
      for (const e of aclEntries(m)) d.entries.set(entryKey({ path: m.spec.path, ...e }), m.spec.propagate)
    } else continue
    d.count++
  }
  d.acls.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0))
  return d
}

/** user.cfg indexed by id */
export class LiveIndex {
  readonly users = new Map<string, AccessUser>()
  readonly tokens = new Map<string, AccessToken & { userid: string }>()
  readonly groups: Map<string, LiveAccess['groups'][number]>
  readonly roles: Map<string, LiveAccess['roles'][number]>
  readonly entries = new Map<string, AclEntry>()
  readonly realms: Set<string>
  /** every privilege name this PVE version knows: the built-in Administrator role holds all of them */
  readonly validPrivs: ReadonlySet<string> | undefined

  constructor(readonly live: LiveAccess) {
    for (const u of live.users) {
      this.users.set(u.userid, u)
      for (const t of u.tokens) this.tokens.set(`${u.userid}!${t.tokenid}`, { ...t, userid: u.userid })
    }
    this.groups = new Map(live.groups.map((g) => [g.groupid, g]))
    this.roles = new Map(live.roles.map((r) => [r.roleid, r]))
    for (const e of live.acl) this.entries.set(entryKey(e), e)
    this.realms = new Set(live.realms.map((r) => r.realm))
    const admin = this.roles.get('Administrator')
    this.validPrivs = admin?.special ? new Set(admin.privs) : undefined
  }

  /** the groups a user is in: its own list, and the groups' member lists (the two views of one user.cfg) */
  groupsOf(userid: string): string[] {
    const out = new Set(this.users.get(userid)?.groups ?? [])
    for (const g of this.groups.values()) if (g.users.includes(userid)) out.add(g.groupid)
    return [...out].sort()
  }
}

/** Who owns a live access object: by the marker in its comment (groups, users, tokens), by prefix (roles). */
export interface Ownership {
  policy: Policy
  comment(c: string | undefined): CommentOwner
  /** a role is this entry's when its id starts with the configured prefix (and PVE did not make it) */
  role(roleid: string, special: boolean): boolean
  /** the comment a declared object must carry */
  marked(comment: string | undefined): string
}

export function ownership(policy: Policy): Ownership {
  const prefix = policy.access?.rolePrefix
  return {
    policy,
    comment: (c) => commentOwner(c, policy),
    role: (roleid, special) => !special && prefix !== undefined && prefix !== '' && roleid.startsWith(prefix),
    marked: (comment) =>
      comment === undefined || comment === '' ? commentMarker(policy) : `${commentMarker(policy)} ${comment}`,
  }
}
