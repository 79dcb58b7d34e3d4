/**
 * Cross-field rules and defaults of the access kinds, as pve-access-control checks them: verify_rolename and
 * create_role's reserved `PVE` prefix (API2::Role), verify_groupname, verify_username, the token id of
 * $token_full_regex, normalize_path and check_path (AccessControl) and update_acl's "either users, groups or
 * tokens" (API2::ACL).
 */
import type { Add, PathKey } from '../contract.js'
import { REF_NAME } from '../../names.js'
import { GROUPID, ROLEID, TOKEN_FULL, TOKEN_SUBID, validUserid } from './schema.js'
import type { AclManifest, GroupManifest, RoleManifest, TokenManifest, UserManifest } from './types.js'

/** the id field of a kind that defaults to `metadata.name`: which of the two a problem is reported at */
function idPath(declared: boolean, field: string): PathKey[] {
  return declared ? ['spec', field] : ['metadata', 'name']
}

/** a list must not repeat a value (PVE would store it once, and a diff would never settle) */
function unique(values: readonly string[] | undefined, path: PathKey[], add: Add): void {
  const seen = new Set<string>()
  values?.forEach((x, i) => {
    if (seen.has(x)) add('value-duplicate', [...path, i], `${JSON.stringify(x)} is listed twice`)
    seen.add(x)
  })
}

/** the PVE id a kind takes from `spec.<field>`, else `metadata.name`, reported where it was written when refused */
function pveId(
  m: { metadata: { name: string }; spec: object },
  field: string,
  add: Add,
  problem: (id: string) => string | undefined,
): string {
  const given = (m.spec as Record<string, unknown>)[field]
  const id = typeof given === 'string' ? given : m.metadata.name
  const p = problem(id)
  if (p !== undefined) add('field-invalid', idPath(given !== undefined, field), `${JSON.stringify(id)} ${p}`)
  return id
}

/** PVE's own roles (create_roles): `PVE*`, `NoAccess`, `Administrator` */
const BUILT_IN = /^(PVE|NoAccess$|Administrator$)/i

export function finaliseRole(m: RoleManifest, add: Add): void {
  m.spec.roleid = pveId(m, 'roleid', add, (id) =>
    !ROLEID.test(id)
      ? 'cannot be a PVE role id: letters, digits, ".", "-" and "_"'
      : BUILT_IN.test(id)
        ? 'is (or starts like) one of PVE\'s built-in roles, which create_role refuses (the "PVE" prefix is reserved)'
        : undefined,
  )
  unique(m.spec.privs, ['spec', 'privs'], add)
}

export function finaliseGroup(m: GroupManifest, add: Add): void {
  m.spec.groupid = pveId(m, 'groupid', add, (id) =>
    GROUPID.test(id) ? undefined : 'cannot be a PVE group id: letters, digits, ".", "-" and "_"',
  )
}

const USERID_RULE =
  'must be a PVE user id name@realm (3 to 64 characters; no whitespace, ":" or "/" in the name; the realm starts with a letter)'

export function finaliseUser(m: UserManifest, add: Add): void {
  const { userid } = m.spec
  if (!validUserid(userid)) add('field-invalid', ['spec', 'userid'], `${JSON.stringify(userid)} ${USERID_RULE}`)
  else if (userid === 'root@pam')
    add('field-invalid', ['spec', 'userid'], "root@pam is PVE's own superuser; ProxOps never manages it")
  m.spec.groups?.forEach((g, i) => {
    if (!GROUPID.test(g)) add('field-invalid', ['spec', 'groups', i], `${JSON.stringify(g)} cannot be a PVE group id`)
  })
  unique(m.spec.groups, ['spec', 'groups'], add)
  const ref = m.spec['password-ref']
  if (ref !== undefined) {
    const prefix = 'cloud-init.passwords.'
    if (!ref.startsWith(prefix) || !REF_NAME.test(ref.slice(prefix.length)))
      add(
        'ref-invalid',
        ['spec', 'password-ref'],
        `password-ref must look like cloud-init.passwords.<name>, got ${JSON.stringify(ref)}`,
      )
    else if (!userid.endsWith('@pve'))
      add(
        'field-invalid',
        ['spec', 'password-ref'],
        'a password is kept by PVE only for the pve realm; other realms authenticate elsewhere',
      )
  }
}

