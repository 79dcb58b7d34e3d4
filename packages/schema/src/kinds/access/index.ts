/**
 * The access kinds' schema side (kinds/contract.ts): Role, Group, User, Token and ACL share one folder, as the
 * guest and artifact kinds do, because they are one PVE file (user.cfg) and name each other. docs/access.md
 */
import type { SchemaKind } from '../contract.js'
import { finaliseAcl, finaliseGroup, finaliseRole, finaliseToken, finaliseUser } from './finalise.js'
import { aclIdentity, groupIdentity, roleIdentity, tokenIdentity, userIdentity } from './identity.js'
import { aclReferences, tokenReferences, userReferences } from './references.js'
import { aclSpecSchema, groupSpecSchema, roleSpecSchema, tokenSpecSchema, userSpecSchema } from './schema.js'
import type { AclManifest, GroupManifest, RoleManifest, TokenManifest, UserManifest } from './types.js'

const none = (): [] => []

export const role = {
  name: 'Role',
  aliases: [],
  root: 'role',
  description: "A PVE role (`/access/roles`): a named set of privileges. Owned through the cluster's role-name prefix.",
  spec: roleSpecSchema,
  guest: false,
  allowEmpty: true,
  finalise: finaliseRole,
  references: none,
  identity: roleIdentity,
} as const satisfies SchemaKind<RoleManifest>

export const group = {
  name: 'Group',
  aliases: [],
  root: 'group',
  description: 'A PVE group (`/access/groups`), owned through a marker in its comment.',
  spec: groupSpecSchema,
  guest: false,
  allowEmpty: true,
  finalise: finaliseGroup,
  references: none,
  identity: groupIdentity,
} as const satisfies SchemaKind<GroupManifest>

export const user = {
  name: 'User',
  aliases: [],
  root: 'user',
  description: 'A PVE user (`/access/users`), owned through a marker in its comment.',
  spec: userSpecSchema,
  guest: false,
  allowEmpty: true,
  finalise: finaliseUser,
  references: userReferences,
  identity: userIdentity,
} as const satisfies SchemaKind<UserManifest>

export const token = {
  name: 'Token',
  aliases: ['APIToken'],
  root: 'token',
  description:
    'A PVE API token (`/access/users/{userid}/token/{tokenid}`), owned through a marker in its comment; its secret is written age-encrypted, never shown.',
  spec: tokenSpecSchema,
  guest: false,
  allowEmpty: true,
  finalise: finaliseToken,
  references: tokenReferences,
  identity: tokenIdentity,
} as const satisfies SchemaKind<TokenManifest>

export const acl = {
  name: 'ACL',
  aliases: [],
  root: 'acl',
  description: 'PVE ACL entries (`/access/acl`): roles granted on a path to users, groups or tokens.',
  spec: aclSpecSchema,
  guest: false,
  allowEmpty: true,
  finalise: finaliseAcl,
  references: aclReferences,
  identity: aclIdentity,
} as const satisfies SchemaKind<AclManifest>
