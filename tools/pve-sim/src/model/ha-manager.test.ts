/**
 * The HA manager on the simulator's clock, each test named after the pve-ha-manager function it follows:
 * PVE::HA::Manager next_state_stopped / next_state_started / next_state_request_stop / next_state_error, the LRM's
 * handle_service_exitcode (max_restart) and exec_resource_agent, PVE::API2::HA::Resources::check_service_state, and
 * manage's update_crm_commands with change_service_state for a motion command that arrives between states.
 */
import { describe, expect, it } from 'vitest'
import { makeSim, type Sim } from '../test-support/sim.js'

const LAG = 1000
const TASK = 1000

async function sim(...vmids: number[]): Promise<Sim> {
  const s = makeSim({ taskDurationMs: TASK })
  s.sim.setHaLag(LAG)
  for (const vmid of vmids) await s.run('POST', '/nodes/pve1/qemu', { vmid, memory: 512 })
  return s
}

/** let the clock run in steps of 100 ms (every request settles due tasks and HA rounds) */
function runFor(s: Sim, ms: number): void {
  for (let t = 0; t < ms; t += 100) {
    s.advance(100)
    s.sim.settle()
  }
}

const haState = async (s: Sim, vmid: number): Promise<unknown> =>
  ((await s.call('GET', `/nodes/pve1/qemu/${vmid}/status/current`)) as { ha: { state?: string } }).ha.state
const power = (s: Sim, vmid: number): string | undefined => s.sim.guest(vmid)?.status
const configured = async (s: Sim, sid: string): Promise<unknown> =>
  ((await s.call('GET', `/cluster/ha/resources/${sid}`)) as { state?: string }).state
const tasksOf = (s: Sim, type: string, vmid: number) =>
  s.sim.tasks().filter((t) => t.type === type && t.id === String(vmid))

describe('PVE::HA::Manager next_state_stopped', () => {
  it('ignores a stop command for a stopped service ("service already stopped"): the configured state stays', async () => {
    const s = await sim(100)
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', state: 'stopped' })
    runFor(s, 2 * LAG)
    expect(await haState(s, 100)).toBe('stopped')
    // a restart of a guest that is already stopped: the stop is queued, then the start sets `started`
    await s.call('POST', '/nodes/pve1/qemu/100/status/stop')
    await s.call('POST', '/nodes/pve1/qemu/100/status/start')
    runFor(s, LAG + TASK + LAG + 200)
    expect(await configured(s, 'vm:100')).toBe('started')
    expect(power(s, 100)).toBe('running')
    expect(await haState(s, 100)).toBe('started')
    expect(s.sim.haLog()).toContain("info: ignore service 'vm:100' stop request - service already stopped")
  })

  it('a stop command for a stopped service leaves a stopped config alone (no write, same digest)', async () => {
    const s = await sim(100)
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', state: 'stopped' })
    runFor(s, 2 * LAG)
    const { digest } = (await s.call('GET', '/cluster/ha/resources/vm:100')) as { digest: string }
    expect((await s.run('POST', '/nodes/pve1/qemu/100/status/stop')).exitstatus).toBe('OK')
    runFor(s, 2 * LAG)
    expect(((await s.call('GET', '/cluster/ha/resources/vm:100')) as { digest: string }).digest).toBe(digest)
    expect(tasksOf(s, 'qmstop', 100)).toEqual([])
  })
})

