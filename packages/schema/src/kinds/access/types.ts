/** The normalised access manifests (docs/schema-reference.md#role): the schemas' output, finalised. */
import type { Envelope } from '../contract.js'
import type { Defaulted, Out } from '../../manifest/infer.js'
import type { aclSpecSchema, groupSpecSchema, roleSpecSchema, tokenSpecSchema, userSpecSchema } from './schema.js'

/** `roleid` defaults to `metadata.name` */
export type RoleSpec = Defaulted<Out<typeof roleSpecSchema>, 'roleid'>
export type RoleManifest = Envelope<'Role', RoleSpec>
/** `groupid` defaults to `metadata.name` */
export type GroupSpec = Defaulted<Out<typeof groupSpecSchema>, 'groupid'>
export type GroupManifest = Envelope<'Group', GroupSpec>
export type UserSpec = Out<typeof userSpecSchema>
export type UserManifest = Envelope<'User', UserSpec>
/** `tokenid` defaults to `metadata.name` */
export type TokenSpec = Defaulted<Out<typeof tokenSpecSchema>, 'tokenid'>
export type TokenManifest = Envelope<'Token', TokenSpec>
/** `propagate` defaults to true */
export type AclSpec = Defaulted<Out<typeof aclSpecSchema>, 'propagate'>
export type AclManifest = Envelope<'ACL', AclSpec>

export type AccessManifest = RoleManifest | GroupManifest | UserManifest | TokenManifest | AclManifest