export function finaliseToken(m: TokenManifest, add: Add): void {
  if (!validUserid(m.spec.userid))
    add('field-invalid', ['spec', 'userid'], `${JSON.stringify(m.spec.userid)} ${USERID_RULE}`)
  m.spec.tokenid = pveId(m, 'tokenid', add, (id) =>
    TOKEN_SUBID.test(id)
      ? undefined
      : 'cannot be a PVE token id: a letter, then letters, digits, ".", "-" and "_" (at least two characters)',
  )
}

/** AccessControl normalize_path: one `/` between parts, none at the end, one in front; undefined when refused */
export function normalizeAclPath(path: string): string | undefined {
  let p = path.replace(/\/+/g, '/').replace(/\/$/, '')
  if (p === '') p = '/'
  if (!p.startsWith('/')) p = `/${p}`
  return /^[A-Za-z0-9.\-_/]+$/.test(p) ? p : undefined
}

const W = '[A-Za-z0-9.\\-_]+'
const AN = '[A-Za-z0-9]+'
/** AccessControl check_path: the ACL paths PVE accepts (PVE 9.1; 8.4 knows fewer `/sdn` paths) */
const ACL_PATH = new RegExp(
  [
    '/',
    '/access',
    '/access/groups',
    `/access/groups/${W}`,
    '/access/realm',
    `/access/realm/${W}`,
    '/nodes',
    `/nodes/${W}`,
    '/pool',
    `/pool/${W}(?:/${W}){0,2}`,
    '/sdn',
    '/sdn/controllers',
    '/sdn/controllers/[A-Za-z0-9_\\-]+',
    '/sdn/dns',
    `/sdn/dns/${AN}`,
    '/sdn/fabrics',
    `/sdn/fabrics/${AN}`,
    '/sdn/ipams',
    `/sdn/ipams/${AN}`,
    '/sdn/prefix-lists',
    `/sdn/prefix-lists/${AN}`,
    '/sdn/route-maps',
    `/sdn/route-maps/${AN}`,
    '/sdn/zones',
    `/sdn/zones/${W}`,
    `/sdn/zones/${W}/${W}`,
    `/sdn/zones/${W}/${W}/[1-9][0-9]{0,3}`,
    '/storage',
    `/storage/${W}`,
    '/vms',
    '/vms/[1-9][0-9]{2,}',
    '/mapping',
    `/mapping/${W}`,
    `/mapping/${W}/${W}`,
  ]
    .map((alt) => `(?:${alt})`)
    .join('|')
    .replace(/^/, '^(?:')
    .concat(')$'),
)
export const validAclPath = (path: string): boolean => ACL_PATH.test(path)

export function finaliseAcl(m: AclManifest, add: Add): void {
  const spec = m.spec
  const path = normalizeAclPath(spec.path)
  if (path === undefined || !validAclPath(path))
    add(
      'field-invalid',
      ['spec', 'path'],
      `${JSON.stringify(spec.path)} is not an ACL path PVE accepts (/, /vms/<vmid>, /pool/<id>, /storage/<id>, /nodes/<node>, /access/groups/<group>, /sdn/..., /mapping/...)`,
    )
  else spec.path = path
  if ((spec.users?.length ?? 0) + (spec.groups?.length ?? 0) + (spec.tokens?.length ?? 0) === 0)
    add('field-required', ['spec', 'users'], 'an ACL needs at least one of users, groups or tokens')
  if (spec.roles.length === 0) add('field-required', ['spec', 'roles'], 'an ACL needs at least one role')
  spec.roles.forEach((r, i) => {
    if (!ROLEID.test(r)) add('field-invalid', ['spec', 'roles', i], `${JSON.stringify(r)} cannot be a PVE role id`)
  })
  spec.users?.forEach((u, i) => {
    if (!validUserid(u)) add('field-invalid', ['spec', 'users', i], `${JSON.stringify(u)} ${USERID_RULE}`)
  })
  spec.groups?.forEach((g, i) => {
    if (!GROUPID.test(g)) add('field-invalid', ['spec', 'groups', i], `${JSON.stringify(g)} cannot be a PVE group id`)
  })
  spec.tokens?.forEach((t, i) => {
    if (!TOKEN_FULL.test(t))
      add('field-invalid', ['spec', 'tokens', i], `${JSON.stringify(t)} must be a full token id user@realm!tokenid`)
  })
  for (const f of ['roles', 'users', 'groups', 'tokens'] as const) unique(spec[f], ['spec', f], add)
  spec.propagate = spec.propagate ?? true
}