describe('PVE::HA::Manager next_state_started', () => {
  it('a stop command for a started service asks for the stop and writes `state stopped` into the config', async () => {
    const s = await sim(100)
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', state: 'started' })
    runFor(s, LAG + TASK + LAG)
    expect([power(s, 100), await haState(s, 100)]).toEqual(['running', 'started'])
    await s.call('POST', '/nodes/pve1/qemu/100/status/shutdown', { timeout: 30 })
    expect(await configured(s, 'vm:100')).toBe('started')
    runFor(s, LAG + 100)
    expect([await configured(s, 'vm:100'), await haState(s, 100)]).toEqual(['stopped', 'request_stop'])
    runFor(s, TASK + LAG)
    expect([power(s, 100), await haState(s, 100)]).toEqual(['stopped', 'stopped'])
    expect(tasksOf(s, 'qmshutdown', 100)).toHaveLength(1)
  })

  it('restarts a started service whose guest stopped out of band (the LRM runs `started` again)', async () => {
    const s = await sim(100)
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100' })
    runFor(s, LAG + TASK + LAG)
    s.sim.driftPower(100, 'stopped')
    runFor(s, LAG + TASK + 100)
    expect(power(s, 100)).toBe('running')
    expect(tasksOf(s, 'qmstart', 100)).toHaveLength(2)
  })

  it('a start that keeps failing: max_restart retries per node, relocated once to the next node (select_service_node try-next), then error (4 starts by default)', async () => {
    const s = await sim(100)
    s.sim.setTaskBehaviour('qmstart', { fail: 'start failed: QEMU exited with code 1' })
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100' })
    runFor(s, 12 * (LAG + TASK))
    expect(s.sim.tasks().map((t) => `${t.type} ${t.node}`)).toEqual([
      'qmcreate pve1',
      'qmstart pve1',
      'qmstart pve1',
      'qmigrate pve1',
      'qmstart pve2',
      'qmstart pve2',
    ])
    expect(s.sim.guest(100)).toMatchObject({ node: 'pve2', status: 'stopped' })
    expect(((await s.call('GET', '/nodes/pve2/qemu/100/status/current')) as { ha: { state: string } }).ha.state).toBe(
      'error',
    )
    expect(s.sim.haLog().filter((l) => /retry|retries|relocat|recovery|Tried|migrate/.test(l))).toEqual([
      "warning: restart policy: retry number 1 for service 'vm:100'",
      'err: unable to start service vm:100 on local node after 1 retries',
      "warning: starting service vm:100 on node 'pve1' failed, relocating service.",
      "info: migrate service 'vm:100' to node 'pve2' (running)",
      "info: service 'vm:100': state changed from 'started' to 'migrate'  (node = pve1, target = pve2)",
      "info: service 'vm:100': state changed from 'migrate' to 'started'  (node = pve2)",
      "warning: restart policy: retry number 1 for service 'vm:100'",
      'err: unable to start service vm:100 on local node after 1 retries',
      'err: recovery policy for service vm:100 failed, entering error state. Failed nodes: pve1, pve2',
    ])
  })

  it('on a single node a relocation retries the start there (select_service_node finds no next node)', async () => {
    const s = makeSim({ taskDurationMs: TASK, nodes: ['pve1'] })
    s.sim.setHaLag(LAG)
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512 })
    s.sim.setTaskBehaviour('qmstart', { fail: 'start failed: QEMU exited with code 1' })
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100' })
    runFor(s, 10 * (LAG + TASK))
    expect(tasksOf(s, 'qmstart', 100)).toHaveLength(4)
    expect(await haState(s, 100)).toBe('error')
    expect(s.sim.haLog().filter((l) => /Tried|Failed nodes/.test(l))).toEqual([
      "warning: Start Error Recovery: Tried all available nodes for service 'vm:100', retry start on current node. Tried nodes: pve1",
      'err: recovery policy for service vm:100 failed, entering error state. Failed nodes: pve1, pve1',
    ])
  })

  it('max_restart 0 and max_relocate 0: the first failed start is the last', async () => {
    const s = await sim(100)
    s.sim.setTaskBehaviour('qmstart', { fail: 'start failed' })
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', max_restart: 0, max_relocate: 0 })
    runFor(s, 10 * (LAG + TASK))
    expect(tasksOf(s, 'qmstart', 100)).toHaveLength(1)
    expect(await haState(s, 100)).toBe('error')
  })

  it('max_restart 2, max_relocate 0: three starts on the node before error', async () => {
    const s = await sim(100)
    s.sim.setTaskBehaviour('qmstart', { fail: 'start failed' })
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', max_restart: 2, max_relocate: 0 })
    runFor(s, 10 * (LAG + TASK))
    expect(tasksOf(s, 'qmstart', 100)).toHaveLength(3)
    expect(await haState(s, 100)).toBe('error')
  })

  it('a start that works on a retry leaves the service started', async () => {
    const s = await sim(100)
    s.sim.setTaskBehaviour('qmstart', { fail: 'start failed' })
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100' })
    runFor(s, LAG + TASK + 100)
    expect(tasksOf(s, 'qmstart', 100)).toHaveLength(1)
    s.sim.setTaskBehaviour('qmstart', null)
    runFor(s, 3 * (LAG + TASK))
    expect([power(s, 100), await haState(s, 100)]).toEqual(['running', 'started'])
    expect(tasksOf(s, 'qmstart', 100)).toHaveLength(2)
  })

  it('a start call that dies before its task (exit code 255) is an unrecoverable error at once', async () => {
    const s = makeSim({ taskDurationMs: TASK })
    s.sim.setHaLag(LAG)
    const tmpl = s.sim.addVolume('pve1', 'local', {
      filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
      content: 'vztmpl',
    })
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 200, ostemplate: tmpl, rootfs: 'local-lvm:2' })
    s.sim.setLock(200, 'backup')
    await s.call('POST', '/cluster/ha/resources', { sid: 'ct:200' })
    runFor(s, 5 * (LAG + TASK))
    expect(s.sim.tasks().filter((t) => t.type === 'vzstart')).toEqual([])
    const ct = (await s.call('GET', '/nodes/pve1/lxc/200/status/current')) as { ha: { state: string } }
    expect(ct.ha.state).toBe('error')
  })
})

