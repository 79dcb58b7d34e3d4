/**
 * Replication jobs over raw HTTP, each test named after the PVE function it follows: pve-manager
 * PVE::API2::ReplicationConfig (index, read, create, delete) over pve-guest-common PVE::ReplicationConfig and the
 * guests' get_replicatable_volumes (qemu-server QemuConfig, pve-container LXC::Config).
 */
import { afterAll, beforeAll, describe as suite, expect, it } from 'vitest'
import { apidocForTests } from '../apidoc/test-data.js'
import { startSimulator, type Simulator } from '../index.js'
import { apiRequest, okData, type RawResponse, waitTask } from './test-support/raw.js'

// the job id format and the permission entries come from the PVE API schema: without it the file skips
const describe = suite.skipIf(!apidocForTests())

let sim: Simulator
let root: Record<string, string>
const call = (
  auth: Record<string, string>,
  method: string,
  path: string,
  params?: Record<string, string>,
): Promise<RawResponse> => {
  return apiRequest(sim, auth, method, path, params)
}
const ok = okData
const failure = (r: RawResponse): [number, string, unknown] => {
  const j = r.json as { message: string; errors?: unknown }
  return [r.status, j.message, j.errors]
}
const create = (params: Record<string, string>) =>
  call(root, 'POST', '/cluster/replication', { type: 'local', target: 'pve2', ...params })
async function createVm(vmid: number, extra: Record<string, string>): Promise<void> {
  const upid = await ok<string>(call(root, 'POST', '/nodes/pve1/qemu', { vmid: String(vmid), memory: '512', ...extra }))
  expect((await waitTask(sim, root, 'pve1', upid)).exitstatus).toBe('OK')
}

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 10, resourcesLagMs: 0, log: () => {} })
  root = { Authorization: sim.token.header }
  await createVm(100, { scsi0: 'local-zfs:1', ide2: 'none,media=cdrom' })
  await createVm(101, { scsi0: 'local-lvm:1' })
  await createVm(102, { scsi0: 'local-zfs:1,replicate=0' })
})
afterAll(async () => {
  await sim.close()
})

describe('PVE::API2::ReplicationConfig create', () => {
  it("checks the guest, the target, the source, then the guest's volumes, then the id and the target's uniqueness", async () => {
    expect(failure(await create({ id: '999-0' }))).toEqual([500, "Guest '999' does not exist.\n", undefined])
    expect(failure(await create({ id: '100-0', target: 'pve9' }))).toEqual([
      500,
      "Target 'pve9' does not exist.\n",
      undefined,
    ])
    expect(failure(await create({ id: '100-0', source: 'pve2' }))[1]).toBe(
      "Source 'pve2' does not match current node of guest '100' (pve1)\n",
    )
    expect(failure(await create({ id: '100-0', target: 'pve1' }))[1]).toBe('Source and target must not be identical\n')
    // get_replicatable_volumes: only zfspool has the replicate feature; replicate=0 volumes do not count
    expect(failure(await create({ id: '101-0' }))[1]).toBe(
      "missing replicate feature on volume 'local-lvm:vm-101-disk-0'\n",
    )
    expect(failure(await create({ id: '102-0' }))[1]).toBe('No replicatable volumes found\n')
    expect((await create({ id: '100-0', schedule: '*/30', comment: 'dr' })).status).toBe(200)
    expect(failure(await create({ id: '100-0', target: 'pve3' }))[1]).toBe("replication job '100-0' already exists\n")
    expect(failure(await create({ id: '100-1' }))[1]).toBe(
      "replication job for guest '100' to target 'local/pve2' already exists\n",
    )
    expect(failure(await create({ id: '100-x' }))[0]).toBe(400)
  })
})

describe('PVE::API2::ReplicationConfig index / read', () => {
  it('jobs carry guest, jobnum, the source set on create; read adds the digest; a missing job dies', async () => {
    const job = { id: '100-0', type: 'local', guest: 100, jobnum: 0, target: 'pve2', source: 'pve1', schedule: '*/30' }
    expect(await ok(call(root, 'GET', '/cluster/replication'))).toEqual([{ ...job, comment: 'dr' }])
    const read = await ok<Record<string, unknown>>(call(root, 'GET', '/cluster/replication/100-0'))
    expect(read).toEqual({ ...job, comment: 'dr', digest: expect.stringMatching(/^[0-9a-f]{40}$/) })
    expect(failure(await call(root, 'GET', '/cluster/replication/100-5'))).toEqual([
      500,
      "no such replication job '100-5'\n",
      undefined,
    ])
  })
})

describe('PVE::API2::ReplicationConfig delete', () => {
  it('marks the job for removal (full, or local with keep); force drops it; keep and force conflict', async () => {
    expect(failure(await call(root, 'DELETE', '/cluster/replication/100-0', { force: '1', keep: '1' }))).toEqual([
      400,
      'Parameter verification failed.\n',
      { keep: "conflicts with parameter 'force'" },
    ])
    await ok(call(root, 'DELETE', '/cluster/replication/100-0', { keep: '1' }))
    expect(await ok(call(root, 'GET', '/cluster/replication'))).toMatchObject([{ id: '100-0', remove_job: 'local' }])
    await ok(call(root, 'DELETE', '/cluster/replication/100-0'))
    expect(await ok(call(root, 'GET', '/cluster/replication'))).toMatchObject([{ id: '100-0', remove_job: 'full' }])
    expect(failure(await call(root, 'DELETE', '/cluster/replication/100-7'))[1]).toBe("no such job '100-7'\n")
    await ok(call(root, 'DELETE', '/cluster/replication/100-0', { force: '1' }))
    expect(await ok(call(root, 'GET', '/cluster/replication'))).toEqual([])
    // force on a job that is not there is no error
    await ok(call(root, 'DELETE', '/cluster/replication/100-0', { force: '1' }))
  })
})

describe('PVE::API2::ReplicationConfig permissions (9.x: VM.Replicate on the guest; index: VM.Audit)', () => {
  it('a token needs VM.Replicate on /vms/<guest> to create; the list shows only guests it may audit', async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'dr@pve' }))
    const t = await ok<{ 'full-tokenid': string; value: string }>(
      call(root, 'POST', '/access/users/dr%40pve/token/repl', { privsep: '0' }),
    )
    const dr = { Authorization: `PVEAPIToken=${t['full-tokenid']}=${t.value}` }
    expect(
      failure(await call(dr, 'POST', '/cluster/replication', { id: '100-0', type: 'local', target: 'pve2' })),
    ).toEqual([403, 'Permission check failed (/vms/100, VM.Replicate)\n', undefined])
    await ok(call(root, 'PUT', '/access/acl', { path: '/vms/100', roles: 'PVEVMAdmin', users: 'dr@pve' }))
    await ok(call(dr, 'POST', '/cluster/replication', { id: '100-0', type: 'local', target: 'pve2' }))
    await createVm(103, { scsi0: 'local-zfs:1' })
    await ok(create({ id: '103-0' }))
    expect((await ok<{ id: string }[]>(call(dr, 'GET', '/cluster/replication'))).map((j) => j.id)).toEqual(['100-0'])
    expect(failure(await call(dr, 'GET', '/cluster/replication/103-0'))[0]).toBe(403)
    expect(failure(await call(dr, 'DELETE', '/cluster/replication/103-0'))[1]).toBe(
      'Permission check failed (/vms/103, VM.Replicate)\n',
    )
  })
})
