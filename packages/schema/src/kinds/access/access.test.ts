/**
 * The access kinds, as pve-access-control checks their ids: PVE::AccessControl verify_rolename, verify_groupname,
 * normalize_path and check_path, PVE::Auth::Plugin verify_username, $token_full_regex; PVE::API2::Role
 * create_role's reserved `PVE` prefix; PVE::API2::ACL update_acl's "either users, groups or tokens".
 */
import { afterEach, describe, expect, it } from 'vitest'
import { parseManifest } from '../../manifest/parse.js'
import { clone, validManifests } from '../../test-support/manifests.js'
import { loadRepository } from '../../loader/load.js'
import { clusterConfig, tempRepo, type TempRepo } from '../../test-support/repo.js'
import { normalizeAclPath, validAclPath } from './finalise.js'

type K = 'Role' | 'Group' | 'User' | 'Token' | 'ACL'
const problems = (kind: K, spec: Record<string, unknown>, name?: string): string[] => {
  const doc = clone(validManifests[kind])
  doc.spec = spec
  if (name !== undefined) doc.metadata.name = name
  const r = parseManifest(doc)
  return r.ok ? [] : r.issues.map((i) => `${i.path.join('.')}: ${i.code}`)
}
const spec = (kind: K, s: Record<string, unknown>): unknown => {
  const doc = clone(validManifests[kind])
  doc.spec = s
  const r = parseManifest(doc)
  if (!r.ok) throw new Error(JSON.stringify(r.issues))
  return r.manifest.spec
}

describe('access kinds', () => {
  it('ids default to metadata.name; propagate defaults to true; the ACL path is normalised', () => {
    expect(spec('Role', { privs: ['VM.Audit'] })).toEqual({ roleid: 'ops-auditor', privs: ['VM.Audit'] })
    expect(spec('Group', {})).toEqual({ groupid: 'ops' })
    expect(spec('Token', { userid: 'ci@pve' })).toEqual({ userid: 'ci@pve', tokenid: 'ci' })
    expect(spec('ACL', { path: 'vms//100/', roles: ['PVEAuditor'], users: ['a@pve'] })).toEqual({
      path: '/vms/100',
      roles: ['PVEAuditor'],
      users: ['a@pve'],
      propagate: true,
    })
  })

  it('verify_rolename and create_role: the PVE prefix is reserved', () => {
    expect(problems('Role', { roleid: 'PVEMine', privs: [] })).toEqual(['spec.roleid: field-invalid'])
    expect(problems('Role', { roleid: 'pvex', privs: [] })).toEqual(['spec.roleid: field-invalid'])
    expect(problems('Role', { roleid: 'Administrator', privs: [] })).toEqual(['spec.roleid: field-invalid'])
    expect(problems('Role', { roleid: 'NoAccessToo', privs: [] })).toEqual([])
    expect(problems('Role', { roleid: 'a b', privs: [] })).toEqual(['spec.roleid: field-invalid'])
    expect(problems('Role', { privs: ['VM.Audit', 'VM.Audit'] })).toEqual(['spec.privs.1: value-duplicate'])
  })

  it('verify_username: name@realm, 3..64 characters, no root@pam; passwords for the pve realm only', () => {
    expect(problems('User', { userid: 'alice' })).toEqual(['spec.userid: field-invalid'])
    expect(problems('User', { userid: 'a/b@pve' })).toEqual(['spec.userid: field-invalid'])
    expect(problems('User', { userid: `${'a'.repeat(61)}@pve` })).toEqual(['spec.userid: field-invalid'])
    expect(problems('User', { userid: 'root@pam' })).toEqual(['spec.userid: field-invalid'])
    expect(problems('User', { userid: 'b@pam', 'password-ref': 'cloud-init.passwords.b' })).toEqual([
      'spec.password-ref: field-invalid',
    ])
    expect(problems('User', { userid: 'b@pve', 'password-ref': 'b' })).toEqual(['spec.password-ref: ref-invalid'])
    expect(problems('User', { userid: 'b@pve', 'password-ref': 'cloud-init.passwords.b' })).toEqual([])
    expect(problems('User', { userid: 'b@pve', groups: ['x y'] })).toEqual(['spec.groups.0: field-invalid'])
  })

  it('token ids start with a letter ($token_subid_regex); ACL tokens are full ids', () => {
    expect(problems('Token', { userid: 'a@pve', tokenid: '1x' })).toEqual(['spec.tokenid: field-invalid'])
    expect(problems('Token', { userid: 'a@pve' }, 'x')).toEqual(['metadata.name: field-invalid'])
    expect(problems('ACL', { path: '/', roles: ['R'], tokens: ['a@pve'] })).toEqual(['spec.tokens.0: field-invalid'])
  })

  it('update_acl: a principal and a role; check_path: only the paths PVE accepts', () => {
    expect(problems('ACL', { path: '/', roles: ['R'] })).toEqual(['spec.users: field-required'])
    expect(problems('ACL', { path: '/', roles: [], users: ['a@pve'] })).toEqual(['spec.roles: field-required'])
    expect(problems('ACL', { path: '/vms/99', roles: ['R'], users: ['a@pve'] })).toEqual(['spec.path: field-invalid'])
    expect(problems('ACL', { path: '/foo', roles: ['R'], users: ['a@pve'] })).toEqual(['spec.path: field-invalid'])
    for (const ok of ['/', '/vms/100', '/pool/a/b/c', '/storage/local-lvm', '/sdn/zones/z/v/10', '/access/groups/g'])
      expect(validAclPath(ok)).toBe(true)
    for (const bad of ['/pool/a/b/c/d', '/sdn/zones/z/v/0', '/sdn/dns/a-b', '/vms/100/x', '/nodes'.concat('/a/b')])
      expect(validAclPath(bad)).toBe(false)
    expect(normalizeAclPath('a b')).toBeUndefined()
    expect(normalizeAclPath('')).toBe('/')
  })
})