describe('the HA cycle (setHaLag)', () => {
  it('a new cycle length holds from now on: a round already scheduled moves to one new cycle away', async () => {
    const s = await sim(100)
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', state: 'started' })
    s.sim.setHaLag(60_000)
    runFor(s, 30_000)
    expect(tasksOf(s, 'qmstart', 100)).toEqual([])
    runFor(s, 30_000 + TASK)
    expect(power(s, 100)).toBe('running')
  })
})

describe('PVE::HA::LRM of an offline node', () => {
  it('runs no resource agent while its node is offline, and picks the service up when the node is back', async () => {
    const s = await sim(100)
    s.sim.setNodeOnline('pve1', false)
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', state: 'started' })
    runFor(s, 5 * (LAG + TASK))
    expect([power(s, 100), tasksOf(s, 'qmstart', 100)]).toEqual(['stopped', []])
    s.sim.setNodeOnline('pve1', true)
    runFor(s, LAG + TASK + LAG)
    expect([power(s, 100), await haState(s, 100)]).toEqual(['running', 'started'])
  })
})

describe('PVE::HA::Manager next_state_request_stop', () => {
  it('a container shutdown that times out (PVECT shutdown has no forceStop) puts the service in error', async () => {
    const s = makeSim({ taskDurationMs: TASK })
    s.sim.setHaLag(LAG)
    const tmpl = s.sim.addVolume('pve1', 'local', {
      filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
      content: 'vztmpl',
    })
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 200, ostemplate: tmpl, rootfs: 'local-lvm:2' })
    await s.call('POST', '/cluster/ha/resources', { sid: 'ct:200' })
    runFor(s, LAG + TASK + LAG)
    s.sim.setIgnoresShutdown(200, true)
    await s.call('POST', '/nodes/pve1/lxc/200/status/shutdown', { timeout: 5 })
    runFor(s, LAG + 5000 + LAG + 200)
    const ct = (await s.call('GET', '/nodes/pve1/lxc/200/status/current')) as { status: string; ha: { state: string } }
    expect([ct.status, ct.ha.state]).toEqual(['running', 'error'])
  })
})

