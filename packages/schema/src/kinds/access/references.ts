import type { KindReference } from '../contract.js'
import type { AclManifest, TokenManifest, UserManifest } from './types.js'

/** The identity keys of the access objects (identity.ts), by which users, tokens and ACLs name them. */
export const roleKey = (id: string): string => `role:${id}`
export const groupKey = (id: string): string => `group:${id}`
export const userKey = (id: string): string => `user:${id}`
export const tokenKey = (full: string): string => `token:${full}`

const ref = <K extends 'Role' | 'Group' | 'User' | 'Token'>(
  kind: K,
  via: KindReference['via'],
  name: string,
  identity: string,
  path: KindReference['path'],
): KindReference<K> => ({ kind, name, via, path, identity })

/** A user's groups must exist first (create_user: `no such group`). */
export function userReferences(m: UserManifest): KindReference<'Group'>[] {
  return (m.spec.groups ?? []).map((g, i) => ref('Group', 'group', g, groupKey(g), ['spec', 'groups', i]))
}

/** A token's user must exist first (generate_token). */
export function tokenReferences(m: TokenManifest): KindReference<'User'>[] {
  return [ref('User', 'user', m.spec.userid, userKey(m.spec.userid), ['spec', 'userid'])]
}

/** An ACL names roles and principals that must exist (update_acl: `role '...' does not exist`, ...). */
export function aclReferences(m: AclManifest): KindReference<'Role' | 'Group' | 'User' | 'Token'>[] {
  const s = m.spec
  return [
    ...s.roles.map((r, i) => ref('Role', 'role', r, roleKey(r), ['spec', 'roles', i])),
    ...(s.users ?? []).map((u, i) => ref('User', 'user', u, userKey(u), ['spec', 'users', i])),
    ...(s.groups ?? []).map((g, i) => ref('Group', 'group', g, groupKey(g), ['spec', 'groups', i])),
    ...(s.tokens ?? []).map((t, i) => ref('Token', 'token', t, tokenKey(t), ['spec', 'tokens', i])),
  ]
}
