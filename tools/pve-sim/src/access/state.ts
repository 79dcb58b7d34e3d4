/**
 * user.cfg as the simulator keeps it: users, their API tokens, roles and the ACL tree, and the privilege
 * computation of pve-access-control (`PVE::AccessControl::roles`, `PVE::RPCEnvironment::permissions` and its
 * `compile_acl_path`): per path, the roles of the deepest ACL entry that applies (propagated from above or set
 * on the path itself; a token's own entries win over its user's, a user's over its groups'), `NoAccess`
 * wipes everything, and a privilege-separated token gets the intersection of its privileges with its user's.
 * Groups hold users and carry ACLs of their own; pool ACLs reach the pools' guests and storages.
 */
import type { PveVersion } from '../apidoc/load.js'
import { PveHttpError } from '../model/errors.js'
import { privilegesOf, type Privileges } from './privileges.js'

export interface TokenInfo {
  privsep: boolean
  expire: number
  comment?: string
}

export interface UserInfo {
  userid: string
  enable: boolean
  expire: number
  comment?: string
  email?: string
  firstname?: string
  lastname?: string
  /** yubico key ids or oath secrets (`keys`) */
  keys?: string
  /** pve realm only: the password for POST /access/ticket */
  password?: string
  tokens: Map<string, TokenInfo>
}

/** a `group:` line of user.cfg; the users' `groups` are derived from it, as parse_user_config does */
export interface GroupInfo {
  comment?: string
  users: Set<string>
}

/** path -> (user, group or token id -> (role -> propagate)) */
export interface AclNode {
  users: Map<string, Map<string, boolean>>
  groups: Map<string, Map<string, boolean>>
  tokens: Map<string, Map<string, boolean>>
}

/** privilege -> propagate flag, as GET /access/permissions shows it */
export type PrivSet = Map<string, boolean>

export const REALMS = [
  { realm: 'pam', type: 'pam', comment: 'Linux PAM standard authentication' },
  { realm: 'pve', type: 'pve', comment: 'Proxmox VE authentication server' },
] as const

/** raise_perm_exc: 403 `Permission check failed (<what>)` */
export function permError(what?: string): PveHttpError {
  return new PveHttpError(403, what === undefined ? 'Permission check failed' : `Permission check failed (${what})`)
}

/** AccessControl::normalize_path */
export function normalizePath(path: string | undefined): string | undefined {
  if (!path) return undefined
  let p = path.replace(/\/+/g, '/').replace(/\/$/, '')
  if (p === '') p = '/'
  if (!p.startsWith('/')) p = `/${p}`
  return /^[A-Za-z0-9.\-_/]+$/.test(p) ? p : undefined
}

/** AccessControl::check_path: the ACL paths PVE accepts */
const ACL_PATH_RE = new RegExp(
  '^(?:/|/access|/access/groups|/access/groups/[\\w.\\-]+|/access/realm|/access/realm/[\\w.\\-]+|/nodes|/nodes/[\\w.\\-]+' +
    '|/pool|/pool/[A-Za-z0-9.\\-_]+(?:/[A-Za-z0-9.\\-_]+){0,2}|/sdn|/sdn/controllers(?:/[A-Za-z0-9_\\-]+)?' +
    '|/sdn/(?:dns|fabrics|ipams|prefix-lists|route-maps)(?:/[A-Za-z0-9]+)?' +
    '|/sdn/zones|/sdn/zones/[\\w.\\-]+|/sdn/zones/[\\w.\\-]+/[\\w.\\-]+|/sdn/zones/[\\w.\\-]+/[\\w.\\-]+/[1-9][0-9]{0,3}' +
    '|/storage|/storage/[\\w.\\-]+|/vms|/vms/[1-9][0-9]{2,}|/mapping|/mapping/[\\w.\\-]+|/mapping/[\\w.\\-]+/[\\w.\\-]+)$',
)
export const validAclPath = (path: string): boolean => ACL_PATH_RE.test(path)

