/**
 * Guests that HA moves, over raw HTTP, each test named after the PVE function it follows: pve-ha-manager
 * PVE::API2::HA::Resources migrate / relocate, PVE::HA::Config get_resource_motion_info, PVE::HA::Manager
 * update_crm_commands / queue_resource_motion / next_state_started / next_state_migrate_relocate /
 * select_service_node / next_state_recovery, PVE::HA::NodeStatus fence_node, the LRM's exec_resource_agent with
 * PVEVM / PVECT migrate; qemu-server and pve-container migrate_vm's `hamigrate` branch.
 */
import { afterAll, beforeAll, describe as suite, expect, it } from 'vitest'
import { apidocForTests } from '../apidoc/test-data.js'
import { startSimulator, type Simulator } from '../index.js'
import { apiRequest, form, okData, raw, type RawResponse, waitTask } from './test-support/raw.js'

const describe = suite.skipIf(!apidocForTests())

/** one CRM cycle */
const LAG = 100
let sim: Simulator
let root: Record<string, string>
const call = (
  method: string,
  path: string,
  params?: Record<string, string>,
  auth: Record<string, string> = root,
): Promise<RawResponse> => {
  return apiRequest(sim, auth, method, path, params)
}
const ok = okData
async function task(node: string, r: Promise<RawResponse>): Promise<{ exitstatus: string; log: string[] }> {
  const upid = await ok<string>(r)
  const status = await waitTask(sim, root, node, upid)
  const log = await ok<{ t: string }[]>(call('GET', `/nodes/${node}/tasks/${encodeURIComponent(upid)}/log`))
  return { exitstatus: String(status.exitstatus), log: log.map((l) => l.t) }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
async function until(what: () => Promise<boolean>, ms = 8000): Promise<void> {
  const end = Date.now() + ms
  while (!(await what())) {
    if (Date.now() > end) throw new Error(`condition not reached; HA log:\n${sim.control.haLog().join('\n')}`)
    await sleep(20)
  }
}
const resource = async (vmid: number): Promise<Record<string, unknown> | undefined> =>
  (await ok<Record<string, unknown>[]>(call('GET', '/cluster/resources', { type: 'vm' }))).find((r) => r.vmid === vmid)
/** the guest is on `node` with that power state, and the manager (not only the config) has the service in `hastate` */
const settled = (vmid: number, node: string, hastate: string, status: string) => async () => {
  const r = await resource(vmid)
  if (r?.node !== node || r.hastate !== hastate || r.status !== status) return false
  const current = await call('GET', `/nodes/${node}/${String(r.type)}/${vmid}/status/current`)
  return (current.json as { data?: { ha?: { state?: string } } }).data?.ha?.state === hastate
}
const createVm = async (vmid: number, extra: Record<string, string> = {}) =>
  expect(
    (
      await task(
        'pve1',
        call('POST', '/nodes/pve1/qemu', { vmid: String(vmid), memory: '512', scsi0: 'nas:1', ...extra }),
      )
    ).exitstatus,
  ).toBe('OK')
const haOn = async (sid: string, extra: Record<string, string> = {}) =>
  ok(call('POST', '/cluster/ha/resources', { sid, state: 'started', ...extra }))
const tasksOf = (type: string, vmid: number) =>
  sim.control.tasks().filter((t) => t.type === type && t.id === String(vmid))
const logSince = (mark: number) => sim.control.haLog().slice(mark)

beforeAll(async () => {
  sim = await startSimulator({
    authFailureDelayMs: 0,
    taskDurationMs: 30,
    resourcesLagMs: 0,
    haLagMs: LAG,
    log: () => {},
  })
  root = { Authorization: sim.token.header }
  sim.control.addVolume('pve1', 'local', { filename: 'debian-12-standard_12.7-1_amd64.tar.zst', content: 'vztmpl' })
  await ok(
    call('POST', '/storage', {
      storage: 'nas',
      type: 'nfs',
      server: '10.0.0.9',
      export: '/vms',
      content: 'images,rootdir',
    }),
  )
})
afterAll(async () => {
  await sim.close()
})

describe('PVE::API2::HA::Resources migrate and the CRM (update_crm_commands, next_state_migrate_relocate)', () => {
  it('refuses a resource that is not HA managed', async () => {
    await createVm(300)
    const r = await call('POST', '/cluster/ha/resources/vm:300/migrate', { node: 'pve2' })
    expect([r.status, (r.json as { message: string }).message.trimEnd()]).toEqual([
      500,
      "resource 'vm:300' is not HA managed",
    ])
  })

  it('queues the command and answers (PVE 9); the CRM migrates the running VM online as root@pam, then it is started on the target', async () => {
    await haOn('vm:300')
    await until(settled(300, 'pve1', 'started', 'running'))
    const mark = sim.control.haLog().length
    expect(await ok(call('POST', '/cluster/ha/resources/vm:300/migrate', { node: 'pve2' }))).toEqual({
      sid: 'vm:300',
      'requested-node': 'pve2',
    })
    await until(settled(300, 'pve2', 'started', 'running'))
    expect(logSince(mark).filter((l) => /crm command|migrate|state changed/.test(l))).toEqual([
      'info: got crm command: migrate vm:300 pve2',
      "info: migrate service 'vm:300' to node 'pve2'",
      "info: service 'vm:300': state changed from 'started' to 'migrate'  (node = pve1, target = pve2)",
      "info: service 'vm:300': state changed from 'migrate' to 'started'  (node = pve2)",
    ])
    const [migration] = tasksOf('qmigrate', 300)
    expect(migration?.upid).toMatch(/:qmigrate:300:root@pam:$/)
    expect(migration?.log).toEqual(
      expect.arrayContaining([expect.stringMatching(/starting VM 300 on remote node 'pve2'$/)]),
    )
    expect(tasksOf('qmstart', 300)).toHaveLength(1)
  })

  it('a command for a node that is not online is logged and dropped (crm command error - node not online)', async () => {
    const mark = sim.control.haLog().length
    await ok(call('POST', '/cluster/ha/resources/vm:300/migrate', { node: 'pve9' }))
    await until(async () => logSince(mark).length > 0)
    expect(logSince(mark)).toEqual(['err: crm command error - node not online: migrate vm:300 pve9'])
    expect((await resource(300))?.node).toBe('pve2')
  })

  it('permissions: Sys.Console on /', async () => {
    await ok(call('POST', '/access/users', { userid: 'ha@pve' }))
    const t = await ok<Record<string, string>>(call('POST', '/access/users/ha@pve/token/tok', { privsep: '0' }))
    const auth = { Authorization: `PVEAPIToken=${t['full-tokenid']}=${t.value}` }
    expect((await call('POST', '/cluster/ha/resources/vm:300/migrate', { node: 'pve1' }, auth)).status).toBe(403)
  })
})

describe("qemu-server / pve-container migrate_vm: an HA-managed guest's migration becomes an HA request (hamigrate)", () => {
  it('a VM: the hamigrate task runs `ha-manager migrate`, the CRM does the rest', async () => {
    const { exitstatus, log } = await task(
      'pve2',
      call('POST', '/nodes/pve2/qemu/300/migrate', { target: 'pve3', online: '1' }),
    )
    expect([exitstatus, log]).toEqual(['OK', ['Requesting HA migration for VM 300 to node pve3', 'TASK OK']])
    await until(settled(300, 'pve3', 'started', 'running'))
  })

  it('the checks before the fork still answer first: a running HA VM without online', async () => {
    const r = await call('POST', '/nodes/pve3/qemu/300/migrate', { target: 'pve1' })
    expect([r.status, (r.json as { message: string }).message.trimEnd()]).toEqual([
      500,
      "can't migrate running VM without --online",
    ])
  })

  it('a container: PVECT migrate shuts it down, migrates it offline, and the CRM starts it on the target', async () => {
    expect(
      (
        await task(
          'pve1',
          call('POST', '/nodes/pve1/lxc', {
            vmid: '310',
            ostemplate: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
            rootfs: 'nas:1',
          }),
        )
      ).exitstatus,
    ).toBe('OK')
    await haOn('ct:310')
    await until(settled(310, 'pve1', 'started', 'running'))
    const { log } = await task('pve1', call('POST', '/nodes/pve1/lxc/310/migrate', { target: 'pve2', restart: '1' }))
    expect(log).toEqual(['Requesting HA migration for CT 310 to node pve2', 'TASK OK'])
    await until(settled(310, 'pve2', 'started', 'running'))
    expect(
      sim.control
        .tasks()
        .filter((t) => t.id === '310')
        .map((t) => `${t.type} ${t.node}`),
    ).toEqual(['vzcreate pve1', 'vzstart pve1', 'hamigrate pve1', 'vzshutdown pve1', 'vzmigrate pve1', 'vzstart pve2'])
  })
})

describe('PVE::API2::HA::Resources relocate', () => {
  it('stops the VM, migrates it offline, starts it on the target', async () => {
    await ok(call('POST', '/cluster/ha/resources/vm:300/relocate', { node: 'pve1' }))
    await until(settled(300, 'pve1', 'started', 'running'))
    expect(
      sim.control
        .tasks()
        .filter((t) => t.id === '300')
        .map((t) => `${t.type} ${t.node}`)
        .slice(-3),
    ).toEqual(['qmshutdown pve3', 'qmigrate pve3', 'qmstart pve1'])
    expect(tasksOf('qmigrate', 300).at(-1)?.log).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/starting VM 300 on remote node/)]),
    )
  })
})

