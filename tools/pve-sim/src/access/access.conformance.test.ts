/**
 * Access control over raw HTTP, as an admin sets it up: a user, a privilege-separated token, roles and ACLs,
 * then what that token may and may not do. Each test names the pve-access-control / qemu-server /
 * pve-container / pve-manager function it follows.
 */
import { afterAll, beforeAll, describe as suite, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { apidocForTests } from '../apidoc/test-data.js'
import { form, raw, waitTask, type RawResponse } from '../http/test-support/raw.js'

// the privileges and parameters checked here come from the PVE API schema: without it (a fresh clone) the file skips
const describe = suite.skipIf(!apidocForTests())

let sim: Simulator
let root: Record<string, string>
const call = (
  auth: Record<string, string>,
  method: string,
  path: string,
  params?: Record<string, string>,
): Promise<RawResponse> => {
  const f = params && method !== 'GET' ? form(params) : undefined
  const q = params && method === 'GET' ? `?${new URLSearchParams(params).toString()}` : ''
  return raw(sim, method, `/api2/json${path}${q}`, {
    headers: { ...auth, ...(f?.headers ?? {}) },
    ...(f ? { body: f.body } : {}),
  })
}
const ok = async (r: Promise<RawResponse>): Promise<unknown> => {
  const res = await r
  expect(res.status, res.body).toBe(200)
  return (res.json as { data: unknown }).data
}
async function token(userid: string, name: string, privsep = true): Promise<Record<string, string>> {
  const data = (await ok(
    call(root, 'POST', `/access/users/${encodeURIComponent(userid)}/token/${name}`, { privsep: privsep ? '1' : '0' }),
  )) as Record<string, unknown>
  expect(data['full-tokenid']).toBe(`${userid}!${name}`)
  expect(data.value).toMatch(/^[0-9a-f-]{36}$/)
  return { Authorization: `PVEAPIToken=${String(data['full-tokenid'])}=${String(data.value)}` }
}
const grant = (
  path: string,
  roles: string,
  who: { users?: string; tokens?: string },
  propagate = true,
): Promise<unknown> => ok(call(root, 'PUT', '/access/acl', { path, roles, ...who, propagate: propagate ? '1' : '0' }))
async function createVm(
  auth: Record<string, string>,
  vmid: number,
  extra: Record<string, string> = {},
): Promise<RawResponse> {
  const r = await call(auth, 'POST', '/nodes/pve1/qemu', {
    vmid: String(vmid),
    name: `vm-${vmid}`,
    memory: '512',
    ...extra,
  })
  if (r.status === 200)
    expect((await waitTask(sim, root, 'pve1', (r.json as { data: string }).data)).exitstatus).toBe('OK')
  return r
}

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 10, resourcesLagMs: 0, log: () => {} })
  root = { Authorization: sim.token.header }
  expect(sim.schemaValidation).toBe(true)
  await ok(call(root, 'POST', '/access/users', { userid: 'ops@pve', comment: 'gitops' }))
  for (const vmid of [100, 101]) expect((await createVm(root, vmid)).status).toBe(200)
})
afterAll(async () => {
  await sim.close()
})