describe('PVE::HA::Manager next_state_error and PVE::API2::HA::Resources::check_service_state', () => {
  async function inError(): Promise<Sim> {
    const s = await sim(100)
    s.sim.setTaskBehaviour('qmstart', { fail: 'start failed' })
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', max_restart: 0, max_relocate: 0 })
    runFor(s, 3 * (LAG + TASK))
    expect(await haState(s, 100)).toBe('error')
    s.sim.setTaskBehaviour('qmstart', null)
    return s
  }

  it('refuses every change but `disabled`, an update without `state` included', async () => {
    const s = await inError()
    for (const params of [{ state: 'started' }, { state: 'stopped' }, { state: 'ignored' }, { comment: 'x' }])
      expect((await s.error('PUT', '/cluster/ha/resources/vm:100', params)).message).toBe(
        "service 'vm:100' in error state, must be disabled and fixed first",
      )
  })

  it('a start request answers a hastart task that fails as `ha-manager set` does', async () => {
    const s = await inError()
    const st = await s.run('POST', '/nodes/pve1/qemu/100/status/start')
    expect(st.exitstatus).toBe("command 'ha-manager set vm:100 --state started' failed: exit code 255")
    expect(st.log).toEqual([
      'Requesting HA start for VM 100',
      "service 'vm:100' in error state, must be disabled and fixed first",
      "TASK ERROR: command 'ha-manager set vm:100 --state started' failed: exit code 255",
    ])
    const stop = await s.run('POST', '/nodes/pve1/qemu/100/status/stop')
    expect(stop.exitstatus).toBe("command 'ha-manager crm-command stop vm:100 0' failed: exit code 255")
  })

  it('`disabled` takes it to stopped, then `started` starts it again', async () => {
    const s = await inError()
    await s.call('PUT', '/cluster/ha/resources/vm:100', { state: 'disabled' })
    runFor(s, LAG + 100)
    expect(await haState(s, 100)).toBe('stopped')
    await s.call('PUT', '/cluster/ha/resources/vm:100', { state: 'started' })
    runFor(s, LAG + TASK + LAG + 100)
    expect([power(s, 100), await haState(s, 100)]).toEqual(['running', 'started'])
  })
})

describe('PVE::HA::NodeStatus fence_node and PVE::HA::Manager next_state_recovery (control failNode)', () => {
  it('a failed node is fenced once the fence delay passed, its service recovered once the agent lock expired', async () => {
    const s = makeSim({ taskDurationMs: TASK })
    s.sim.setHaLag(LAG)
    await s.call('POST', '/storage', {
      storage: 'nas',
      type: 'nfs',
      server: '10.0.0.9',
      export: '/vms',
      content: 'images',
    })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512, scsi0: 'nas:1' })
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100' })
    runFor(s, 3 * (LAG + TASK))
    expect(power(s, 100)).toBe('running')
    const mark = s.sim.haLog().length
    s.sim.failNode('pve1', { fenceDelayMs: 10_000, agentLockMs: 20_000 })
    expect(power(s, 100)).toBe('stopped')
    runFor(s, 9_000)
    expect(s.sim.haLog().slice(mark)).toEqual(["info: node 'pve1': state changed from 'online' => 'unknown'"])
    runFor(s, 2_000)
    expect(s.sim.haLog().slice(mark + 1)).toEqual([
      "info: service 'vm:100': state changed from 'started' to 'fence'",
      "info: node 'pve1': state changed from 'unknown' => 'fence'",
    ])
    expect(s.sim.guest(100)?.node).toBe('pve1')
    runFor(s, 8_000)
    expect(s.sim.guest(100)?.node).toBe('pve1')
    runFor(s, 1_000 + LAG + TASK + 100)
    expect(s.sim.haLog().slice(mark + 3)).toEqual([
      "info: fencing: acknowledged - got agent lock for node 'pve1'",
      "info: node 'pve1': state changed from 'fence' => 'unknown'",
      "info: service 'vm:100': state changed from 'fence' to 'recovery'",
      "info: recover service 'vm:100' from fenced node 'pve1' to node 'pve2'",
      "info: service 'vm:100': state changed from 'recovery' to 'started'  (node = pve2)",
      'info: starting service vm:100',
      'info: service status vm:100 started',
    ])
    expect(s.sim.guest(100)).toMatchObject({ node: 'pve2', status: 'running' })
  })

  it('a node that is only unreachable (setNodeOnline) is never fenced', async () => {
    const s = await sim(100)
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100' })
    runFor(s, 3 * (LAG + TASK))
    s.sim.setNodeOnline('pve1', false)
    runFor(s, 300_000)
    expect(s.sim.haLog().filter((l) => /fence|recover/.test(l))).toEqual([])
    expect(s.sim.guest(100)?.node).toBe('pve1')
  })
})