describe('PVE::HA::Manager select_service_node and resource affinity (PVE 9 rules)', () => {
  it('node affinity with failback: the manager moves a service to its preferred node; with failback 0 it stays', async () => {
    await createVm(320)
    await createVm(321)
    await haOn('vm:320')
    await haOn('vm:321', { failback: '0' })
    await until(settled(320, 'pve1', 'started', 'running'))
    await until(settled(321, 'pve1', 'started', 'running'))
    await ok(
      call('POST', '/cluster/ha/rules', {
        rule: 'prefer-pve3',
        type: 'node-affinity',
        resources: 'vm:320,vm:321',
        nodes: 'pve3:2',
      }),
    )
    await until(settled(320, 'pve3', 'started', 'running'))
    await sleep(5 * LAG)
    expect((await resource(321))?.node).toBe('pve1')
    await ok(call('DELETE', '/cluster/ha/rules/prefer-pve3'))
  })

  it('positive affinity: the partner goes along (comigrated-resources); negative affinity blocks the node (blocking-resources)', async () => {
    // 320 joins 321 on pve1; 321 (failback 0) may stay where it is, its partner is going there
    await ok(
      call('POST', '/cluster/ha/rules', {
        rule: 'together',
        type: 'resource-affinity',
        resources: 'vm:320,vm:321',
        affinity: 'positive',
      }),
    )
    await until(settled(320, 'pve1', 'started', 'running'))
    expect((await resource(321))?.node).toBe('pve1')
    expect(await ok(call('POST', '/cluster/ha/resources/vm:320/migrate', { node: 'pve2' }))).toEqual({
      sid: 'vm:320',
      'requested-node': 'pve2',
      'comigrated-resources': ['vm:321'],
    })
    await until(settled(320, 'pve2', 'started', 'running'))
    await until(settled(321, 'pve2', 'started', 'running'))
    await ok(call('DELETE', '/cluster/ha/rules/together'))
    await ok(
      call('POST', '/cluster/ha/rules', {
        rule: 'apart',
        type: 'resource-affinity',
        resources: 'vm:300,vm:320',
        affinity: 'negative',
      }),
    )
    const mark = sim.control.haLog().length
    const answer = await ok<Record<string, unknown>>(
      call('POST', '/cluster/ha/resources/vm:300/migrate', { node: 'pve2' }),
    )
    expect(answer['blocking-resources']).toEqual([{ sid: 'vm:320', cause: 'resource-affinity' }])
    await until(async () => logSince(mark).some((l) => l.startsWith('err:')))
    expect(logSince(mark)).toContain(
      "err: crm command 'migrate vm:300 pve2' error - service 'vm:320' on node 'pve2' in negative affinity with service 'vm:300'",
    )
    expect((await resource(300))?.node).toBe('pve1')
    await ok(call('DELETE', '/cluster/ha/rules/apart'))
  })
})

