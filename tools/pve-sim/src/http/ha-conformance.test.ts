/**
 * HA over raw HTTP, each test named after the PVE function it follows: pve-ha-manager PVE::API2::HA::Resources /
 * Groups / Rules, qemu-server vm_start / vm_stop / vm_shutdown and pve-container's Status.pm with
 * PVE::HA::Config::vm_is_ha_managed (hastart / hastop workers), pve-manager API2/Cluster.pm resources (hastate),
 * and destroy_vm's purge check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apidocForTests } from '../apidoc/test-data.js'
import { startSimulator, type Simulator } from '../index.js'
import { form, raw, waitTask, type RawResponse } from './test-support/raw.js'

// one CRM cycle: long enough that a test reads the state between a request and the CRM's step on a loaded machine
const LAG = 600
let sim: Simulator
const req = (s: Simulator, method: string, path: string, params?: Record<string, string>): Promise<RawResponse> => {
  const headers = { Authorization: s.token.header }
  if (!params) return raw(s, method, `/api2/json${path}`, { headers })
  const f = form(params)
  return raw(s, method, `/api2/json${path}`, { headers: { ...headers, ...f.headers }, body: f.body })
}
const data = <T>(r: RawResponse): T => (r.json as { data: T }).data
const message = (r: RawResponse): string => (r.json as { message: string }).message
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function ok(s: Simulator, r: Promise<RawResponse>): Promise<Record<string, unknown>> {
  const res = await r
  expect(res.status, res.body).toBe(200)
  return waitTask(s, { Authorization: s.token.header }, 'pve1', data<string>(res))
}
const status = async (type: string, vmid: number): Promise<Record<string, unknown>> =>
  data<Record<string, unknown>>(await req(sim, 'GET', `/nodes/pve1/${type}/${vmid}/status/current`))
const resource = async (vmid: number): Promise<Record<string, unknown> | undefined> =>
  data<Record<string, unknown>[]>(await req(sim, 'GET', '/cluster/resources?type=vm')).find((r) => r.vmid === vmid)
async function until(what: () => Promise<boolean>, ms = 8000): Promise<void> {
  const end = Date.now() + ms
  while (!(await what())) {
    if (Date.now() > end) throw new Error('condition not reached')
    await sleep(20)
  }
}

beforeAll(async () => {
  sim = await startSimulator({
    authFailureDelayMs: 0,
    taskDurationMs: 30,
    resourcesLagMs: 0,
    haLagMs: LAG,
    log: () => {},
  })

  await ok(sim, req(sim, 'POST', '/nodes/pve1/qemu', { vmid: '200', name: 'ha-vm', memory: '512' }))
  const tmpl = sim.control.addVolume('pve1', 'local', {
    filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
    content: 'vztmpl',
  })
  await ok(sim, req(sim, 'POST', '/nodes/pve1/lxc', { vmid: '201', ostemplate: tmpl, rootfs: 'local-lvm:2' }))
})
afterAll(async () => {
  await sim.close()
})

describe('PVE::API2::HA::Resources create / index / read / update / delete', () => {
  it('create stores the section; index and read return it with sid, type and the resources.cfg digest', async () => {
    const r = await req(sim, 'POST', '/cluster/ha/resources', {
      sid: 'vm:200',
      state: 'stopped',
      max_restart: '2',
      comment: 'web',
    })
    expect([r.status, data(r)]).toEqual([200, null])
    const list = data<Record<string, unknown>[]>(await req(sim, 'GET', '/cluster/ha/resources'))
    expect(list).toEqual([
      {
        sid: 'vm:200',
        type: 'vm',
        state: 'stopped',
        max_restart: 2,
        comment: 'web',
        digest: expect.stringMatching(/^[0-9a-f]{40}$/),
      },
    ])
    // parse_sid resolves a bare vmid from the vmlist
    expect(data(await req(sim, 'GET', '/cluster/ha/resources/200'))).toEqual(list[0])
  })

  it('create refuses a duplicate, a guest that does not exist, the wrong type, and groups on 9.x', async () => {
    expect(message(await req(sim, 'POST', '/cluster/ha/resources', { sid: 'vm:200' }))).toBe(
      "create resource failed: resource ID 'vm:200' already defined\n",
    )
    expect(message(await req(sim, 'POST', '/cluster/ha/resources', { sid: 'vm:999' }))).toBe(
      "resource 'vm:999' does not exist in cluster\n",
    )
    expect(message(await req(sim, 'POST', '/cluster/ha/resources', { sid: '999' }))).toBe(
      'unable to detect SID from VMID - VM/CT 999 does not exist\n',
    )
    expect(message(await req(sim, 'POST', '/cluster/ha/resources', { sid: 'vm:201' }))).toBe(
      "resource 'vm:201' - guest with ID 201 is not a VM\n",
    )
    expect(message(await req(sim, 'POST', '/cluster/ha/resources', { sid: 'ct:201', group: 'g1' }))).toBe(
      "invalid parameter 'group': ha groups have been migrated to rules\n",
    )
  })

  it('update with a stale digest fails; delete of an unmanaged sid fails', async () => {
    const r = await req(sim, 'PUT', '/cluster/ha/resources/vm:200', { comment: 'x', digest: '0'.repeat(40) })
    expect([r.status, message(r)]).toEqual([
      500,
      'update resources config failed: detected modified configuration - file changed by other user? Try again.\n',
    ])
    expect(message(await req(sim, 'DELETE', '/cluster/ha/resources/ct:201'))).toBe(
      "cannot delete service 'ct:201', not HA managed!\n",
    )
  })

  it('destroy_vm refuses an HA resource without purge', async () => {
    const r = await req(sim, 'DELETE', '/nodes/pve1/qemu/200')
    expect([r.status, message(r)]).toEqual([
      500,
      'unable to remove VM 200 - used in HA resources and purge parameter not set.\n',
    ])
  })
})

describe('vm_start / vm_shutdown of an HA-managed guest (vm_is_ha_managed -> hastart / hastop)', () => {
  it('start answers a hastart task that ends OK at once; the LRM starts the VM one CRM cycle later', async () => {
    const st = await ok(sim, req(sim, 'POST', '/nodes/pve1/qemu/200/status/start'))
    expect([st.type, st.exitstatus]).toEqual(['hastart', 'OK'])
    expect((await status('qemu', 200)).status).toBe('stopped')
    expect(data<{ state: string }>(await req(sim, 'GET', '/cluster/ha/resources/vm:200')).state).toBe('started')
    await until(async () => (await status('qemu', 200)).status === 'running')
    const s = await status('qemu', 200)
    expect(s.ha).toEqual({ managed: 1, state: 'started' })
    expect((await resource(200))?.hastate).toBe('started')
    // the real start was a qmstart task of the LRM, as root@pam
    const tasks = data<Record<string, unknown>[]>(
      await req(sim, 'GET', '/nodes/pve1/tasks?vmid=200&typefilter=qmstart'),
    )
    expect(tasks[0]).toMatchObject({ type: 'qmstart', user: 'root@pam', status: 'OK' })
  })

  it('shutdown answers a hastop task that ends OK while the VM still runs; the CRM then writes state stopped', async () => {
    const st = await ok(sim, req(sim, 'POST', '/nodes/pve1/qemu/200/status/shutdown', { timeout: '30' }))
    expect([st.type, st.exitstatus]).toEqual(['hastop', 'OK'])
    expect((await status('qemu', 200)).status).toBe('running')
    await until(async () => (await status('qemu', 200)).status === 'stopped')
    expect(data<{ state: string }>(await req(sim, 'GET', '/cluster/ha/resources/vm:200')).state).toBe('stopped')
    expect((await resource(200))?.hastate).toBe('stopped')
    const tasks = data<Record<string, unknown>[]>(
      await req(sim, 'GET', '/nodes/pve1/tasks?vmid=200&typefilter=qmshutdown'),
    )
    expect(tasks[0]).toMatchObject({ user: 'root@pam', status: 'OK' })
  })

  it('a start the LRM cannot carry out leaves the service in error; a new start request then fails', async () => {
    sim.control.setTaskBehaviour('qmstart', { fail: 'start failed: QEMU exited with code 1' })
    try {
      expect((await ok(sim, req(sim, 'POST', '/nodes/pve1/qemu/200/status/start'))).exitstatus).toBe('OK')
      await until(async () => (await resource(200))?.hastate === 'error')
      expect((await status('qemu', 200)).status).toBe('stopped')
      const again = await ok(sim, req(sim, 'POST', '/nodes/pve1/qemu/200/status/start'))
      expect(again.exitstatus).toBe("service 'vm:200' in error state, must be disabled and fixed first")
    } finally {
      sim.control.setTaskBehaviour('qmstart', null)
    }
    // check_service_state: only `disabled` is accepted, after which a start works again
    expect((await req(sim, 'PUT', '/cluster/ha/resources/vm:200', { state: 'disabled' })).status).toBe(200)
    await until(async () => (await resource(200))?.hastate === 'stopped')
    expect((await req(sim, 'PUT', '/cluster/ha/resources/vm:200', { state: 'started' })).status).toBe(200)
    await until(async () => (await status('qemu', 200)).status === 'running')
  })

  it('pve-container vm_start / vm_stop: the same for a CT; stop asks for a hard stop (crm-command stop <sid> 0)', async () => {
    expect((await req(sim, 'POST', '/cluster/ha/resources', { sid: 'ct:201', state: 'stopped' })).status).toBe(200)
    const st = await ok(sim, req(sim, 'POST', '/nodes/pve1/lxc/201/status/start'))
    expect(st.type).toBe('hastart')
    await until(async () => (await status('lxc', 201)).status === 'running')
    const stop = await ok(sim, req(sim, 'POST', '/nodes/pve1/lxc/201/status/stop'))
    expect([stop.type, stop.exitstatus]).toEqual(['hastop', 'OK'])
    expect((await status('lxc', 201)).status).toBe('running')
    await until(async () => (await status('lxc', 201)).status === 'stopped')
    const tasks = data<Record<string, unknown>[]>(await req(sim, 'GET', '/nodes/pve1/tasks?vmid=201&typefilter=vzstop'))
    expect(tasks[0]).toMatchObject({ user: 'root@pam', status: 'OK' })
  })

  it('an `ignored` resource is not HA managed: start is a plain qmstart', async () => {
    await ok(sim, req(sim, 'POST', '/nodes/pve1/qemu', { vmid: '202', memory: '512' }))
    expect((await req(sim, 'POST', '/cluster/ha/resources', { sid: 'vm:202', state: 'ignored' })).status).toBe(200)
    const st = await ok(sim, req(sim, 'POST', '/nodes/pve1/qemu/202/status/start'))
    expect(st.type).toBe('qmstart')
    expect((await status('qemu', 202)).ha).toEqual({ managed: 0 })
  })

  it('destroy with purge removes the HA resource too', async () => {
    expect((await req(sim, 'POST', '/nodes/pve1/qemu/202/status/stop')).status).toBe(200)
    await until(async () => (await status('qemu', 202)).status === 'stopped')
    const st = await ok(sim, req(sim, 'DELETE', '/nodes/pve1/qemu/202?purge=1'))
    expect(st.exitstatus).toBe('OK')
    expect(data<{ sid: string }[]>(await req(sim, 'GET', '/cluster/ha/resources')).map((r) => r.sid)).not.toContain(
      'vm:202',
    )
  })
})

describe('PVE::API2::HA::Groups and Rules per version (have_groups_been_migrated)', () => {
  it('9.x: groups are migrated to rules; rules can be created and listed', async () => {
    const g = await req(sim, 'GET', '/cluster/ha/groups')
    expect([g.status, message(g)]).toEqual([500, 'cannot index groups: ha groups have been migrated to rules\n'])
    const r = await req(sim, 'POST', '/cluster/ha/rules', {
      rule: 'keep-on-pve1',
      type: 'node-affinity',
      resources: 'vm:200',
      nodes: 'pve1',
    })
    expect(r.status, r.body).toBe(200)
    expect(data(await req(sim, 'GET', '/cluster/ha/rules'))).toEqual([
      {
        rule: 'keep-on-pve1',
        type: 'node-affinity',
        resources: 'vm:200',
        nodes: 'pve1',
        order: 1,
        digest: expect.stringMatching(/^[0-9a-f]{40}$/),
      },
    ])
  })

  // 8.4's schema routes the groups API: skipped without it (a fresh clone)
  it.skipIf(!apidocForTests('8.4'))('8.x: groups exist, a resource may name one, and there are no rules', async () => {
    const s8 = await startSimulator({
      pveVersion: '8.4',
      authFailureDelayMs: 0,
      taskDurationMs: 30,
      haLagMs: LAG,
      log: () => {},
    })
    try {
      expect(s8.schemaValidation).toBe(true)
      expect(data(await req(s8, 'GET', '/cluster/ha/groups'))).toEqual([])
      expect((await req(s8, 'POST', '/cluster/ha/groups', { group: 'g1', nodes: 'pve1:2,pve2' })).status).toBe(200)
      // encode_value joins Perl hash keys: the order written is not kept
      expect(data(await req(s8, 'GET', '/cluster/ha/groups'))).toEqual([
        { group: 'g1', type: 'group', nodes: 'pve2,pve1:2', digest: expect.stringMatching(/^[0-9a-f]{40}$/) },
      ])
      await ok(s8, req(s8, 'POST', '/nodes/pve1/qemu', { vmid: '100', memory: '512' }))
      // update checks the group, create does not (the index then reports it)
      expect(message(await req(s8, 'PUT', '/cluster/ha/resources/vm:100', { group: 'nope' }))).toBe(
        "HA group 'nope' does not exist\n",
      )
      expect(
        (await req(s8, 'POST', '/cluster/ha/resources', { sid: 'vm:100', group: 'g1', state: 'stopped' })).status,
      ).toBe(200)
      expect(data<{ group: string }>(await req(s8, 'GET', '/cluster/ha/resources/vm:100')).group).toBe('g1')
      expect((await req(s8, 'GET', '/cluster/ha/rules')).status).toBe(501)
    } finally {
      await s8.close()
    }
  })
})
