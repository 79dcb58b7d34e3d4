/**
 * execute() against the PVE simulator (in-process, behind the real client), for what only a truthful PVE shows:
 * HA-managed power changes (hastart/hastop end before the guest changes state), an LXC started after create
 * (pve-container forks a separate vzstart), LXC resize refusals before forking, and raw lxc.* config lines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { InProcessSimulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { simPve, waitsForHeldTask, type SimPve } from '../test-support/sim.js'
import { makeAction, makePlan } from '../testing/index.js'
import type { Action, PveRequest } from '../plan-types.js'
import { execute, type ExecuteOptions } from './execute.js'
import { plan } from '../plan/plan.js'
import { artifact, desired, GiB, inventory, lookup, lxc, policy } from '../fixtures.test.helpers.js'

let env: SimPve
let sim: InProcessSimulator
let pve: PveClient
let template: string
const HA_LAG = 300

const opts = (extra: Partial<ExecuteOptions> = {}): ExecuteOptions => ({
  reader: pve,
  taskPollIntervalMs: 20,
  lockRetryDelayMs: 0,
  confirmAttempts: 1,
  confirmDelayMs: 0,
  ...extra,
})
const action = (vmid: number, kind: 'VM' | 'LXC', requests: PveRequest[], type: Action['type'] = 'update'): Action =>
  makeAction({ type, kind, vmid, address: `${kind}/pve1/${vmid}`, requests })
const run = (a: Action, extra: Partial<ExecuteOptions> = {}) => execute(makePlan([a]), pve, opts(extra))

async function createVm(vmid: number): Promise<void> {
  await pve.waitTaskOk(await pve.createGuest('pve1', 'qemu', { vmid, memory: 512, scsi0: 'local-lvm:1' }), {
    pollIntervalMs: 20,
  })
}
async function createCt(vmid: number, extra: Record<string, string | number> = {}): Promise<void> {
  await pve.waitTaskOk(
    await pve.createGuest('pve1', 'lxc', { vmid, ostemplate: template, rootfs: 'local-lvm:2', ...extra }),
    { pollIntervalMs: 20 },
  )
}
async function haManage(sid: string, state: string): Promise<void> {
  await pve.request('POST', '/cluster/ha/resources', { params: { sid, state } })
}

beforeAll(async () => {
  env = simPve({
    taskDurationMs: 30,
    haLagMs: HA_LAG,
  })
  sim = env.sim
  pve = env.client
  template = sim.control.addVolume('pve1', 'local', {
    filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
    content: 'vztmpl',
  })
  sim.control.addVolume('pve1', 'local', { filename: 'debian-12.tar.zst', content: 'vztmpl' })
})
afterAll(async () => {
  await env?.close()
})

describe('14.5 HA-managed guests: a power change is done when the guest reaches the state', () => {
  it('a start of an HA VM returns once the VM runs, not when its hastart task ends', async () => {
    await createVm(500)
    await haManage('vm:500', 'stopped')
    const report = await run(action(500, 'VM', [{ call: 'start', node: 'pve1', guest: 'qemu', vmid: 500 }], 'start'))
    expect(report.results[0]).toMatchObject({ status: 'ok', tasks: [{ exitstatus: 'OK' }] })
    expect(report.results[0]!.tasks[0]!.upid).toContain(':hastart:')
    expect(sim.control.guest(500)?.status).toBe('running')
  })

  it('shutdown-then-update of an HA VM writes only once the VM is stopped, so the write is not left pending', async () => {
    const digest = sim.control.guest(500)!.digest
    const report = await run(
      makeAction({
        type: 'shutdown-then-update',
        kind: 'VM',
        vmid: 500,
        address: 'VM/pve1/500',
        disruption: 'reboot',
        digest,
        requests: [
          { call: 'shutdown', node: 'pve1', guest: 'qemu', vmid: 500, timeoutSeconds: 30, forceStop: false },
          { call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 500, params: { cores: 2 }, digest },
          { call: 'start', node: 'pve1', guest: 'qemu', vmid: 500 },
        ],
      }),
    )
    expect(report.results[0]!.status, report.results[0]!.error).toBe('ok')
    const g = sim.control.guest(500)!
    // cores is not hotpluggable: had the write landed while the VM still ran, it would sit in [PENDING]
    expect(g.config.cores).toBe('2')
    expect(g.pending).toEqual({})
    expect(g.status).toBe('running')
  })

  it('a stop that HA does not carry out in time is reported as a timeout, and nothing after it runs', async () => {
    sim.control.setHaLag(60_000)
    try {
      const report = await run(
        action(500, 'VM', [
          { call: 'stop', node: 'pve1', guest: 'qemu', vmid: 500 },
          { call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 500, params: { cores: 3 } },
        ]),
        { taskTimeoutMs: 500 },
      )
      expect(report.results[0]!.status).toBe('failed')
      expect(report.results[0]!.error).toMatch(
        /^stop failed: qemu 500 is HA managed and still running after \d+ s \(HA state started\); not waiting longer/,
      )
      expect(sim.control.guest(500)?.config.cores).toBe('2')
    } finally {
      sim.control.setHaLag(HA_LAG)
    }
  })

  it('a start HA cannot carry out is reported from the HA state, not waited out, on the node HA relocated the guest to', async () => {
    await createVm(501)
    await haManage('vm:501', 'stopped')
    sim.control.setTaskBehaviour('qmstart', { fail: 'start failed: QEMU exited with code 1' })
    try {
      const report = await run(
        action(501, 'VM', [{ call: 'start', node: 'pve1', guest: 'qemu', vmid: 501 }], 'start'),
        { taskTimeoutMs: 30_000 },
      )
      expect(report.results[0]!.status).toBe('failed')
      expect(report.results[0]!.error).toMatch(
        /^start failed: HA reports qemu 501 in state error on pve\d, where it relocated the guest/,
      )
    } finally {
      sim.control.setTaskBehaviour('qmstart', null)
    }
  })

  it('pve-ha-manager update_crm_commands: a start whose requested state turns stopped while it waits fails at once, with the reason', async () => {
    await createVm(503)
    await haManage('vm:503', 'stopped')
    // a stop an earlier (killed) apply queued runs after this start and writes `state: stopped`; here an admin does
    let reset = false
    const reader = new Proxy(pve, {
      get(target, key) {
        if (key !== 'guestStatus') {
          const value = Reflect.get(target, key, target) as unknown
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
        }
        return async (...args: Parameters<PveClient['guestStatus']>) => {
          if (!reset) {
            reset = true
            await pve.request('PUT', '/cluster/ha/resources/vm:503', { params: { state: 'stopped' } })
          }
          return target.guestStatus(...args)
        }
      },
    })
    const started = Date.now()
    const report = await run(action(503, 'VM', [{ call: 'start', node: 'pve1', guest: 'qemu', vmid: 503 }], 'start'), {
      reader,
      taskTimeoutMs: 60_000,
    })
    expect(report.results[0]!.status).toBe('failed')
    expect(report.results[0]!.error).toMatch(
      /^start failed: qemu 503 is still stopped, and HA no longer requests vm:503 running: its requested state is now "stopped"/,
    )
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(sim.control.guest(503)?.status).toBe('stopped')
  })

  it('next_state_error: a service in error leaves it only through a disabled request, then starts again', async () => {
    // 501 is in error since its start failed above; PVE's ERROR RECOVERY: fix the cause, disable, request again
    // HA relocated it after the failed starts (max_relocate 1): it is on the other node now
    const node = sim.control.guest(501)!.node
    expect((await pve.guestStatus(node, 'qemu', 501)).haState).toBe('error')
    const write = (state: string, power: 'running' | 'stopped'): PveRequest => ({
      call: 'haWrite',
      object: 'resources',
      method: 'PUT',
      id: 'vm:501',
      params: { state },
      guest: { node, guest: 'qemu', vmid: 501, power },
    })
    const on = (request: PveRequest): Action =>
      makeAction({ type: 'update', kind: 'HA', vmid: 501, node, address: `VM/${node}/501`, requests: [request] })
    const disabled = await run(on(write('disabled', 'stopped')))
    expect(disabled.results[0]!.status, disabled.results[0]!.error).toBe('ok')
    // the write is done once the manager agrees: error -> stopped
    expect((await pve.guestStatus(node, 'qemu', 501)).haState).toBe('stopped')
    const again = await run(on(write('started', 'running')), { taskTimeoutMs: 30_000 })
    expect(again.results[0]!.status, again.results[0]!.error).toBe('ok')
    expect(sim.control.guest(501)?.status).toBe('running')
  })

  it('an HA container stops through hastop and the action ends once it is stopped', async () => {
    await createCt(502)
    await haManage('ct:502', 'started')
    for (let i = 0; i < 100 && sim.control.guest(502)?.status !== 'running'; i++)
      await new Promise((r) => setTimeout(r, 20))
    expect(sim.control.guest(502)?.status).toBe('running')
    const report = await run(
      action(
        502,
        'LXC',
        [{ call: 'shutdown', node: 'pve1', guest: 'lxc', vmid: 502, timeoutSeconds: 30, forceStop: false }],
        'stop',
      ),
    )
    expect(report.results[0]!.status, report.results[0]!.error).toBe('ok')
    expect(sim.control.guest(502)?.status).toBe('stopped')
  })
})

describe('14.6 start after create: an LXC is started by a task that is waited on', () => {
  // the create action exactly as plan() builds it for a started LXC (its CTTemplate already downloaded)
  const createStarted = (vmid: number): Action => {
    const p = plan(
      desired(
        artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'),
        lxc(`ct-${vmid}`, vmid, { root: { storage: 'local-lvm', size: 2 * GiB } }),
      ),
      inventory(),
      policy(),
      { secrets: lookup },
    )
    const create = p.actions.find((a) => a.kind === 'LXC' && a.type === 'create')!
    return { ...create, dependsOn: [], requires: [] }
  }

  it('the container runs when the action ends', async () => {
    const report = await waitsForHeldTask(sim, 'vzstart', () => run(createStarted(510)))
    expect(report.results[0]!.status, report.results[0]!.error).toBe('ok')
    expect(sim.control.guest(510)?.status).toBe('running')
  })

  it("the start's own error is reported", async () => {
    sim.control.setTaskBehaviour('vzstart', { fail: "startup for container '511' failed" })
    try {
      const report = await run(createStarted(511))
      expect(report.results[0]).toMatchObject({
        status: 'failed',
        error: "start failed: startup for container '511' failed",
      })
    } finally {
      sim.control.setTaskBehaviour('vzstart', null)
    }
  })
})

describe('14.10 decoding never crashes on keys PVE returns', () => {
  it('an update of an LXC with raw lxc.* lines reads its config (the create-form guard) and writes', async () => {
    await createCt(520)
    sim.control.setRawLxc(520, [
      ['lxc.cgroup2.devices.allow', 'c 10:200 rwm'],
      ['lxc.mount.entry', '/dev/net dev/net none bind,create=dir'],
    ])
    const digest = sim.control.guest(520)!.digest
    const report = await run(
      action(520, 'LXC', [
        {
          call: 'updateConfig',
          node: 'pve1',
          guest: 'lxc',
          vmid: 520,
          params: { mp0: 'local-lvm:1,mp=/data' },
          digest,
        },
      ]),
    )
    expect(report.results[0]!.status, report.results[0]!.error).toBe('ok')
    expect(sim.control.guest(520)?.config.mp0).toMatch(/^local-lvm:vm-520-disk-1,mp=\/data,size=1G$/)
    expect((await pve.guestConfig('pve1', 'lxc', 520)).values.lxc).toBe(
      'lxc.cgroup2.devices.allow: c 10:200 rwm\nlxc.mount.entry: /dev/net dev/net none bind,create=dir',
    )
  })
})

describe('14.11 LXC resize: no equal-size resize; PVE refusals explained', () => {
  const resize = (vmid: number, size: string): Action =>
    action(vmid, 'LXC', [{ call: 'resizeDisk', node: 'pve1', guest: 'lxc', vmid, disk: 'rootfs', size }], 'resize')

  it('a disk already at the size is not resized again (PVE would answer 500)', async () => {
    await createCt(530)
    sim.control.settle()
    const first = await run(resize(530, '3G'))
    expect(first.results[0]!.status, first.results[0]!.error).toBe('ok')
    const writes = sim.stats.writes()
    const again = await run(resize(530, '3G'))
    expect(again.results[0]).toMatchObject({ status: 'ok', tasks: [] })
    expect(sim.stats.writes()).toBe(writes)
  })

  it("PVE's `disk is already at specified size` (config out of step with the volume) names the fix", async () => {
    await createCt(531)
    // an admin grew the volume outside PVE's config: the config still says 2G
    sim.control.driftSet(531, 'rootfs', 'local-lvm:vm-531-disk-0,size=1G')
    const report = await run(resize(531, '2G'))
    expect(report.results[0]!.status).toBe('failed')
    expect(report.results[0]!.error).toBe(
      'resize failed: PUT /nodes/{node}/lxc/{vmid}/resize: 500 disk is already at specified size; PVE says the volume is already 2G: the size= of rootfs in the config of CT 531 does not match its volume; run `pct rescan --vmid 531` on pve1, then re-run',
    )
  })
})