describe('AccessControl create_roles: the built-in roles', () => {
  it('PVEVMAdmin, PVEAuditor, PVEAdmin hold the 9.1 privileges; Administrator holds all, NoAccess none', async () => {
    const roles = (await ok(call(root, 'GET', '/access/roles'))) as { roleid: string; privs: string; special: number }[]
    const of = (id: string): string[] =>
      roles
        .find((r) => r.roleid === id)
        ?.privs.split(',')
        .filter(Boolean) ?? []
    expect(of('PVEVMAdmin')).toContain('VM.Replicate')
    expect(of('PVEVMAdmin')).not.toContain('VM.Monitor')
    expect(of('PVEVMAdmin')).not.toContain('Sys.Modify')
    expect(of('PVEAuditor')).toEqual([
      'Datastore.Audit',
      'Mapping.Audit',
      'Pool.Audit',
      'SDN.Audit',
      'Sys.Audit',
      'VM.Audit',
      'VM.GuestAgent.Audit',
    ])
    expect(of('PVEAdmin')).not.toContain('Mapping.Modify')
    expect(of('PVEAdmin')).not.toContain('Sys.Modify')
    expect(of('Administrator')).toContain('Permissions.Modify')
    expect(of('NoAccess')).toEqual([])
    expect(roles.every((r) => r.special === 1)).toBe(true)
  })

  it('PVE 8.4 (pve-access-control 8.2) still has VM.Monitor and no VM.Replicate', async () => {
    const old = await startSimulator({ pveVersion: '8.4', tls: false, authFailureDelayMs: 0, log: () => {} })
    try {
      const r = await raw(old, 'GET', '/api2/json/access/roles/PVEVMAdmin', {
        headers: { Authorization: old.token.header },
      })
      const privs = Object.keys((r.json as { data: Record<string, number> }).data)
      expect(privs).toContain('VM.Monitor')
      expect(privs).not.toContain('VM.Replicate')
    } finally {
      await old.close()
    }
  })

  it('Role create: a custom role with valid privileges; PVE* names and unknown privileges are refused', async () => {
    await ok(call(root, 'POST', '/access/roles', { roleid: 'Probe', privs: 'VM.Audit,Sys.Audit' }))
    expect(await ok(call(root, 'GET', '/access/roles/Probe'))).toEqual({ 'Sys.Audit': 1, 'VM.Audit': 1 })
    const bad = await call(root, 'POST', '/access/roles', { roleid: 'Bad', privs: 'VM.Nope' })
    expect([bad.status, bad.reason]).toEqual([500, "invalid privilege 'VM.Nope'"])
    const ns = await call(root, 'POST', '/access/roles', { roleid: 'PVEMine', privs: 'VM.Audit' })
    expect(ns.status).toBe(400)
    const special = await call(root, 'PUT', '/access/roles/PVEAdmin', { privs: 'VM.Audit' })
    expect([special.status, special.reason]).toEqual([500, "auto-generated role 'PVEAdmin' cannot be modified"])
    await ok(call(root, 'DELETE', '/access/roles/Probe'))
  })
})

