/**
 * Access as code: the `Role`, `Group`, `User`, `Token` and `ACL` kinds (pve-access-control PVE::API2::Role,
 * Group, User, TokenConfig, ACL; user.cfg). Spec keys are PVE's parameter names; the PVE id of each object is a
 * spec field (`roleid`, `groupid`, `userid`, `tokenid`) because `metadata.name` follows ProxOps' naming rule
 * and cannot hold `alice@pve`. docs/access.md, docs/schema-reference.md#role
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { bool, int, list, obj, str } from '../../manifest/fields.js'

/** PVE::Auth::Plugin $realm_regex */
export const REALM = '[A-Za-z][A-Za-z0-9.\\-_]+'
/** PVE::Auth::Plugin $user_regex: no whitespace, `:` or `/` */
const USER = '[^\\s:/]+'
/** PVE::Auth::Plugin verify_username: `user@realm`, 3 to 64 characters */
export const USERID = new RegExp(`^(${USER})@(${REALM})$`)
/** PVE::AccessControl $token_subid_regex (the realm regex) */
export const TOKEN_SUBID = new RegExp(`^${REALM}$`)
/** PVE::AccessControl $token_full_regex */
export const TOKEN_FULL = new RegExp(`^(${USER})@(${REALM})!(${REALM})$`)
/** PVE::Auth::Plugin $groupname_regex (verify_groupname) */
export const GROUPID = /^[A-Za-z0-9.\-_]+$/
/** PVE::AccessControl verify_rolename */
export const ROLEID = /^[A-Za-z0-9.\-_]+$/

export const validUserid = (id: string): boolean => id.length >= 3 && id.length <= 64 && USERID.test(id)

const oneLine = (description: string) =>
  v.pipe(str(description), v.regex(/^[^\n\r]*$/, m('field-invalid', 'must be a single line')))

const commentField = (what: string) =>
  oneLine(
    `${what} comment; ProxOps writes its ownership marker in front of it (\`managed-by=proxops <comment>\`), by which it knows what it may delete.`,
  )

const idList = (description: string) =>
  list(
    v.pipe(v.string(m('field-type', 'must be a string')), v.minLength(1, m('field-invalid', 'must not be empty'))),
    description,
  )

export const roleSpecSchema = obj(
  {
    roleid: v.optional(
      str(
        "PVE role id; default `metadata.name`. Letters, digits, `.`, `-`, `_`; not starting with `PVE` (any case), which PVE reserves. A role is deleted only when its id starts with the cluster config's `access.role-prefix` (docs/access.md#ownership).",
      ),
    ),
    privs: idList(
      "The role's privileges (`VM.Audit`, `Datastore.AllocateSpace`, ...); `diff` checks each against the cluster's PVE version.",
    ),
  },
  'Role spec: the PVE role id and its privileges.',
)

export const groupSpecSchema = obj(
  {
    groupid: v.optional(str('PVE group id; default `metadata.name`. Letters, digits, `.`, `-`, `_`.')),
    comment: v.optional(commentField('Group')),
  },
  'Group spec: the PVE group id and comment.',
)

export const userSpecSchema = obj(
  {
    userid: str('PVE user id `name@realm` (`alice@pve`); the realm must exist. `root@pam` is never managed.'),
    groups: v.optional(idList('The groups the user is in (PVE group ids); a declared list replaces the membership.')),
    email: v.optional(oneLine('E-mail address.')),
    firstname: v.optional(oneLine('First name.')),
    lastname: v.optional(oneLine('Last name.')),
    enable: v.optional(bool("Account enabled; PVE's default is true.")),
    expire: v.optional(int('Account expiry as a Unix epoch; 0 = never.', 0)),
    comment: v.optional(commentField('User')),
    'password-ref': v.optional(
      str(
        '`cloud-init.passwords.<name>` reference into the cluster SOPS document: the password of a `pve` realm user, set when the user is created (never compared or printed).',
      ),
    ),
  },
  "User spec: PVE's user fields; the password only as a SOPS reference.",
)

export const tokenSpecSchema = obj(
  {
    userid: str('The PVE user id the token belongs to (`ci@pve`).'),
    tokenid: v.optional(
      str('Token id; default `metadata.name`. Starts with a letter; letters, digits, `.`, `-`, `_`.'),
    ),
    privsep: v.optional(
      bool(
        "Privilege separation: the token has only the ACLs granted to the token itself, cut to its user's (PVE's default: true).",
      ),
    ),
    expire: v.optional(int("Expiry as a Unix epoch; 0 = never. Default: the user's.", 0)),
    comment: v.optional(commentField('Token')),
  },
  'Token spec: an API token of a user. Its secret is shown by PVE once; ProxOps writes it age-encrypted (docs/access.md#token-secrets).',
)

export const aclSpecSchema = obj(
  {
    path: str(
      'ACL path (`/`, `/vms/100`, `/pool/web`, `/storage/local`, ...): one PVE accepts (AccessControl check_path).',
    ),
    roles: idList('The roles granted on the path.'),
    users: v.optional(idList('User ids granted the roles.')),
    groups: v.optional(idList('Group ids granted the roles.')),
    tokens: v.optional(idList('Full token ids (`user@realm!tokenid`) granted the roles.')),
    propagate: v.optional(bool("The roles apply below the path too; PVE's default: true.")),
  },
  'ACL spec: roles granted on a path to users, groups or tokens (one ACL entry per principal and role).',
)
