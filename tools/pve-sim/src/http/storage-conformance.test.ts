/**
 * Conformance of storages over raw HTTPS: the storage configuration API, shared storages, offline storages,
 * storage locks and templates that linked clones still use. Each test names the PVE function it follows.
 */
import { afterAll, beforeAll, describe as suite, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { apidocForTests } from '../apidoc/test-data.js'
import { apiRequest, okDataOf, raw, waitTask, type RawResponse } from './test-support/raw.js'

// the privileges and parameters checked here come from the PVE API schema: without it (a fresh clone) the file skips
const describe = suite.skipIf(!apidocForTests())

let sim: Simulator
let auth: Record<string, string>
const req = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> =>
  apiRequest(sim, auth, method, path, params)
const data = okDataOf
/** run a task-returning call to its end: [exitstatus, log lines] */
async function task(
  method: string,
  path: string,
  params: Record<string, string>,
  node = 'pve1',
): Promise<[string, string[]]> {
  const upid = data<string>(await req(method, path, params))
  const st = await waitTask(sim, auth, node, upid)
  const log = data<{ t: string }[]>(
    await req('GET', `/nodes/${node}/tasks/${encodeURIComponent(upid)}/log`, { limit: '1000' }),
  )
  return [String(st.exitstatus), log.map((l) => l.t)]
}
const volids = async (node: string, storage: string): Promise<string[]> =>
  data<{ volid: string }[]>(await req('GET', `/nodes/${node}/storage/${storage}/content`)).map((v) => v.volid)

beforeAll(async () => {
  sim = await startSimulator({ taskDurationMs: 10, resourcesLagMs: 0, authFailureDelayMs: 0, log: () => {} })
  auth = { Authorization: sim.token.header }
  expect(sim.schemaValidation).toBe(true)
  // an admin adds an NFS share for guest disks and ISOs, and an RBD pool, both visible on every node
  data(
    await req('POST', '/storage', {
      storage: 'nas',
      type: 'nfs',
      server: '10.0.0.5',
      export: '/export/pve',
      content: 'images,iso',
    }),
  )
  data(await req('POST', '/storage', { storage: 'ceph', type: 'rbd', pool: 'vms', content: 'images' }))
})
afterAll(async () => {
  await sim?.close()
})

describe('PVE::API2::Storage::Config', () => {
  it('index/read: every section with storage, type, content, digest; nfs is shared with its default path', async () => {
    const list = data<Record<string, unknown>[]>(await req('GET', '/storage'))
    expect(list.map((s) => s.storage)).toEqual(['ceph', 'local', 'local-lvm', 'local-zfs', 'nas'])
    const nas = data<Record<string, unknown>>(await req('GET', '/storage/nas'))
    expect(nas).toMatchObject({
      storage: 'nas',
      type: 'nfs',
      content: 'images,iso',
      shared: 1,
      path: '/mnt/pve/nas',
      server: '10.0.0.5',
      export: '/export/pve',
    })
    expect(nas.digest).toMatch(/^[0-9a-f]{40}$/)
    expect(data<Record<string, unknown>>(await req('GET', '/storage/local'))).toMatchObject({
      type: 'dir',
      path: '/var/lib/vz',
      content: 'backup,import,iso,vztmpl',
    })
    expect(data<{ storage: string }[]>(await req('GET', '/storage', { type: 'rbd' })).map((s) => s.storage)).toEqual([
      'ceph',
    ])
  })

  it('index: only storages with Datastore.Audit or Datastore.AllocateSpace are listed', async () => {
    data(await req('POST', '/access/users', { userid: 'audit@pve' }))
    const tok = data<{ 'full-tokenid': string; value: string }>(
      await req('POST', '/access/users/audit@pve/token/tok', { privsep: '0' }),
    )
    data(await req('PUT', '/access/acl', { path: '/storage/nas', roles: 'PVEAuditor', users: 'audit@pve' }))
    const r = await raw(sim, 'GET', '/api2/json/storage', {
      headers: { Authorization: `PVEAPIToken=${tok['full-tokenid']}=${tok.value}` },
    })
    expect(data<{ storage: string }[]>(r).map((s) => s.storage)).toEqual(['nas'])
  })

  it('create: an existing id, a missing required option', async () => {
    const dup = await req('POST', '/storage', { storage: 'nas', type: 'nfs', server: 'x', export: '/y' })
    expect([dup.status, dup.reason]).toEqual([500, `create storage failed: storage ID 'nas' already defined`])
    const missing = await req('POST', '/storage', { storage: 'nas2', type: 'nfs', server: 'x' })
    expect(missing.status).toBe(400)
    expect((missing.json as { errors: Record<string, string> }).errors).toEqual({
      export: 'property is missing and it is not optional',
    })
  })

  it('update: digest checked (assert_if_modified), nodes restriction, delete; delete removes the section', async () => {
    data(await req('POST', '/storage', { storage: 'scratch', type: 'dir', path: '/srv/scratch', content: 'images' }))
    const { digest } = data<{ digest: string }>(await req('GET', '/storage/scratch'))
    data(await req('PUT', '/storage/scratch', { nodes: 'pve1,pve2', digest }))
    const stale = await req('PUT', '/storage/scratch', { content: 'iso', digest })
    expect([stale.status, stale.reason]).toEqual([
      500,
      'update storage failed: detected modified configuration - file changed by other user? Try again.',
    ])
    expect(data<Record<string, unknown>>(await req('GET', '/storage/scratch'))).toMatchObject({ nodes: 'pve1,pve2' })
    // storage_info on a node outside `nodes`: listed, enabled 0; not at all with a content filter
    const pve3 = data<Record<string, unknown>[]>(await req('GET', '/nodes/pve3/storage'))
    expect(pve3.find((s) => s.storage === 'scratch')).toMatchObject({ enabled: 0, active: 0 })
    expect(
      data<{ storage: string }[]>(await req('GET', '/nodes/pve3/storage', { content: 'images' })).map((s) => s.storage),
    ).not.toContain('scratch')
    const off = await req('GET', '/nodes/pve3/storage/scratch/content')
    expect([off.status, off.reason]).toEqual([500, `storage 'scratch' is not available on node 'pve3'`])
    data(await req('PUT', '/storage/scratch', { delete: 'nodes' }))
    expect(data<Record<string, unknown>>(await req('GET', '/storage/scratch')).nodes).toBeUndefined()
    expect(data(await req('DELETE', '/storage/scratch'))).toBeNull()
    expect((await req('GET', '/storage/scratch')).reason).toBe(`storage 'scratch' does not exist`)
  })
})

describe('shared storages (pve-storage parse_config: nfs/rbd are shared)', () => {
  it('one volume namespace for every node: a disk allocated on pve1 is listed on pve2 and pve3', async () => {
    const [st] = await task('POST', '/nodes/pve1/qemu', { vmid: '200', scsi0: 'nas:1', scsi1: 'ceph:1' })
    expect(st).toBe('OK')
    for (const node of ['pve2', 'pve3']) {
      expect(await volids(node, 'nas')).toContain('nas:200/vm-200-disk-0.raw')
      expect(await volids(node, 'ceph')).toContain('ceph:vm-200-disk-0')
    }
    const nodes = data<Record<string, unknown>[]>(await req('GET', '/nodes/pve2/storage'))
    expect(nodes.find((s) => s.storage === 'nas')).toMatchObject({ shared: 1, active: 1, enabled: 1 })
    const res = data<Record<string, unknown>[]>(await req('GET', '/cluster/resources', { type: 'storage' }))
    expect(res.filter((r) => r.storage === 'nas').map((r) => [r.node, r.shared])).toEqual([
      ['pve1', 1],
      ['pve2', 1],
      ['pve3', 1],
    ])
    expect(res.find((r) => r.storage === 'local')).toMatchObject({ shared: 0 })
  })
})

describe('PVE::Storage::activate_storage (check_connection fails: storage is not online)', () => {
  it('content listing and allocation fail; the node index shows it inactive; destroy-unreferenced-disks dies in vdisk_list', async () => {
    expect((await task('POST', '/nodes/pve1/qemu', { vmid: '210', scsi0: 'local-lvm:1' }))[0]).toBe('OK')
    expect((await task('POST', '/nodes/pve1/qemu', { vmid: '211', scsi0: 'local-lvm:1' }))[0]).toBe('OK')
    sim.control.setStorageOnline('nas', false)
    try {
      const list = await req('GET', '/nodes/pve2/storage/nas/content')
      expect([list.status, list.reason]).toEqual([500, `storage 'nas' is not online`])
      const idx = data<Record<string, unknown>[]>(await req('GET', '/nodes/pve1/storage'))
      expect(idx.find((s) => s.storage === 'nas')).toMatchObject({ active: 0, enabled: 1, total: 0 })
      const res = data<Record<string, unknown>[]>(await req('GET', '/cluster/resources', { type: 'storage' }))
      expect(res.find((r) => r.storage === 'nas')).toMatchObject({ status: 'unknown' })
      expect(await task('POST', '/nodes/pve1/qemu', { vmid: '212', scsi0: 'nas:1' })).toEqual([
        `unable to create VM 212 - storage 'nas' is not online`,
        expect.arrayContaining([`TASK ERROR: unable to create VM 212 - storage 'nas' is not online`]),
      ])
      // qemu-server destroy_vm: the referenced disk goes first, then vdisk_list activates every image storage
      const [st] = await task('DELETE', '/nodes/pve1/qemu/210', { purge: '1', 'destroy-unreferenced-disks': '1' })
      expect(st).toBe(`storage 'nas' is not online`)
      expect(data<Record<string, unknown>>(await req('GET', '/nodes/pve1/qemu/210/config')).scsi0).toBe(
        'local-lvm:vm-210-disk-0,size=1G',
      )
      expect(await volids('pve1', 'local-lvm')).not.toContain('local-lvm:vm-210-disk-0')
      // without it, only the referenced volumes are freed and the offline storage is never touched
      expect((await task('DELETE', '/nodes/pve1/qemu/211', { purge: '1' }))[0]).toBe('OK')
    } finally {
      sim.control.setStorageOnline('nas', true)
    }
  })
})

describe('PVE::Cluster::cfs_lock_storage (cluster_lock_storage on a shared storage)', () => {
  it('allocation, clone and free time out while another node holds storage-<id>; a local storage times out on its flock', async () => {
    expect((await task('POST', '/nodes/pve1/qemu', { vmid: '220', scsi0: 'ceph:1' }))[0]).toBe('OK')
    expect((await task('POST', '/nodes/pve1/qemu/220/template', {}))[0]).toBe('OK')
    expect((await task('POST', '/nodes/pve1/qemu', { vmid: '221', scsi0: 'ceph:1' }))[0]).toBe('OK')
    sim.control.setStorageLockContention('ceph', true)
    try {
      const timeout = `cfs-lock 'storage-ceph' error: got lock request timeout`
      expect((await task('POST', '/nodes/pve1/qemu', { vmid: '222', scsi0: 'ceph:1' }))[0]).toBe(
        `unable to create VM 222 - ${timeout}`,
      )
      expect((await task('POST', '/nodes/pve1/qemu/220/clone', { newid: '223' }))[0]).toBe(`clone failed: ${timeout}`)
      const alloc = await req('POST', '/nodes/pve2/storage/ceph/content', {
        vmid: '224',
        filename: 'vm-224-disk-0',
        size: '1G',
      })
      expect([alloc.status, alloc.reason]).toEqual([500, timeout])
      // destroy_vm only warns about a volume vdisk_free could not remove: the task ends with warnings, the volume stays
      const [st, log] = await task('DELETE', '/nodes/pve1/qemu/221', { purge: '1' })
      expect(st).toBe('WARNINGS: 1')
      expect(log).toContain(`WARN: Could not remove disk 'ceph:vm-221-disk-0', check manually: ${timeout}`)
      expect(await volids('pve1', 'ceph')).toContain('ceph:vm-221-disk-0')
    } finally {
      sim.control.setStorageLockContention('ceph', false)
    }
    sim.control.setStorageLockContention('local-lvm', true)
    try {
      expect((await task('POST', '/nodes/pve1/qemu', { vmid: '225', scsi0: 'local-lvm:1' }))[0]).toBe(
        `unable to create VM 225 - can't lock file '/var/lock/pve-manager/pve-storage-local-lvm' - got timeout`,
      )
    } finally {
      sim.control.setStorageLockContention('local-lvm', false)
    }
  })
})

describe('PVE::QemuServer::destroy_vm and PVE::Storage::volume_is_base_and_used', () => {
  it('a template whose base volume a linked clone uses is refused before anything is removed (rbd)', async () => {
    expect((await task('POST', '/nodes/pve1/qemu', { vmid: '230', scsi0: 'ceph:1', scsi1: 'local-lvm:1' }))[0]).toBe(
      'OK',
    )
    expect((await task('POST', '/nodes/pve1/qemu/230/template', {}))[0]).toBe('OK')
    expect((await task('POST', '/nodes/pve1/qemu/230/clone', { newid: '231' }))[0]).toBe('OK')
    expect(data<Record<string, unknown>>(await req('GET', '/nodes/pve1/qemu/231/config')).scsi0).toBe(
      'ceph:base-230-disk-0/vm-231-disk-0,size=1G',
    )
    const before = await volids('pve1', 'local-lvm')
    const [st] = await task('DELETE', '/nodes/pve1/qemu/230', { purge: '1' })
    expect(st).toBe(`base volume 'ceph:base-230-disk-0' is still in use by linked cloned`)
    expect(await volids('pve1', 'local-lvm')).toEqual(before)
    expect(data<Record<string, unknown>>(await req('GET', '/nodes/pve1/qemu/230/config')).template).toBe(1)
    // vdisk_free refuses the base volume itself too
    const free = await req('DELETE', '/nodes/pve1/storage/ceph/content/ceph:base-230-disk-0')
    expect([free.status, free.reason]).toEqual([500, `base volume 'base-230-disk-0' is still in use by linked clones`])
  })

  it('on lvmthin PVE cannot see the clone: the template is destroyed and the clone keeps running', async () => {
    expect((await task('POST', '/nodes/pve1/qemu', { vmid: '240', scsi0: 'local-lvm:1' }))[0]).toBe('OK')
    expect((await task('POST', '/nodes/pve1/qemu/240/template', {}))[0]).toBe('OK')
    expect((await task('POST', '/nodes/pve1/qemu/240/clone', { newid: '241' }))[0]).toBe('OK')
    expect((await task('DELETE', '/nodes/pve1/qemu/240', { purge: '1' }))[0]).toBe('OK')
    expect(await volids('pve1', 'local-lvm')).not.toContain('local-lvm:base-240-disk-0')
    expect((await task('POST', '/nodes/pve1/qemu/241/status/start', {}))[0]).toBe('OK')
  })
})

const fail = async (r: Promise<RawResponse>): Promise<[number, string]> => {
  const res = await r
  return [res.status, ((res.json as { message?: string }).message ?? '').trimEnd()]
}

describe("each plugin's options (pve-storage Plugin options, PVE::SectionConfig check_config)", () => {
  it('a dir storage keeps its boolean `shared` (a decoded boolean), so it is one namespace for every node', async () => {
    data(
      await req('POST', '/storage', {
        storage: 'shdir',
        type: 'dir',
        path: '/mnt/shdir',
        shared: '1',
        content: 'images',
      }),
    )
    expect(data<Record<string, unknown>>(await req('GET', '/storage/shdir'))).toMatchObject({ shared: 1 })
    const nodes = data<{ storage: string; shared: number }[]>(await req('GET', '/nodes/pve2/storage'))
    expect(nodes.find((s) => s.storage === 'shdir')).toMatchObject({ shared: 1 })
    data(await req('PUT', '/storage/shdir', { disable: '1' }))
    expect(data<Record<string, unknown>>(await req('GET', '/storage/shdir'))).toMatchObject({ disable: 1, shared: 1 })
  })

  it('an option the type has not is an unexpected property, on create (before the lock) and on update (under it)', async () => {
    expect(
      await fail(
        req('POST', '/storage', { storage: 'thin2', type: 'lvmthin', vgname: 'pve', thinpool: 'data', shared: '1' }),
      ),
    ).toEqual([500, "unexpected property 'shared'"])
    expect(await fail(req('PUT', '/storage/local-lvm', { sparse: '1' }))).toEqual([
      500,
      "update storage failed: unexpected property 'sparse'",
    ])
    expect(await fail(req('PUT', '/storage/local-lvm', { delete: 'shared' }))).toEqual([
      500,
      "update storage failed: no such option 'shared'",
    ])
  })
})

describe('PVE::API2::Storage::Config sensitive properties and fixed options', () => {
  const CANARY = 'canary-pw-7f3e'
  const KEY = JSON.stringify({ kdf: null, data: 'AAAA', fingerprint: 'aa:bb:cc' })
  it('create: extract_sensitive_params keeps password, keyring and the PBS key out of storage.cfg; no listing returns them', async () => {
    const cifs = data<Record<string, unknown>>(
      await req('POST', '/storage', {
        storage: 'smb',
        type: 'cifs',
        server: '10.0.0.9',
        share: 'vms',
        username: 'u',
        password: CANARY,
      }),
    )
    expect(cifs).toEqual({ storage: 'smb', type: 'cifs' })
    // PBSPlugin on_add_hook: storage.cfg gets the key's fingerprint, the answer's `config` the key
    const pbs = data<Record<string, unknown>>(
      await req('POST', '/storage', {
        storage: 'backup',
        type: 'pbs',
        server: 'pbs.lan',
        datastore: 'store1',
        username: 'sync@pbs',
        password: CANARY,
        'encryption-key': KEY,
      }),
    )
    expect(pbs).toEqual({ storage: 'backup', type: 'pbs', config: { 'encryption-key': KEY } })
    data(await req('POST', '/storage', { storage: 'ceph2', type: 'rbd', pool: 'x', keyring: CANARY }))
    const list = await req('GET', '/storage')
    expect(list.body).not.toContain(CANARY)
    expect(list.body).not.toContain('AAAA')
    const one = data<Record<string, unknown>>(await req('GET', '/storage/backup'))
    expect(one).toMatchObject({ type: 'pbs', 'encryption-key': 'aa:bb:cc', content: 'backup', username: 'sync@pbs' })
    expect(one).not.toHaveProperty('password')
    expect(data<Record<string, unknown>>(await req('GET', '/storage/smb'))).not.toHaveProperty('password')
    expect(data<Record<string, unknown>>(await req('GET', '/storage/ceph2'))).not.toHaveProperty('keyring')
  })

  it('PBSPlugin on_add_hook: a key that is not JSON with `data` is refused; master-pubkey needs an encryption key', async () => {
    const base = { type: 'pbs', server: 'pbs.lan', datastore: 's' }
    expect(await fail(req('POST', '/storage', { ...base, storage: 'p2', 'encryption-key': 'nope' }))).toEqual([
      500,
      'Value does not seems like a valid, JSON formatted encryption key!',
    ])
    expect(await fail(req('POST', '/storage', { ...base, storage: 'p3', 'master-pubkey': 'AAAA' }))).toEqual([
      500,
      "'master-pubkey' can only be used together with 'encryption-key'",
    ])
  })

  it('update: check_config refuses a fixed option even unchanged; required and fixed options cannot be deleted; a new password replaces the old unseen', async () => {
    expect(await fail(req('PUT', '/storage/backup', { server: 'pbs.lan' }))).toEqual([
      500,
      "update storage failed: can't change value of fixed parameter 'server'",
    ])
    expect(await fail(req('PUT', '/storage/nas', { delete: 'export' }))).toEqual([
      500,
      "update storage failed: unable to delete required option 'export'",
    ])
    const upd = data<Record<string, unknown>>(await req('PUT', '/storage/smb', { password: 'other-canary' }))
    expect(upd).toEqual({ storage: 'smb', type: 'cifs' })
    expect((await req('GET', '/storage')).body).not.toContain('other-canary')
    // a deleted encryption key leaves storage.cfg too (on_update_hook, then the delete)
    data(await req('PUT', '/storage/backup', { delete: 'encryption-key' }))
    expect(data<Record<string, unknown>>(await req('GET', '/storage/backup'))).not.toHaveProperty('encryption-key')
  })

  it('btrfs: a directory-like local storage with a fixed path', async () => {
    data(await req('POST', '/storage', { storage: 'bt', type: 'btrfs', path: '/mnt/bt' }))
    expect(data<Record<string, unknown>>(await req('GET', '/storage/bt'))).toMatchObject({
      type: 'btrfs',
      path: '/mnt/bt',
      content: 'images,rootdir',
    })
    expect(await fail(req('POST', '/storage', { storage: 'bt2', type: 'btrfs' }))).toEqual([400, expect.anything()])
  })
})