describe('RPCEnvironment permissions: ACLs, propagation and privilege-separated tokens', () => {
  it('generate_token returns full-tokenid and value; the token authenticates; privsep defaults to 1', async () => {
    const auth = await token('ops@pve', 'probe')
    const list = (await ok(call(root, 'GET', '/access/users/ops@pve/token'))) as Record<string, unknown>[]
    expect(list).toEqual([{ tokenid: 'probe', privsep: 1, expire: 0 }])
    // a token without ACLs sees nothing, and is told so for a guarded route
    const r = await call(auth, 'GET', '/nodes/pve1/qemu/100/config')
    expect([r.status, r.reason]).toEqual([403, 'Permission check failed (/vms/100, VM.Audit)'])
    const dup = await call(root, 'POST', '/access/users/ops@pve/token/probe')
    expect(dup.status).toBe(400)
    expect((dup.json as { errors: unknown }).errors).toEqual({ tokenid: 'Token already exists.' })
    await ok(call(root, 'DELETE', '/access/users/ops@pve/token/probe'))
    expect((await call(auth, 'GET', '/version')).status).toBe(401)
  })

  it("compile_acl_path: a privsep token gets the intersection of its ACLs and its user's", async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'meet@pve' }))
    const auth = await token('meet@pve', 'tok')
    await grant('/vms', 'PVEVMUser', { users: 'meet@pve' })
    await grant('/vms', 'PVEVMAdmin', { tokens: 'meet@pve!tok' })
    const perms = (await ok(call(auth, 'GET', '/access/permissions', { path: '/vms/100' }))) as Record<
      string,
      Record<string, number>
    >
    const privs = Object.keys(perms['/vms/100'] ?? {})
    expect(privs).toContain('VM.PowerMgmt') // in both
    expect(privs).not.toContain('VM.Allocate') // the token's role has it, the user's does not
    // a token with privsep=0 has exactly its user's privileges
    const full = await token('meet@pve', 'full', false)
    const fp = (await ok(call(full, 'GET', '/access/permissions', { path: '/vms/100' }))) as Record<
      string,
      Record<string, number>
    >
    expect(Object.keys(fp['/vms/100'] ?? {}).sort()).toEqual([
      'VM.Audit',
      'VM.Backup',
      'VM.Config.CDROM',
      'VM.Config.Cloudinit',
      'VM.Console',
      'VM.GuestAgent.Audit',
      'VM.GuestAgent.FileRead',
      'VM.GuestAgent.FileSystemMgmt',
      'VM.GuestAgent.FileWrite',
      'VM.PowerMgmt',
    ])
  })

  it('AccessControl roles: propagate=0 stays on its path; a deeper entry replaces the inherited one; NoAccess wipes', async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'prop@pve' }))
    const auth = await token('prop@pve', 'tok', false)
    await grant('/vms', 'PVEAuditor', { users: 'prop@pve' }, false)
    const at = async (path: string): Promise<string[]> =>
      Object.keys(
        ((await ok(call(auth, 'GET', '/access/permissions', { path }))) as Record<string, Record<string, number>>)[
          path
        ] ?? {},
      )
    expect(await at('/vms')).toContain('VM.Audit')
    expect(await at('/vms/100')).toEqual([])
    await grant('/vms', 'PVEVMAdmin', { users: 'prop@pve' })
    await grant('/vms/101', 'PVEAuditor', { users: 'prop@pve' })
    expect(await at('/vms/100')).toContain('VM.Allocate')
    expect(await at('/vms/101')).not.toContain('VM.Allocate')
    await grant('/vms/100', 'NoAccess', { users: 'prop@pve' })
    expect(await at('/vms/100')).toEqual([])
    // the whole tree, as GET /access/permissions without a path shows it, values are propagate flags
    const tree = (await ok(call(auth, 'GET', '/access/permissions'))) as Record<string, Record<string, number>>
    expect(tree['/vms']?.['VM.Allocate']).toBe(1)
    expect(tree['/vms/100']).toBeUndefined()
  })

  it("permissions endpoint: another user's permissions need Sys.Audit on /access", async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'nosy@pve' }))
    const auth = await token('nosy@pve', 'tok', false)
    const r = await call(auth, 'GET', '/access/permissions', { userid: 'ops@pve' })
    expect([r.status, r.reason]).toEqual([403, 'Permission check failed (/access, Sys.Audit)'])
    expect(await ok(call(auth, 'GET', '/access/permissions', { userid: 'nosy@pve!tok' }))).toEqual({})
  })

  it('update_acl: invalid paths, unknown roles and tokens are refused; read_acl lists the entries', async () => {
    const bad = await call(root, 'PUT', '/access/acl', { path: '/nope', roles: 'PVEAuditor', users: 'ops@pve' })
    expect(bad.status).toBe(400)
    expect((bad.json as { errors: unknown }).errors).toEqual({ path: "invalid ACL path '/nope'" })
    const role = await call(root, 'PUT', '/access/acl', { path: '/', roles: 'Nope', users: 'ops@pve' })
    expect([role.status, role.reason]).toEqual([500, "ACL update failed: role 'Nope' does not exist"])
    await grant('/storage/local', 'PVEDatastoreUser', { users: 'ops@pve' })
    const acl = (await ok(call(root, 'GET', '/access/acl'))) as Record<string, unknown>[]
    expect(acl).toContainEqual({
      path: '/storage/local',
      type: 'user',
      ugid: 'ops@pve',
      roleid: 'PVEDatastoreUser',
      propagate: 1,
    })
  })
})

