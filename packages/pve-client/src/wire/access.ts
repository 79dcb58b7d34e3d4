/**
 * The access objects as ProxOps reads them (pve-access-control PVE::API2::User index with `full`, Group index,
 * Role index, ACL read_acl; PVE::API2::Domains index). docs/access.md
 */

/** One API token of a user (user.cfg's `token:` line) */
export interface AccessToken {
  /** the token's own id, without `user@realm!` */
  tokenid: string
  privsep: boolean
  /** Unix epoch; 0 = never */
  expire: number
  comment?: string
}

/** One user of `GET /access/users?full=1` */
export interface AccessUser {
  userid: string
  enable: boolean
  expire: number
  comment?: string
  email?: string
  firstname?: string
  lastname?: string
  /** group ids, sorted */
  groups: string[]
  /** sorted by tokenid */
  tokens: AccessToken[]
}

/** One group of `GET /access/groups` */
export interface AccessGroup {
  groupid: string
  comment?: string
  /** member user ids, sorted */
  users: string[]
}

/** One role of `GET /access/roles` */
export interface AccessRole {
  roleid: string
  /** sorted */
  privs: string[]
  /** a built-in role (`special`: PVE's own, never modified) */
  special: boolean
}

/** One entry of `GET /access/acl`: a role granted to one principal on one path */
export interface AclEntry {
  path: string
  type: 'user' | 'group' | 'token'
  /** user id, group id or full token id */
  ugid: string
  roleid: string
  propagate: boolean
}

/** One realm of `GET /access/domains` */
export interface RealmInfo {
  realm: string
  type: string
}

/** What `POST /access/users/{userid}/token/{tokenid}` answers: the secret, shown this once. */
export interface NewToken {
  fullTokenid: string
  /** the secret; a holder that prints `(sensitive)` (the client's `Secret`) */
  value: { reveal(): string }
}
