import type { Identity } from '../contract.js'
import { groupKey, roleKey, tokenKey, userKey } from './references.js'
import type { AclManifest, GroupManifest, RoleManifest, TokenManifest, UserManifest } from './types.js'

const code = 'access-id-duplicate' as const
const at = (id: string, name: string, field: string) => (id === name ? ['metadata', 'name'] : ['spec', field])

/** A Role declares the role of its `roleid` (user.cfg's `role:` line). */
export const roleIdentity = (m: RoleManifest): Identity[] => [
  {
    key: roleKey(m.spec.roleid),
    label: `PVE role ${JSON.stringify(m.spec.roleid)}`,
    path: at(m.spec.roleid, m.metadata.name, 'roleid'),
    code,
  },
]

export const groupIdentity = (m: GroupManifest): Identity[] => [
  {
    key: groupKey(m.spec.groupid),
    label: `PVE group ${JSON.stringify(m.spec.groupid)}`,
    path: at(m.spec.groupid, m.metadata.name, 'groupid'),
    code,
  },
]

export const userIdentity = (m: UserManifest): Identity[] => [
  { key: userKey(m.spec.userid), label: `PVE user ${JSON.stringify(m.spec.userid)}`, path: ['spec', 'userid'], code },
]

export const tokenFullId = (m: TokenManifest): string => `${m.spec.userid}!${m.spec.tokenid}`

export const tokenIdentity = (m: TokenManifest): Identity[] => [
  {
    key: tokenKey(tokenFullId(m)),
    label: `PVE API token ${JSON.stringify(tokenFullId(m))}`,
    path: at(m.spec.tokenid, m.metadata.name, 'tokenid'),
    code,
  },
]

/** the ACL entries an ACL manifest declares: one per principal and role on its path (user.cfg's `acl:` lines) */
export function aclEntries(m: AclManifest): { type: 'user' | 'group' | 'token'; ugid: string; roleid: string }[] {
  const principals = [
    ...(m.spec.users ?? []).map((ugid) => ({ type: 'user' as const, ugid })),
    ...(m.spec.groups ?? []).map((ugid) => ({ type: 'group' as const, ugid })),
    ...(m.spec.tokens ?? []).map((ugid) => ({ type: 'token' as const, ugid })),
  ]
  return principals.flatMap((p) => m.spec.roles.map((roleid) => ({ ...p, roleid })))
}

/** An ACL declares one entry per (path, principal, role): two manifests cannot grant the same one. */
export const aclIdentity = (m: AclManifest): Identity[] =>
  aclEntries(m).map((e) => ({
    key: `acl:${m.spec.path}|${e.type}|${e.ugid}|${e.roleid}`,
    label: `ACL entry ${e.roleid} for ${e.type} ${JSON.stringify(e.ugid)} on ${m.spec.path}`,
    path: ['spec', 'roles'],
    code,
  }))