describe('access kinds in a cluster', () => {
  let repo: TempRepo | undefined
  afterEach(() => repo?.cleanup())
  const doc = (kind: string, name: string, body: string) =>
    `apiVersion: proxops/v1alpha1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${body}`

  it('users come after their groups, tokens after their user, ACLs after what they name; undeclared is PVE-managed', async () => {
    repo = tempRepo({
      'clusters/lab/config.yaml': clusterConfig('lab'),
      'clusters/lab/resources.yaml':
        'resources:\n  - ../../group/base/g.yaml\n  - ../../user/base/u.yaml\n  - ../../token/base/t.yaml\n  - ../../acl/base/a.yaml\n',
      'group/base/g.yaml': doc('Group', 'ops', '  comment: x\n'),
      'user/base/u.yaml': doc('User', 'alice', '  userid: alice@pve\n  groups: [ops]\n'),
      'token/base/t.yaml': doc('Token', 'ci', '  userid: alice@pve\n'),
      'acl/base/a.yaml': doc(
        'ACL',
        'ci',
        "  path: /\n  roles: [PVEAuditor]\n  tokens: ['alice@pve!ci']\n  groups: [ops]\n",
      ),
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors).toEqual([])
    const graph = m.clusters[0]!.graph
    expect(graph.dependsOn.get('User/alice')).toEqual(['Group/ops'])
    expect(graph.dependsOn.get('Token/ci')).toEqual(['User/alice'])
    expect(graph.dependsOn.get('ACL/ci')).toEqual(['Group/ops', 'Token/ci'])
  })

  it('access-id-duplicate: two ACLs cannot grant one entry', async () => {
    repo = tempRepo({
      'clusters/lab/config.yaml': clusterConfig('lab'),
      'clusters/lab/resources.yaml': 'resources:\n  - ../../acl/base/a.yaml\n',
      'acl/base/a.yaml': `${doc('ACL', 'a', '  path: /\n  roles: [R]\n  users: [a@pve]\n')}---\n${doc('ACL', 'b', '  path: //\n  roles: [R]\n  users: [a@pve]\n  propagate: false\n')}`,
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors.map((e) => e.code)).toEqual(['access-id-duplicate'])
  })
})