describe('RPCEnvironment check_api2_permissions: every route checks its apidoc permissions entry', () => {
  let auth: Record<string, string>
  beforeAll(async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'vm@pve' }))
    auth = await token('vm@pve', 'tok', false)
    await grant('/vms/100', 'PVEVMUser', { users: 'vm@pve' })
  })

  it('perm: VM.PowerMgmt on /vms/{vmid} lets start through, VM.Allocate for destroy is missing', async () => {
    const start = await call(auth, 'POST', '/nodes/pve1/qemu/100/status/start')
    expect(start.status, start.body).toBe(200)
    const del = await call(auth, 'DELETE', '/nodes/pve1/qemu/100')
    expect([del.status, del.reason]).toEqual([403, 'Permission check failed (/vms/100, VM.Allocate)'])
  })

  it('perm with any: PUT config needs one of the VM.Config.* privileges on the guest', async () => {
    const r = await call(auth, 'PUT', '/nodes/pve1/qemu/101/config', { description: 'x' })
    expect([r.status, r.reason]).toEqual([
      403,
      'Permission check failed (/vms/101, VM.Config.Disk|VM.Config.CDROM|VM.Config.CPU|VM.Config.Memory|VM.Config.Network|VM.Config.HWType|VM.Config.Options|VM.Config.Cloudinit)',
    ])
  })

  it('and/or: download-url needs Datastore.AllocateTemplate and (Sys.Audit+Sys.Modify on / or Sys.AccessNetwork)', async () => {
    const r = await call(auth, 'POST', '/nodes/pve1/storage/local/download-url', {
      url: 'https://example.invalid/x.iso',
      content: 'iso',
      filename: 'x.iso',
    })
    expect([r.status, r.reason]).toEqual([403, 'Permission check failed (/storage/local, Datastore.AllocateTemplate)'])
  })

  it('user: all routes answer everyone; perm-modify guards PUT /access/acl', async () => {
    expect((await call(auth, 'GET', '/version')).status).toBe(200)
    const r = await call(auth, 'PUT', '/access/acl', { path: '/', roles: 'Administrator', users: 'vm@pve' })
    expect([r.status, r.reason]).toEqual([403, 'Permission check failed (/, Permissions.Modify)'])
  })

  it('userid-param self: a token cannot create tokens for its own user (it is not that user)', async () => {
    const r = await call(auth, 'POST', '/access/users/vm@pve/token/second')
    expect([r.status, r.reason]).toEqual([403, 'Permission check failed'])
  })

  it("tickets of pve-realm users carry that user's privileges", async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'pw@pve', password: 'canary-pw-1234' }))
    const t = (await ok(call({}, 'POST', '/access/ticket', { username: 'pw@pve', password: 'canary-pw-1234' }))) as {
      ticket: string
    }
    const cookie = { Cookie: `PVEAuthCookie=${encodeURIComponent(t.ticket)}` }
    const r = await call(cookie, 'GET', '/nodes/pve1/qemu/100/config')
    expect([r.status, r.reason]).toEqual([403, 'Permission check failed (/vms/100, VM.Audit)'])
  })
})

describe('filtered lists: never a 403, only what the caller may audit', () => {
  it('Cluster.pm resources and the qemu vmlist show only guests with VM.Audit; storage by Datastore.Audit', async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'see@pve' }))
    const auth = await token('see@pve', 'tok', false)
    await grant('/vms/101', 'PVEAuditor', { users: 'see@pve' })
    const res = (await ok(call(auth, 'GET', '/cluster/resources'))) as { type: string; vmid?: number }[]
    expect(res.filter((r) => r.type === 'qemu').map((r) => r.vmid)).toEqual([101])
    expect(res.some((r) => r.type === 'storage')).toBe(false)
    expect(res.some((r) => r.type === 'node')).toBe(true)
    const list = (await ok(call(auth, 'GET', '/nodes/pve1/qemu'))) as { vmid: number }[]
    expect(list.map((g) => g.vmid)).toEqual([101])
    expect(await ok(call(auth, 'GET', '/nodes/pve1/storage'))).toEqual([])
  })

  it('Storage Content index: volumes the caller cannot access are left out (check_volume_access)', async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'store@pve' }))
    const auth = await token('store@pve', 'tok', false)
    await grant('/storage/local-lvm', 'PVEDatastoreUser', { users: 'store@pve' })
    await grant('/storage/local-lvm', 'PVEAuditor', { users: 'store@pve' })
    await grant('/vms/100', 'PVEVMAdmin', { users: 'store@pve' })
    for (const vmid of ['100', '101']) {
      await ok(
        call(root, 'POST', '/nodes/pve1/storage/local-lvm/content', {
          vmid,
          filename: `vm-${vmid}-disk-9`,
          size: '1G',
        }),
      )
    }
    const vols = (await ok(call(auth, 'GET', '/nodes/pve1/storage/local-lvm/content'))) as { volid: string }[]
    expect(vols.map((v) => v.volid)).toContain('local-lvm:vm-100-disk-9')
    expect(vols.map((v) => v.volid)).not.toContain('local-lvm:vm-101-disk-9')
  })
})