describe('PVE::HA::NodeStatus fence_node and PVE::HA::Manager next_state_recovery: a node fails', () => {
  it('its HA guests on shared storage are fenced and recovered on another node; a guest outside HA stays down where it was', async () => {
    await createVm(330, { start: '1' })
    await createVm(331, { start: '1' })
    await haOn('vm:330')
    await until(settled(330, 'pve1', 'started', 'running'))
    const move = async (vmid: number) =>
      (await task('pve1', call('POST', `/nodes/pve1/qemu/${vmid}/migrate`, { target: 'pve3', online: '1' }))).exitstatus
    await ok(call('POST', '/cluster/ha/resources/vm:330/migrate', { node: 'pve3' }))
    await until(settled(330, 'pve3', 'started', 'running'))
    expect(await move(331)).toBe('OK')
    const mark = sim.control.haLog().length
    sim.control.failNode('pve3', { fenceDelayMs: 300, agentLockMs: 600 })
    await until(async () => {
      const r = await resource(330)
      return r?.node !== 'pve3' && r?.hastate === 'started' && r.status === 'running'
    })
    const r = await resource(330)
    expect(r).toMatchObject({ hastate: 'started', status: 'running' })
    expect(r?.node).not.toBe('pve3')
    expect(logSince(mark)).toEqual(
      expect.arrayContaining([
        "info: node 'pve3': state changed from 'online' => 'unknown'",
        "info: service 'vm:330': state changed from 'started' to 'fence'",
        "info: node 'pve3': state changed from 'unknown' => 'fence'",
        "info: fencing: acknowledged - got agent lock for node 'pve3'",
        "info: service 'vm:330': state changed from 'fence' to 'recovery'",
        `info: recover service 'vm:330' from fenced node 'pve3' to node '${String(r?.node)}'`,
      ]),
    )
    expect(sim.control.guest(331)).toMatchObject({ node: 'pve3', status: 'stopped' })
    sim.control.setNodeOnline('pve3', true)
    await sleep(3 * LAG)
    expect(sim.control.guest(331)).toMatchObject({ node: 'pve3', status: 'stopped' })
    expect((await resource(330))?.node).toBe(r?.node)
  })

  it('an HA guest with a local disk is recovered, but its start fails there: the disk stayed on the failed node', async () => {
    await createVm(340, { scsi0: 'local-lvm:1' })
    await haOn('vm:340', { max_relocate: '0', max_restart: '0' })
    await until(settled(340, 'pve1', 'started', 'running'))
    sim.control.failNode('pve1', { fenceDelayMs: 300, agentLockMs: 600 })
    try {
      await until(async () => (await resource(340))?.hastate === 'error')
      const starts = tasksOf('qmstart', 340)
      expect(starts.at(-1)?.exitstatus).toBe("volume 'local-lvm:vm-340-disk-0' does not exist")
      expect(starts.at(-1)?.node).not.toBe('pve1')
    } finally {
      sim.control.setNodeOnline('pve1', true)
    }
  })
})

