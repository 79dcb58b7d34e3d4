/**
 * The access kind: roles, groups, users, API tokens and ACL entries (`Role`, `Group`, `User`, `Token`, `ACL`
 * manifests), one kind because they are one PVE file (user.cfg), read in five listings and naming each other.
 * docs/access.md
 */
import type { Manifest } from '@proxops/schema'
import { adoptable } from '../../kit/adopt.js'
import { defineKind } from '../../kit/kind.js'
import { needs, one, str } from '../../kit/privileges.js'
import { splitList } from '@proxops/pve-client/wire'
import { adoptAccess } from './adopt.js'
import { confirmAccess } from './confirm.js'
import { accessAddresses } from './model.js'
import { planAccess } from './plan.js'
import { readAccess } from './read.js'
import { accessRunners } from './run.js'

const ACCESS_KINDS: ReadonlySet<Manifest['kind']> = new Set(['Role', 'Group', 'User', 'Token', 'ACL'])

/** API2::Role: Sys.Modify on /access */
const roleWrite = () => [{ need: one('/access', 'Sys.Modify') }]
/** API2::Group: Group.Allocate on /access/groups */
const groupWrite = () => [{ need: one('/access/groups', 'Group.Allocate') }]
/** API2::User `userid-group` checks: User.Modify on /access/groups covers every user's groups */
const userModify = () => [{ need: one('/access/groups', 'User.Modify') }]
/** API2::User create_user / delete_user: also Realm.AllocateUser on the user's realm */
const userAllocate = (userid: string) => {
  const { out, push } = needs()
  push(undefined, [one('/access/groups', 'User.Modify')])
  push('realm', [one(`/access/realm/${userid.slice(userid.lastIndexOf('@') + 1)}`, 'Realm.AllocateUser')])
  return out
}
/** API2::ACL update_acl: check_perm_modify on the path (Permissions.Modify) */
const aclModify = (path: string) => [{ need: one(path, 'Permissions.Modify') }]

export const access = defineKind({
  name: 'access',
  manifests: ['Role', 'Group', 'User', 'Token', 'ACL'],
  addresses: accessAddresses,
  // read only where the cluster manages access: a cluster without it pays no request for user.cfg
  observe: (desired, policy) =>
    policy.access !== undefined || desired.manifests.some((m) => ACCESS_KINDS.has(m.kind)) ? { access: true } : {},
  read: readAccess,
  plan: planAccess,
  // after pools and HA: ACL entries, tokens, users, groups, roles (prune.ts)
  pruneOrder: 4,
  run: accessRunners,
  privileges: {
    createRole: roleWrite,
    updateRole: roleWrite,
    deleteRole: roleWrite,
    createGroup: groupWrite,
    updateGroup: groupWrite,
    deleteGroup: groupWrite,
    createUser: (r) => {
      const out = userAllocate(String(r.params.userid))
      for (const g of splitList(str(r.params, 'groups')))
        out.push({ key: 'groups', need: one(`/access/groups/${g}`, 'User.Modify') })
      return out
    },
    updateUser: userModify,
    deleteUser: (r) => userAllocate(r.userid),
    // generate_token / update_token_info / remove_token: the user itself, or User.Modify over its groups
    createToken: userModify,
    updateToken: userModify,
    deleteToken: userModify,
    updateAcl: (r) => aclModify(String(r.params.path)),
  },
  confirm: confirmAccess,
  summary: { create: 'create', update: 'update', delete: 'delete' },
  adopt: {
    order: 6,
    run(live, ctx) {
      const known = adoptable(live.access, ctx, 'access objects')
      if (known !== undefined) ctx.files.push(...adoptAccess(known, ctx))
    },
  },
})
