/**
 * Pools over raw HTTP with a privilege-separated token, each test naming the PVE function it follows:
 * pve-manager PVE::API2::Pool (index filtered by Pool.Audit, create_pool's `perm /pool/{poolid}` Pool.Allocate,
 * update_pool's check_perm_modify per member and Pool.Allocate on a moved guest's old pool), qemu-server create_vm (VM.Allocate on /vms/{vmid} or on
 * /pool/{pool}) and pve-manager API2/Cluster.pm resources (a guest's pool only with Pool.Audit).
 */
import { afterAll, beforeAll, describe as suite, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { apidocForTests } from '../apidoc/test-data.js'
import { form, raw, waitTask, type RawResponse } from './test-support/raw.js'

// the permission entries come from the PVE API schema: without it (a fresh clone) the file skips
const describe = suite.skipIf(!apidocForTests())

let sim: Simulator
let root: Record<string, string>
let ops: Record<string, string>
const call = (auth: Record<string, string>, method: string, path: string, params?: Record<string, string>) => {
  const f = params && method !== 'GET' ? form(params) : undefined
  const q = params && method === 'GET' ? `?${new URLSearchParams(params).toString()}` : ''
  return raw(sim, method, `/api2/json${path}${q}`, {
    headers: { ...auth, ...(f?.headers ?? {}) },
    ...(f ? { body: f.body } : {}),
  })
}
const data = (r: RawResponse): unknown => (r.json as { data: unknown }).data
async function ok(r: Promise<RawResponse>): Promise<unknown> {
  const res = await r
  expect(res.status, res.body).toBe(200)
  return data(res)
}
async function task(auth: Record<string, string>, r: Promise<RawResponse>): Promise<void> {
  const upid = (await ok(r)) as string
  expect((await waitTask(sim, auth, 'pve1', upid)).exitstatus).toBe('OK')
}

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 10, resourcesLagMs: 0, log: () => {} })
  root = { Authorization: sim.token.header }
  await ok(call(root, 'POST', '/access/users', { userid: 'ops@pve' }))
  const t = (await ok(call(root, 'POST', '/access/users/ops%40pve/token/gitops', { privsep: '1' }))) as {
    'full-tokenid': string
    value: string
  }
  ops = { Authorization: `PVEAPIToken=${t['full-tokenid']}=${t.value}` }
  await ok(call(root, 'POST', '/pools', { poolid: 'web' }))
  await ok(call(root, 'POST', '/pools', { poolid: 'other' }))
  await task(root, call(root, 'POST', '/nodes/pve1/qemu', { vmid: '100', memory: '512', pool: 'other' }))
})
afterAll(async () => {
  await sim.close()
})

describe('PVE::API2::Pool permissions', () => {
  it('index lists only pools the caller may audit; create_pool needs Pool.Allocate on the new path', async () => {
    expect(await ok(call(ops, 'GET', '/pools'))).toEqual([])
    expect((await call(ops, 'POST', '/pools', { poolid: 'mine' })).status).toBe(403)
    const acl = { path: '/pool/web', roles: 'PVEPoolAdmin', tokens: 'ops@pve!gitops', propagate: '1' }
    await ok(call(root, 'PUT', '/access/acl', acl))
    await ok(call(root, 'PUT', '/access/acl', { ...acl, users: 'ops@pve', tokens: '' }))
    expect(await ok(call(ops, 'GET', '/pools'))).toEqual([{ poolid: 'web' }])
    expect((await call(ops, 'POST', '/pools', { poolid: 'web/child' })).status).toBe(200)
  })

  it('create_vm: VM.Allocate on /pool/{pool} is enough with pool=; update_pool checks each guest it moves', async () => {
    const acl = { path: '/pool/web', roles: 'PVEVMAdmin', propagate: '1' }
    await ok(call(root, 'PUT', '/access/acl', { ...acl, tokens: 'ops@pve!gitops' }))
    await ok(call(root, 'PUT', '/access/acl', { ...acl, users: 'ops@pve' }))
    expect((await call(ops, 'POST', '/nodes/pve1/qemu', { vmid: '101', memory: '512' })).status).toBe(403)
    await task(ops, call(ops, 'POST', '/nodes/pve1/qemu', { vmid: '101', memory: '512', pool: 'web' }))
    // compute_api_permission: the pool's ACL now reaches its member's /vms path, not other guests'
    expect((await call(ops, 'POST', '/nodes/pve1/qemu/101/config', { cores: '2' })).status).toBe(200)
    expect((await call(ops, 'POST', '/nodes/pve1/qemu/100/config', { cores: '2' })).status).toBe(403)
    // VM 100 is not the caller's to move: check_perm_modify on /vms/100
    const r = await call(ops, 'PUT', '/pools', { poolid: 'web', vms: '100', 'allow-move': '1' })
    expect([r.status, (r.json as { message?: string }).message]).toEqual([
      403,
      'Permission check failed (/vms/100, Permissions.Modify|VM.Allocate)\n',
    ])
  })

  it('Cluster.pm resources: a guest visible to the caller shows its pool only with Pool.Audit on it', async () => {
    await ok(call(root, 'PUT', '/access/acl', { path: '/vms/100', roles: 'PVEAuditor', tokens: 'ops@pve!gitops' }))
    await ok(call(root, 'PUT', '/access/acl', { path: '/vms/100', roles: 'PVEAuditor', users: 'ops@pve' }))
    const rows = (await ok(call(ops, 'GET', '/cluster/resources'))) as Record<string, unknown>[]
    const byVmid = new Map(rows.filter((x) => x.vmid !== undefined).map((x) => [x.vmid, x.pool]))
    expect([...byVmid]).toEqual([
      [100, undefined],
      [101, 'web'],
    ])
    expect(rows.filter((x) => x.type === 'pool').map((x) => x.pool)).toEqual(['web', 'web/child'])
  })

  // last: it moves VM 100 and widens the token's ACL
  it('update_pool: moving a guest out of another pool (allow-move) needs Pool.Allocate on that pool too', async () => {
    const grant = async (path: string, roles: string) => {
      await ok(call(root, 'PUT', '/access/acl', { path, roles, tokens: 'ops@pve!gitops' }))
      await ok(call(root, 'PUT', '/access/acl', { path, roles, users: 'ops@pve' }))
    }
    await grant('/vms/100', 'PVEVMAdmin')
    await grant('/pool/web', 'PVEPoolAdmin')
    const move = (extra: Record<string, string>) => call(ops, 'PUT', '/pools', { poolid: 'web', vms: '100', ...extra })
    // without allow-move PVE dies on the membership before it looks at the old pool's permissions
    const plain = await move({})
    expect([plain.status, (plain.json as { message?: string }).message]).toEqual([
      500,
      "update pools failed: VM 100 belongs already to pool 'other' and 'allow-move' is not set\n",
    ])
    const denied = await move({ 'allow-move': '1' })
    expect([denied.status, (denied.json as { message?: string }).message]).toEqual([
      403,
      'Permission check failed (/pool/other, Pool.Allocate)\n',
    ])
    await grant('/pool/other', 'PVEPoolAdmin')
    await ok(move({ 'allow-move': '1' }))
    const web = (await ok(call(root, 'GET', '/pools', { poolid: 'web' }))) as [{ members: { vmid?: number }[] }]
    expect(web[0].members.map((m) => m.vmid)).toContain(100)
  })
})