suite.skipIf(!apidocForTests('8.4'))(
  'PVE 8.4: the same requests as qemu-server 8 and pve-ha-manager 4 answer them',
  () => {
    let old: Simulator
    const as = (method: string, path: string, params?: Record<string, string>) => {
      const f = params ? form(params) : undefined
      return raw(old, method, `/api2/json${path}`, {
        headers: { Authorization: old.token.header, ...(f?.headers ?? {}) },
        ...(f ? { body: f.body } : {}),
      })
    }
    beforeAll(async () => {
      old = await startSimulator({
        pveVersion: '8.4',
        authFailureDelayMs: 0,
        taskDurationMs: 10,
        haLagMs: LAG,
        log: () => {},
      })
    })
    afterAll(async () => {
      await old.close()
    })

    it('HA migrate answers null; the container precondition check does not exist yet; the VM one has no PVE 9 fields', async () => {
      const create = await as('POST', '/nodes/pve1/qemu', { vmid: '400', memory: '512' })
      await waitTask(old, { Authorization: old.token.header }, 'pve1', (create.json as { data: string }).data)
      expect((await as('POST', '/cluster/ha/resources', { sid: 'vm:400', state: 'stopped' })).status).toBe(200)
      expect((await as('POST', '/cluster/ha/resources/vm:400/migrate', { node: 'pve2' })).json).toEqual({ data: null })
      expect((await as('GET', '/nodes/pve1/lxc/400/migrate')).status).toBe(501)
      const pre = await as('GET', '/nodes/pve1/qemu/400/migrate')
      expect(Object.keys((pre.json as { data: Record<string, unknown> }).data).sort()).toEqual([
        'allowed_nodes',
        'local_disks',
        'local_resources',
        'mapped-resource-info',
        'mapped-resources',
        'not_allowed_nodes',
        'running',
      ])
    })
  },
)
