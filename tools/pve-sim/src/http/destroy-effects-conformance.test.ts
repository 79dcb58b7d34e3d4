/**
 * What removing one object takes with it, over raw HTTP, each test named after the PVE function it follows:
 * a guest's destroy (qemu-server and pve-container `destroy_vm`: AccessControl remove_vm_access, ReplicationConfig
 * check_for_existing_jobs / remove_vmid_jobs, VZDump::Plugin remove_vmid_from_backup_jobs, HA::Config
 * delete_service_from_config), a storage's delete (pve-storage API2::Storage::Config `delete`,
 * AccessControl remove_storage_access) and a pool's (pve-manager API2::Pool `delete_pool`, delete_pool_acl).
 */
import { afterAll, beforeAll, describe as suite, expect, it } from 'vitest'
import { apidocForTests } from '../apidoc/test-data.js'
import { startSimulator, type Simulator } from '../index.js'
import { apiRequest, okData, type RawResponse, waitTask } from './test-support/raw.js'

// ACL paths and the job parameters are checked against the PVE API schema: without it the file skips
const describe = suite.skipIf(!apidocForTests())

let sim: Simulator
let root: Record<string, string>
const call = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> => {
  return apiRequest(sim, root, method, path, params)
}
const ok = okData
const failure = (r: RawResponse): [number, string] => [r.status, (r.json as { message: string }).message]
/** runs a task to its end; returns its exit status and log lines */
async function task(r: Promise<RawResponse>): Promise<{ exitstatus: string; log: string[] }> {
  const upid = await ok<string>(r)
  const status = await waitTask(sim, root, 'pve1', upid)
  const log = await ok<{ t: string }[]>(call('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/log`))
  return { exitstatus: String(status.exitstatus), log: log.map((l) => l.t) }
}
const createVm = (vmid: number, extra: Record<string, string> = {}) =>
  task(call('POST', '/nodes/pve1/qemu', { vmid: String(vmid), memory: '512', ...extra }))
const createCt = (vmid: number) =>
  task(
    call('POST', '/nodes/pve1/lxc', {
      vmid: String(vmid),
      ostemplate: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
      rootfs: 'local-lvm:1',
    }),
  )
const acl = async (): Promise<{ path: string; ugid: string; roleid: string }[]> =>
  ok<{ path: string; ugid: string; roleid: string }[]>(call('GET', '/access/acl'))
const grant = (path: string) => ok(call('PUT', '/access/acl', { path, roles: 'PVEAuditor', users: 'ops@pve' }))
const jobs = async (): Promise<Record<string, Record<string, unknown>>> =>
  Object.fromEntries(
    (await ok<Record<string, unknown>[]>(call('GET', '/cluster/backup'))).map((j) => {
      const { 'next-run': _n, type: _t, enabled: _e, schedule: _s, ...rest } = j
      return [String(j.id), rest]
    }),
  )

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 10, resourcesLagMs: 0, log: () => {} })
  root = { Authorization: sim.token.header }
  sim.control.cluster.addVolume('pve1', 'local', {
    filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
    content: 'vztmpl',
  })
  await ok(call('POST', '/access/users', { userid: 'ops@pve' }))
})
afterAll(async () => {
  await sim.close()
})

describe('qemu-server destroy_vm -> AccessControl remove_vm_access (purge or not)', () => {
  it('the ACLs on /vms/<vmid> and the pool membership go; other guests keep theirs', async () => {
    await ok(call('POST', '/pools', { poolid: 'web' }))
    expect((await createVm(100, { pool: 'web' })).exitstatus).toBe('OK')
    expect((await createVm(1000)).exitstatus).toBe('OK')
    await grant('/vms/100')
    await grant('/vms/1000')
    const { exitstatus } = await task(call('DELETE', '/nodes/pve1/qemu/100'))
    expect(exitstatus).toBe('OK')
    expect((await acl()).map((e) => e.path)).toEqual(['/vms/1000'])
    expect(await ok(call('GET', '/pools', { poolid: 'web' }))).toEqual([{ poolid: 'web', members: [] }])
    await task(call('DELETE', '/nodes/pve1/qemu/1000'))
    expect(await acl()).toEqual([])
  })
})

describe('qemu-server / pve-container destroy_vm with purge -> VZDump::Plugin remove_vmid_from_backup_jobs', () => {
  it('without purge the jobs keep the vmid', async () => {
    await createVm(110)
    await ok(call('POST', '/cluster/backup', { id: 'keep', schedule: 'daily', vmid: '110,111' }))
    await task(call('DELETE', '/nodes/pve1/qemu/110'))
    expect((await jobs()).keep).toEqual({ id: 'keep', vmid: '110,111' })
    await ok(call('DELETE', '/cluster/backup/keep'))
  })

  it('the vmid leaves vmid and exclude lists, a job left without guests is deleted, the lists are rewritten', async () => {
    await createVm(120)
    await ok(call('POST', '/pools', { poolid: 'backup' }))
    const create = (id: string, p: Record<string, string>) =>
      ok(call('POST', '/cluster/backup', { id, schedule: 'daily', ...p }))
    await create('both', { vmid: '120;121 122' })
    await create('only', { vmid: '120' })
    await create('excluded', { exclude: '120' })
    await create('excluded2', { exclude: '120,123' })
    await create('everything', { all: '1' })
    await create('other', { vmid: '124;125' })
    await create('bypool', { pool: 'backup' })
    const { exitstatus, log } = await task(call('DELETE', '/nodes/pve1/qemu/120', { purge: '1' }))
    expect(exitstatus).toBe('OK')
    expect(log).toContain('purging VM 120 from related configurations..')
    expect(await jobs()).toEqual({
      both: { id: 'both', vmid: '121,122' },
      excluded: { id: 'excluded', all: 1 },
      excluded2: { id: 'excluded2', all: 1, exclude: '123' },
      everything: { id: 'everything', all: 1 },
      other: { id: 'other', vmid: '124,125' },
      bypool: { id: 'bypool', pool: 'backup' },
    })
    for (const id of Object.keys(await jobs())) await ok(call('DELETE', `/cluster/backup/${id}`))
  })

  it('pve-container: a CT destroyed with purge leaves its backup job too', async () => {
    expect((await createCt(130)).exitstatus).toBe('OK')
    await ok(call('POST', '/cluster/backup', { id: 'ct', schedule: 'daily', vmid: '130' }))
    const { exitstatus, log } = await task(call('DELETE', '/nodes/pve1/lxc/130', { purge: '1' }))
    expect(exitstatus).toBe('OK')
    expect(log).toContain('purging CT 130 from related configurations..')
    expect(await jobs()).toEqual({})
  })
})