describe('checks PVE makes in code', () => {
  let auth: Record<string, string>
  beforeAll(async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'cfg@pve' }))
    auth = await token('cfg@pve', 'tok', false)
    await grant('/vms', 'PVEVMAdmin', { users: 'cfg@pve' })
    await grant('/storage', 'PVEDatastoreUser', { users: 'cfg@pve' })
  })

  it('qemu-server check_vm_modify_config_perm: startup needs Sys.Modify on /', async () => {
    const r = await call(auth, 'PUT', '/nodes/pve1/qemu/101/config', { startup: 'order=1' })
    expect([r.status, r.reason]).toEqual([403, 'Permission check failed (/, Sys.Modify)'])
    expect((await call(auth, 'PUT', '/nodes/pve1/qemu/101/config', { description: 'ok' })).status).toBe(200)
  })

  it('QemuServer check_bridge_access: a NIC needs SDN.Use on /sdn/zones/localnetwork/<bridge> (per VLAN with a tag)', async () => {
    const r = await call(auth, 'PUT', '/nodes/pve1/qemu/101/config', { net0: 'virtio,bridge=vmbr0' })
    expect([r.status, r.reason]).toEqual([403, 'Permission check failed (/sdn/zones/localnetwork/vmbr0, SDN.Use)'])
    await grant('/sdn/zones/localnetwork/vmbr0/20', 'PVESDNUser', { users: 'cfg@pve' })
    const tagged = await call(auth, 'PUT', '/nodes/pve1/qemu/101/config', { net0: 'virtio,bridge=vmbr0,tag=20' })
    expect(tagged.status, tagged.body).toBe(200)
    await grant('/sdn/zones/localnetwork/vmbr0', 'PVESDNUser', { users: 'cfg@pve' })
    expect((await call(auth, 'PUT', '/nodes/pve1/qemu/101/config', { net1: 'virtio,bridge=vmbr0' })).status).toBe(200)
  })

  it('create_vm: VM.Allocate on /vms/<vmid>, Datastore.AllocateSpace on every storage a new disk lands on', async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'mk@pve' }))
    const mk = await token('mk@pve', 'tok', false)
    const none = await createVm(mk, 200)
    expect([none.status, none.reason]).toEqual([403, 'Permission check failed'])
    await grant('/vms', 'PVEVMAdmin', { users: 'mk@pve' })
    const disk = await createVm(mk, 200, { scsi0: 'local-lvm:4' })
    expect([disk.status, disk.reason]).toEqual([
      403,
      'Permission check failed (/storage/local-lvm, Datastore.AllocateSpace)',
    ])
    await grant('/storage/local-lvm', 'PVEDatastoreUser', { users: 'mk@pve' })
    expect((await createVm(mk, 200, { scsi0: 'local-lvm:4' })).status).toBe(200)
  })

  it('root@pam-only options stay root-only for every token: args, hookscript, raw hostpci, bind mounts, non-nesting features', async () => {
    const args = await call(auth, 'PUT', '/nodes/pve1/qemu/101/config', { args: '-no-reboot' })
    expect([args.status, args.reason]).toEqual([500, "only root can set 'args' config"])
    const pci = await call(auth, 'PUT', '/nodes/pve1/qemu/101/config', { hostpci0: '0000:01:00.0' })
    expect([pci.status, pci.reason]).toEqual([500, "only root can set 'hostpci0' config for non-mapped devices"])
    const bind = await call(auth, 'POST', '/nodes/pve1/lxc', {
      vmid: '300',
      ostemplate: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
      rootfs: 'local-lvm:4',
      mp0: '/srv/data,mp=/data',
    })
    expect([bind.status, bind.reason]).toEqual([
      403,
      'Permission check failed (mount point type bind is only allowed for root@pam)',
    ])
    const feat = await call(auth, 'POST', '/nodes/pve1/lxc', {
      vmid: '300',
      ostemplate: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
      rootfs: 'local-lvm:4',
      features: 'keyctl=1',
    })
    expect([feat.status, feat.reason]).toEqual([
      403,
      'Permission check failed (changing feature flags (except nesting) is only allowed for root@pam)',
    ])
  })

  it('pve-container create_vm: a privileged container needs Sys.Modify on /', async () => {
    const r = await call(auth, 'POST', '/nodes/pve1/lxc', {
      vmid: '301',
      ostemplate: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
      rootfs: 'local-lvm:4',
      unprivileged: '0',
    })
    expect([r.status, r.reason]).toEqual([403, 'Permission check failed (/, Sys.Modify)'])
  })

  it('the default token root@pam!proxops keeps every privilege (privsep=0 token of root@pam)', async () => {
    const perms = (await ok(call(root, 'GET', '/access/permissions', { path: '/' }))) as Record<
      string,
      Record<string, number>
    >
    expect(perms['/']?.['Sys.Modify']).toBe(1)
    expect((await call(root, 'PUT', '/nodes/pve1/qemu/101/config', { startup: 'order=2' })).status).toBe(200)
  })
})