/**
 * A motion command that reaches the CRM while the service is between states. PVE::HA::Manager::manage reads the
 * queued commands (update_crm_commands) before the state machine runs, and change_service_state keeps only the
 * node and the failed nodes of the old entry: a command read for a service that changes state in the same round
 * is dropped, and one whose target is the node the manager still has the service on is ignored. The hamigrate
 * task only queues the command (`ha-manager migrate`), so it ends OK either way.
 */
describe('PVE::HA::Manager update_crm_commands, change_service_state: a motion command between states', () => {
  const CT = 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst'
  /** one CRM cycle long enough that the CRM runs no round while the test sets up the race */
  const HOLD = 600_000
  const shared = (s: Sim) =>
    s.call('POST', '/storage', {
      storage: 'nas',
      type: 'nfs',
      server: '10.0.0.9',
      export: '/vms',
      content: 'images,rootdir',
    })
  const haOf = async (s: Sim, type: 'qemu' | 'lxc', vmid: number): Promise<unknown> =>
    (
      (await s.call('GET', `/nodes/${String(s.sim.guest(vmid)?.node)}/${type}/${vmid}/status/current`)) as {
        ha: { state?: string }
      }
    ).ha.state
  /** run the clock in 100 ms steps until the condition holds (at most a minute) */
  const runUntil = async (s: Sim, done: () => Promise<boolean> | boolean): Promise<void> => {
    for (let t = 0; !(await done()); t += 100) {
      if (t > 60_000) throw new Error(`condition not reached; HA log:\n${s.sim.haLog().join('\n')}`)
      runFor(s, 100)
    }
  }
  const taskStatus = (s: Sim, upid: string) => s.sim.tasks().find((t) => t.upid === upid)?.exitstatus

  it('migrate_vm back while the CRM still has the service in `migrate` (its config already on the target): ignored as "already on target node", the VM stays; once `started` there, the same request moves it back', async () => {
    const s = await sim()
    await shared(s)
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512, scsi0: 'nas:1' })
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100' })
    await runUntil(s, async () => power(s, 100) === 'running' && (await haOf(s, 'qemu', 100)) === 'started')
    await s.call('POST', '/nodes/pve1/qemu/100/migrate', { target: 'pve2', online: 1 })
    // the LRM's migration has moved the config; the CRM has not read the result yet
    await runUntil(s, () => s.sim.guest(100)?.node === 'pve2')
    s.sim.setHaLag(HOLD)
    expect(await haOf(s, 'qemu', 100)).toBe('migrate')
    const mark = s.sim.haLog().length
    const back = (await s.call('POST', '/nodes/pve2/qemu/100/migrate', { target: 'pve1', online: 1 })) as string
    runFor(s, 100)
    expect(taskStatus(s, back)).toBe('OK')
    s.sim.setHaLag(LAG)
    runFor(s, 3 * (LAG + TASK))
    expect(s.sim.haLog().slice(mark)).toEqual([
      'info: ignore crm command - service already on target node: migrate vm:100 pve1',
      "info: service 'vm:100': state changed from 'migrate' to 'started'  (node = pve2)",
    ])
    expect([s.sim.guest(100)?.node, power(s, 100), await haOf(s, 'qemu', 100)]).toEqual(['pve2', 'running', 'started'])
    // next_state_started: the same request, now that the CRM has the service started on pve2, moves it
    await s.call('POST', '/nodes/pve2/qemu/100/migrate', { target: 'pve1', online: 1 })
    await runUntil(s, async () => s.sim.guest(100)?.node === 'pve1' && (await haOf(s, 'qemu', 100)) === 'started')
    expect(s.sim.haLog().slice(mark + 2, mark + 5)).toEqual([
      'info: got crm command: migrate vm:100 pve1',
      "info: migrate service 'vm:100' to node 'pve1'",
      "info: service 'vm:100': state changed from 'started' to 'migrate'  (node = pve2, target = pve1)",
    ])
    expect(power(s, 100)).toBe('running')
  })

  for (const state of ['stopped', 'disabled'] as const) {
    for (const kind of ['migrate', 'relocate'] as const) {
      it(`a stopped container (config \`${state}\`), ${kind} before the CRM has it \`stopped\`: the command is read in \`request_stop\` and dropped when the stop is confirmed; in \`stopped\` (next_state_stopped) it moves`, async () => {
        const s = await sim()
        await shared(s)
        s.sim.addVolume('pve1', 'local', { filename: 'debian-12-standard_12.7-1_amd64.tar.zst', content: 'vztmpl' })
        await s.run('POST', '/nodes/pve1/lxc', { vmid: 310, ostemplate: CT, rootfs: 'nas:1' })
        const request = async (target: string): Promise<void> => {
          const node = String(s.sim.guest(310)?.node)
          if (kind === 'relocate') {
            await s.call('POST', '/cluster/ha/resources/ct:310/relocate', { node: target })
            return
          }
          const upid = (await s.call('POST', `/nodes/${node}/lxc/310/migrate`, { target })) as string
          runFor(s, 100)
          expect(taskStatus(s, upid)).toBe('OK')
        }
        await s.call('POST', '/cluster/ha/resources', { sid: 'ct:310', state })
        // the command is queued before the CRM's first round: that round adds the service and reads it
        s.sim.setHaLag(HOLD)
        await request('pve2')
        s.sim.setHaLag(LAG)
        runFor(s, 3 * (LAG + TASK))
        expect(s.sim.haLog()).toEqual([
          "info: adding new service 'ct:310' on node 'pve1'",
          `info: got crm command: ${kind} ct:310 pve2`,
          "info: service 'ct:310': state changed from 'request_stop' to 'stopped'",
        ])
        expect([s.sim.guest(310)?.node, await haOf(s, 'lxc', 310)]).toEqual(['pve1', 'stopped'])
        expect(tasksOf(s, 'vzmigrate', 310)).toEqual([])
        // the service is `stopped` now: next_state_stopped hands the command to `${kind}`, PVECT migrate moves it
        const mark = s.sim.haLog().length
        await request('pve2')
        await runUntil(s, async () => s.sim.guest(310)?.node === 'pve2' && (await haOf(s, 'lxc', 310)) === 'stopped')
        expect(s.sim.haLog().slice(mark)).toEqual([
          `info: got crm command: ${kind} ct:310 pve2`,
          `info: service 'ct:310': state changed from 'stopped' to '${kind}'  (node = pve1, target = pve2)`,
          `info: service 'ct:310': state changed from '${kind}' to 'request_stop'  (node = pve2)`,
          "info: service 'ct:310': state changed from 'request_stop' to 'stopped'",
        ])
        expect(tasksOf(s, 'vzmigrate', 310).map((t) => [t.node, t.exitstatus])).toEqual([['pve1', 'OK']])
        expect(power(s, 310)).toBe('stopped')
      })
    }
  }
})
