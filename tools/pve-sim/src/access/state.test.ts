import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AccessState, normalizePath, validAclPath } from './state.js'

const PATHS = ['/', '/vms', '/vms/100', '/vms/101', '/storage', '/storage/local', '/nodes/pve1']
const ROLES = [
  'PVEVMAdmin',
  'PVEVMUser',
  'PVEAuditor',
  'PVEDatastoreUser',
  'NoAccess',
  'Administrator',
  'PVETemplateUser',
]
const entry = fc.record({
  path: fc.constantFrom(...PATHS),
  role: fc.constantFrom(...ROLES),
  propagate: fc.boolean(),
  token: fc.boolean(),
})

function build(entries: { path: string; role: string; propagate: boolean; token: boolean }[]): AccessState {
  const a = new AccessState('9.1')
  a.users.set('u@pve', {
    userid: 'u@pve',
    enable: true,
    expire: 0,
    tokens: new Map([
      ['sep', { privsep: true, expire: 0 }],
      ['full', { privsep: false, expire: 0 }],
    ]),
  })
  for (const e of entries) {
    const node = a.aclNode(e.path, true)
    const m = e.token ? node?.tokens : node?.users
    const id = e.token ? 'u@pve!sep' : 'u@pve'
    if (!m) continue
    if (!m.has(id)) m.set(id, new Map())
    m.get(id)?.set(e.role, e.propagate)
  }
  return a
}

// RPCEnvironment compile_acl_path
describe('AccessState.permissions', () => {
  it("a privilege-separated token never has a privilege its user lacks; privsep=0 has exactly the user's", () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 12 }), fc.constantFrom(...PATHS), (entries, path) => {
        const a = build(entries)
        const user = a.permissions('u@pve', path)
        for (const p of a.permissions('u@pve!sep', path).keys()) expect(user.has(p)).toBe(true)
        expect([...a.permissions('u@pve!full', path)].sort()).toEqual([...user].sort())
      }),
    )
  })

  it('root@pam has every valid privilege; unknown users and tokens have none', () => {
    const a = new AccessState('8.4')
    expect(a.permissions('root@pam', '/vms/1').get('VM.Monitor')).toBe(true)
    expect(a.permissions('x@pve', '/').size).toBe(0)
    expect(a.permissions('root@pam!nope', '/').size).toBe(0)
  })
})

describe('AccessControl normalize_path / check_path', () => {
  it('normalises slashes and accepts the ACL paths PVE accepts', () => {
    expect(normalizePath('vms//100/')).toBe('/vms/100')
    expect(normalizePath('/a b')).toBeUndefined()
    expect(validAclPath('/vms/100')).toBe(true)
    expect(validAclPath('/vms/99')).toBe(false)
    expect(validAclPath('/sdn/zones/localnetwork/vmbr0/20')).toBe(true)
    expect(validAclPath('/nope')).toBe(false)
  })
})

describe('RPCEnvironment compute_api_permission (apiPermissions)', () => {
  it("root@pam's cap holds every privilege of its release (9.x adds the VM.GuestAgent.File* ones)", () => {
    const cap91 = new AccessState('9.1').apiPermissions('root@pam')
    const cap84 = new AccessState('8.4').apiPermissions('root@pam')
    expect(cap91.vms).toHaveProperty(['VM.GuestAgent.FileRead'], 1)
    expect(cap84.vms).not.toHaveProperty(['VM.GuestAgent.FileRead'])
    expect(cap91.access).toEqual({ 'Group.Allocate': 1, 'Permissions.Modify': 1, 'User.Modify': 1 })
    expect(cap91.dc).toEqual({ 'SDN.Allocate': 1, 'SDN.Audit': 1, 'SDN.Use': 1, 'Sys.Audit': 1, 'Sys.Modify': 1 })
  })

  it('(property) every privilege in a cap is one the user holds on some path of its area', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 6 }), (entries) => {
        const a = build(entries)
        const cap = a.apiPermissions('u@pve')
        const paths = ['/', '/nodes', '/access/groups', '/vms', '/storage', '/sdn', '/mapping', ...PATHS]
        for (const [area, privs] of Object.entries(cap))
          for (const priv of Object.keys(privs)) {
            const held = paths.some((p) => a.permissions('u@pve', p).has(priv))
            expect(held, `${area} ${priv}`).toBe(true)
          }
        // VM privileges only ever land in the vms area
        for (const [area, privs] of Object.entries(cap))
          if (area !== 'vms') expect(Object.keys(privs).filter((p) => p.startsWith('VM.'))).toEqual([])
      }),
    )
  })
})