/** `user@realm!name` -> [user, name] */
export function splitTokenId(id: string): [string, string] | undefined {
  const i = id.lastIndexOf('!')
  return i > 0 ? [id.slice(0, i), id.slice(i + 1)] : undefined
}

/** the ACL paths above and at `path`: `/vms/100` -> `/`, `/vms`, `/vms/100` */
function pathChain(path: string): string[] {
  if (path === '/') return ['/']
  const parts = path.split('/').slice(1)
  return ['/', ...parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}`)]
}

export class AccessState {
  readonly privileges: Privileges
  readonly users = new Map<string, UserInfo>()
  /** custom roles; the built-in ones come from `privileges` */
  readonly customRoles = new Map<string, Set<string>>()
  readonly groups = new Map<string, GroupInfo>()
  readonly acl = new Map<string, AclNode>()

  constructor(readonly version: PveVersion) {
    this.privileges = privilegesOf(version)
    this.users.set('root@pam', {
      userid: 'root@pam',
      enable: true,
      expire: 0,
      email: 'root@localhost',
      tokens: new Map(),
    })
  }

  /** a token configured at start-up or through the control API: privsep=0, its user created if missing */
  addConfiguredToken(id: string): void {
    const split = splitTokenId(id)
    if (!split) return
    const [userid, name] = split
    let u = this.users.get(userid)
    if (!u) this.users.set(userid, (u = { userid, enable: true, expire: 0, tokens: new Map() }))
    u.tokens.set(name, { privsep: false, expire: 0 })
  }

  role(name: string): ReadonlySet<string> | undefined {
    return this.privileges.builtinRoles.get(name) ?? this.customRoles.get(name)
  }

  roleNames(): string[] {
    return [...this.privileges.builtinRoles.keys(), ...this.customRoles.keys()].sort()
  }

  token(id: string): TokenInfo | undefined {
    const s = splitTokenId(id)
    return s ? this.users.get(s[0])?.tokens.get(s[1]) : undefined
  }

  aclNode(path: string, create: boolean): AclNode | undefined {
    let n = this.acl.get(path)
    if (!n && create) this.acl.set(path, (n = { users: new Map(), groups: new Map(), tokens: new Map() }))
    return n
  }

  /** the groups a user is in, sorted (parse_user_config's `users->{$user}->{groups}`) */
  groupsOf(userid: string): string[] {
    return [...this.groups.keys()].filter((g) => this.groups.get(g)?.users.has(userid)).sort()
  }

  /** RPCEnvironment filter_groups: the groups on whose `/access/groups/<group>` the actor has any of `privs` */
  filterGroups(actor: string, privs: string[]): string[] {
    return [...this.groups.keys()].filter((g) => this.checkAny(actor, `/access/groups/${g}`, privs, true))
  }

  /** RPCEnvironment group_member_join: every member of these groups */
  groupMemberJoin(groups: string[]): Set<string> {
    return new Set(groups.flatMap((g) => [...(this.groups.get(g)?.users ?? [])]))
  }

  /** the pools' members (the model's user.cfg), for the roles pool ACLs give their guests and storages */
  poolMembers: () => { poolid: string; vms: number[]; storage: string[] }[] = () => []
  /** a backup job's options as jobs.cfg stores them (the model's), for update_job's checks on the stored job */
  backupJob: (id: string) => Record<string, string> | undefined = () => undefined
  /** whether the model has this replication job */
  replicationJobExists: (id: string) => boolean = () => false

  /**
   * RPCEnvironment compute_api_permission: roles a pool ACL gives on `/vms/<member>` and `/storage/<member>`
   * join the path's own (never propagating, never over NoAccess; a pool's NoAccess wins over the rest)
   */
  private roles(id: string, path: string): Map<string, boolean> {
    const roles = this.aclRoles(id, path)
    const m = /^\/(vms|storage)\/([^/]+)$/.exec(path)
    if (!m || roles.has('NoAccess')) return roles
    const inherited = new Set<string>()
    for (const p of this.poolMembers()) {
      const member = m[1] === 'vms' ? p.vms.includes(Number(m[2])) : p.storage.includes(m[2] as string)
      if (member) for (const r of this.aclRoles(id, `/pool/${p.poolid}`).keys()) inherited.add(r)
    }
    if (inherited.has('NoAccess')) return new Map([['NoAccess', false]])
    for (const r of inherited) if (!roles.has(r)) roles.set(r, false)
    return roles
  }

  /**
   * AccessControl::roles for a user or a privilege-separated token: per level of the path, the token's own
   * entry, else the user's, else the union of the entries of the groups the user is in (a token is in none)
   */
  private aclRoles(id: string, path: string): Map<string, boolean> {
    const isToken = id.includes('!')
    let roles = new Map<string, boolean>()
    const chain = pathChain(path)
    const applying = (entry: Map<string, boolean> | undefined, final: boolean, into = new Map<string, boolean>()) => {
      for (const [role, propagate] of entry ?? []) if (final || propagate) into.set(role, propagate)
      return into
    }
    const memberOf = isToken ? [] : this.groupsOf(id)
    chain.forEach((p, i) => {
      const final = i === chain.length - 1
      const node = this.acl.get(p)
      if (!node) return
      let next = applying((isToken ? node.tokens : node.users).get(id), final)
      if (next.size === 0) {
        next = new Map()
        for (const g of memberOf) applying(node.groups.get(g), final, next)
      }
      if (next.size > 0) roles = next // the deeper entry overrides what was inherited
    })
    const noAccess = roles.get('NoAccess')
    return noAccess === undefined ? roles : new Map([['NoAccess', noAccess]])
  }

  /** RPCEnvironment::permissions: the privileges of `actor` (a user or `user@realm!token`) on `path` */
  permissions(actor: string, path: string): PrivSet {
    if (actor === 'root@pam') return new Map([...this.privileges.valid].map((p) => [p, true]))
    const tok = splitTokenId(actor)
    let owner: PrivSet | undefined
    if (tok) {
      const info = this.users.get(tok[0])?.tokens.get(tok[1])
      if (!info) return new Map()
      owner = this.permissions(tok[0], path)
      if (!info.privsep) return owner
    } else if (!this.users.has(actor)) {
      return new Map()
    }
    const privs: PrivSet = new Map()
    for (const [role, propagate] of this.roles(actor, path)) {
      for (const p of this.role(role) ?? []) privs.set(p, (privs.get(p) ?? false) || propagate)
    }
    // a privilege-separated token: only what its user also has (root@pam's tokens are not cut)
    if (tok && tok[0] !== 'root@pam' && owner) {
      for (const [p, prop] of [...privs]) {
        const u = owner.get(p)
        if (u === undefined) privs.delete(p)
        else privs.set(p, u && prop)
      }
    }
    return privs
  }

  /** RPCEnvironment::check: every privilege, else 403 naming the path and the first missing privilege */
  check(actor: string, path: string, privs: string[], noerr = false): boolean {
    const have = this.permissions(actor, path)
    for (const p of privs) {
      if (!have.has(p)) {
        if (noerr) return false
        throw permError(`${path}, ${p}`)
      }
    }
    return true
  }

  /** RPCEnvironment::check_any */
  checkAny(actor: string, path: string, privs: string[], noerr = false): boolean {
    const have = this.permissions(actor, path)
    if (privs.some((p) => have.has(p))) return true
    if (noerr) return false
    throw permError(`${path}, ${privs.join('|')}`)
  }

  /** RPCEnvironment::check_perm_modify */
  checkPermModify(actor: string, path: string | undefined, noerr = false): boolean {
    if (!path) return this.check(actor, '/access', ['Permissions.Modify'], noerr)
    const privs = ['Permissions.Modify']
    if (/^\/storage\/.+$/.test(path)) privs.push('Datastore.Allocate')
    else if (/^\/vms\/.+$/.test(path)) privs.push('VM.Allocate')
    else if (/^\/pool\/.+$/.test(path)) privs.push('Pool.Allocate')
    return this.checkAny(actor, path, privs, noerr)
  }

  /** RPCEnvironment::get_effective_permissions: the default top paths plus every ACL path, empty ones left out */
  effectivePermissions(actor: string): Record<string, Record<string, number>> {
    const paths = new Set([
      '/',
      '/access',
      '/access/groups',
      '/nodes',
      '/pool',
      '/sdn',
      '/storage',
      '/vms',
      ...this.acl.keys(),
    ])
    const out: Record<string, Record<string, number>> = {}
    for (const p of [...paths].sort()) {
      const privs = this.permissions(actor, p)
      if (privs.size > 0) out[p] = privsObject(privs)
    }
    return out
  }

  /**
   * RPCEnvironment::compute_api_permission, the `cap` of a ticket: per top-level area the privileges the user
   * holds on the area's root or on any ACL path under it (a pool path counts for `vms` and `storage`)
   */
  apiPermissions(actor: string): Record<string, Record<string, number>> {
    const areas: Record<string, RegExp> = {
      vms: /^(VM\.|Permissions\.Modify)/,
      access: /^((User|Group)\.|Permissions\.Modify)/,
      storage: /^(Datastore\.|Permissions\.Modify)/,
      nodes: /^(Sys\.|Permissions\.Modify)/,
      sdn: /^(SDN\.|Permissions\.Modify)/,
      dc: /^(Sys\.Audit|Sys\.Modify|SDN\.)/,
      mapping: /^(Mapping\.|Permissions.Modify)/,
    }
    const out: Record<string, Record<string, number>> = {}
    for (const area of Object.keys(areas)) out[area] = {}
    const add = (area: string, priv: string) => ((out[area] as Record<string, number>)[priv] = 1)
    const required = ['/', '/nodes', '/access/groups', '/vms', '/storage', '/sdn', '/mapping']
    for (const path of new Set([...required, ...this.acl.keys()])) {
      const top = /^\/(\w+)/.exec(path)?.[1] ?? 'dc'
      for (const priv of this.permissions(actor, path).keys()) {
        if (top === 'pool') {
          if (priv.startsWith('VM.') || priv === 'Permissions.Modify') add('vms', priv)
          if (priv.startsWith('Datastore.') || priv === 'Permissions.Modify') add('storage', priv)
        } else if (areas[top]?.test(priv)) add(top, priv)
      }
    }
    return out
  }

  /** the ACL entries of a user or token disappear with it (delete_user_acl, delete_token) */
  dropAclsOf(id: string, token: boolean): void {
    for (const node of this.acl.values()) {
      if (token) node.tokens.delete(id)
      else {
        node.users.delete(id)
        for (const t of [...node.tokens.keys()]) if (t.startsWith(`${id}!`)) node.tokens.delete(t)
      }
    }
  }

  /** AccessControl delete_group_acl: the group's entries on every path */
  dropGroupAcls(group: string): void {
    for (const node of this.acl.values()) node.groups.delete(group)
  }

  /**
   * `delete $acl_root->{children}->{a}->{children}->{b}`: the ACL node of a path and every node below it, as the
   * user.cfg tree holds them (remove_vm_access for `/vms/<vmid>`, remove_storage_access for `/storage/<id>`)
   */
  removeAclNode(path: string): void {
    for (const p of [...this.acl.keys()]) if (p === path || p.startsWith(`${path}/`)) this.acl.delete(p)
  }

  /**
   * AccessControl delete_pool_acl: `delete $acl_root->{children}->{pool}->{children}->{$pool}`. The tree keys
   * nodes by single path components, so a nested pool's name (`a/b`) names no node and its ACLs stay; deleting
   * its parent later takes them with the parent's node.
   */
  deletePoolAcl(pool: string): void {
    if (!pool.includes('/')) this.removeAclNode(`/pool/${pool}`)
  }
}

export function privsObject(privs: PrivSet): Record<string, number> {
  const out: Record<string, number> = {}
  for (const p of [...privs.keys()].sort()) out[p] = privs.get(p) ? 1 : 0
  return out
}