describe('destroy_vm -> ReplicationConfig check_for_existing_jobs / remove_vmid_jobs', () => {
  it('a guest with a replication job is destroyed only with purge, which removes the job', async () => {
    await createVm(140, { scsi0: 'local-zfs:1' })
    await ok(call('POST', '/cluster/replication', { id: '140-0', type: 'local', target: 'pve2', schedule: '*/30' }))
    expect(failure(await call('DELETE', '/nodes/pve1/qemu/140'))).toEqual([
      500,
      "There is a replication job '140-0' for guest '140' - Please remove that first.\n",
    ])
    expect((await task(call('DELETE', '/nodes/pve1/qemu/140', { purge: '1' }))).exitstatus).toBe('OK')
    expect(await ok(call('GET', '/cluster/replication'))).toEqual([])
  })

  it('the worker repeats the check: a job created after the request fails the task', async () => {
    await createVm(141, { scsi0: 'local-zfs:1' })
    // the destroy is held, so the job is created while it runs
    sim.control.setTaskBehaviour('qmdestroy', { hold: true })
    const upid = await ok<string>(call('DELETE', '/nodes/pve1/qemu/141'))
    await ok(call('POST', '/cluster/replication', { id: '141-0', type: 'local', target: 'pve3' }))
    sim.control.setTaskBehaviour('qmdestroy', null)
    const status = await waitTask(sim, root, 'pve1', upid)
    expect(status.exitstatus).toBe("There is a replication job '141-0' for guest '141' - Please remove that first.")
    expect(sim.control.cluster.guest(141)?.lock).toBeUndefined()
    await ok(call('DELETE', '/cluster/replication/141-0', { force: '1' }))
    await task(call('DELETE', '/nodes/pve1/qemu/141'))
  })
})

describe('destroy_vm with purge -> HA::Config delete_service_from_config', () => {
  it('the HA resource goes and the log says so', async () => {
    await createVm(150)
    await ok(call('POST', '/cluster/ha/resources', { sid: 'vm:150', state: 'stopped' }))
    expect(failure(await call('DELETE', '/nodes/pve1/qemu/150'))).toEqual([
      500,
      'unable to remove VM 150 - used in HA resources and purge parameter not set.\n',
    ])
    const { exitstatus, log } = await task(call('DELETE', '/nodes/pve1/qemu/150', { purge: '1' }))
    expect(exitstatus).toBe('OK')
    expect(log).toContain('NOTE: removed VM 150 from HA resource configuration.')
    expect(await ok(call('GET', '/cluster/ha/resources'))).toEqual([])
  })
})

describe('API2::Storage::Config delete -> AccessControl remove_storage_access', () => {
  it('the ACLs on /storage/<id> go with the storage; a storage whose id starts the same keeps its own', async () => {
    for (const storage of ['nas', 'nas2'])
      await ok(call('POST', '/storage', { storage, type: 'dir', path: `/mnt/${storage}`, content: 'iso' }))
    await grant('/storage/nas')
    await grant('/storage/nas2')
    await ok(call('DELETE', '/storage/nas'))
    expect((await acl()).map((e) => e.path)).toEqual(['/storage/nas2'])
    await ok(call('DELETE', '/storage/nas2'))
    expect(await acl()).toEqual([])
  })
})

describe('API2::Pool delete_pool -> AccessControl delete_pool_acl', () => {
  it("the pool's ACL node goes; a nested pool's name names no node, so its ACL stays until its parent goes", async () => {
    await ok(call('POST', '/pools', { poolid: 'team' }))
    await ok(call('POST', '/pools', { poolid: 'team/dev' }))
    await ok(call('POST', '/pools', { poolid: 'teammate' }))
    for (const p of ['/pool/team', '/pool/team/dev', '/pool/teammate']) await grant(p)
    await ok(call('DELETE', '/pools', { poolid: 'team/dev' }))
    expect((await acl()).map((e) => e.path)).toEqual(['/pool/team', '/pool/team/dev', '/pool/teammate'])
    await ok(call('DELETE', '/pools', { poolid: 'team' }))
    expect((await acl()).map((e) => e.path)).toEqual(['/pool/teammate'])
    await ok(call('DELETE', '/pools/teammate'))
    expect(await acl()).toEqual([])
  })
})
