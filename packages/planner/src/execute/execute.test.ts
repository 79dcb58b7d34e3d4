/**
 * execute() against the simulator's model run in-process behind the real client (test-support/sim.ts): tasks,
 * refusals, locks, pending values and power states are PVE's. Where a test is about the writer or reader port
 * itself (a writer that answers OK but changes nothing, slow task waits, a fake clock), it wraps the client.
 */
import { afterEach, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { GuestType, PveParams, TaskRef } from '@proxops/pve-client/wire'
import type { PveWriter } from '../ports.js'
import { simPve, waitsForHeldTask, type SimPve } from '../test-support/sim.js'
import { makeAction, makePlan } from '../testing/index.js'
import type { Action, PlanParams } from '../plan-types.js'
import { execute, type ExecuteOptions, type ProgressEvent } from './execute.js'

const open: SimPve[] = []
afterEach(async () => {
  for (const p of open.splice(0)) await p.close()
})
function pve(options: Parameters<typeof simPve>[0] = {}): SimPve {
  const p = simPve({ taskDurationMs: 2, ...options })
  open.push(p)
  return p
}

const fast = (p: SimPve, extra: Partial<ExecuteOptions> = {}): ExecuteOptions => ({
  reader: p.client,
  taskPollIntervalMs: 2,
  lockRetryDelayMs: 0,
  confirmDelayMs: 0,
  ...extra,
})

/** a guest made through PVE's API, optionally started; the request log starts after it */
async function add(
  p: SimPve,
  vmid: number,
  o: { type?: GuestType; node?: string; params?: PveParams; running?: boolean } = {},
): Promise<void> {
  const type = o.type ?? 'qemu'
  const node = o.node ?? 'pve1'
  const base: PveParams =
    type === 'lxc'
      ? {
          ostemplate: p.sim.control.addVolume(node, 'local', { filename: 'debian-12.tar.zst', content: 'vztmpl' }),
          rootfs: 'local-lvm:2',
        }
      : { memory: 512 }
  await wait(p, await p.client.createGuest(node, type, { vmid, ...base, ...o.params }))
  if (o.running) await wait(p, await p.client.start(node, type, vmid))
  p.sim.stats.reset()
}
async function wait(p: SimPve, task: TaskRef | null): Promise<void> {
  if (task) await p.client.waitTaskOk(task, { pollIntervalMs: 2 })
}
/** the write requests PVE received, as `METHOD /path` */
const writes = (p: SimPve): string[] => p.requests().filter((r) => !r.startsWith('GET '))
const config = (p: SimPve, vmid: number): Record<string, string> | undefined => p.sim.control.guest(vmid)?.config

/** the writer with some methods replaced (a port behaviour, not a PVE one); the rest are the client's */
function writer(p: SimPve, over: Partial<PveWriter>): PveWriter {
  return new Proxy(p.client, {
    get(target, prop) {
      if (Object.hasOwn(over, prop)) return over[prop as keyof PveWriter]
      const value = Reflect.get(target, prop, target) as unknown
      // the client's methods use its private fields: call them on the client, not on the proxy
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}

const createVm = (vmid: number, node = 'pve1', extra: PveParams = {}): Action =>
  makeAction({
    type: 'create',
    address: `VM/${node}/${vmid}`,
    name: `vm${vmid}`,
    node,
    vmid,
    requests: [
      {
        call: 'createGuest',
        node,
        guest: 'qemu',
        params: { vmid, name: `vm${vmid}`, memory: 2048, scsi0: 'local-lvm:8', tags: 'proxops', ...extra },
      },
    ],
  })

describe('execute', () => {
  it('creates a guest, awaits its task and confirms it by reading it back', async () => {
    const p = pve()
    const report = await execute(makePlan([createVm(100, 'pve1', { start: 1 })]), p.client, fast(p))
    expect(report.results).toMatchObject([{ id: 'VM/pve1/100#create', status: 'ok', tasks: [{ exitstatus: 'OK' }] }])
    expect(report.complete).toBe(true)
    expect(p.sim.control.guest(100)).toMatchObject({
      status: 'running',
      config: { name: 'vm100', scsi0: 'local-lvm:vm-100-disk-0,size=8G' },
    })
    // one write; the read-back reads the config (through /pending) and the status
    expect(writes(p)).toEqual(['POST /nodes/pve1/qemu'])
    const reads = p.requests().filter((r) => r.startsWith('GET ') && !r.includes('/tasks/'))
    expect(reads).toEqual(['GET /nodes/pve1/qemu/100/pending', 'GET /nodes/pve1/qemu/100/status/current'])
  })

  it('sends the digest the update was planned against; a concurrent edit fails that action only', async () => {
    const p = pve()
    await add(p, 100, { params: { name: 'a', memory: 1024 } })
    await add(p, 101, { params: { name: 'b', memory: 1024 } })
    const planned100 = p.sim.control.guest(100)!.digest
    const planned101 = p.sim.control.guest(101)!.digest
    p.sim.control.driftSet(100, 'memory', '512') // out-of-band edit after plan
    const update = (vmid: number, digest: string): Action =>
      makeAction({
        type: 'update',
        vmid,
        digest,
        requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid, params: { memory: 4096 }, digest }],
      })
    const report = await execute(makePlan([update(100, planned100), update(101, planned101)]), p.client, fast(p))
    expect(report.results.map((r) => r.status)).toEqual(['failed', 'ok'])
    expect(report.results[0]!.error).toMatch(/^update failed: .*checksum mismatch \(file change by other user\?\)/)
    expect(config(p, 100)!.memory).toBe('512')
    expect(config(p, 101)!.memory).toBe('4096')
    expect(report.complete).toBe(false)
  })

  it("reports a failed task with PVE's exit status and defers its dependants (E2EDeferralWhenPrerequisiteFails)", async () => {
    const p = pve()
    p.sim.control.setRemoteFile('https://x/debian.tar.zst', { error: '404 Not Found' })
    const download = makeAction({
      type: 'download',
      kind: 'CTTemplate',
      address: 'CTTemplate/pve1/local/debian.tar.zst',
      node: 'pve1',
      storage: 'local',
      filename: 'debian.tar.zst',
      requests: [
        {
          call: 'downloadUrl',
          node: 'pve1',
          storage: 'local',
          params: { url: 'https://x/debian.tar.zst', filename: 'debian.tar.zst', content: 'vztmpl' },
        },
      ],
    })
    const lxc = makeAction({
      type: 'create',
      kind: 'LXC',
      vmid: 200,
      requires: ['CTTemplate/pve1/local/debian.tar.zst'],
      requests: [
        {
          call: 'createGuest',
          node: 'pve1',
          guest: 'lxc',
          params: { vmid: 200, ostemplate: 'local:vztmpl/debian.tar.zst', rootfs: 'local-lvm:2' },
        },
      ],
    })
    const unrelated = createVm(300, 'pve2')
    const report = await execute(makePlan([download, lxc, unrelated]), p.client, fast(p))
    expect(report.results.map((r) => r.status)).toEqual(['failed', 'skipped', 'ok'])
    expect(report.results[0]!.error).toMatch(/^download failed: .*404 Not Found/)
    expect(report.results[0]!.tasks[0]!.exitstatus).toMatch(/404 Not Found/)
    expect(report.results[1]!.skip).toEqual({
      code: 'deferred',
      reason: 'deferred: prerequisite CTTemplate/pve1/local/debian.tar.zst#download failed',
    })
    expect(p.sim.control.guest(200)).toBeUndefined()
    expect(p.sim.control.guest(300)?.node).toBe('pve2')
  })

  it('applies a reboot-class change with the write (held pending), a graceful shutdown that applies it, then a start', async () => {
    const p = pve()
    await add(p, 100, { params: { name: 'a', cpu: 'kvm64' }, running: true })
    const digest = p.sim.control.guest(100)!.digest
    const action = makeAction({
      type: 'shutdown-then-update',
      vmid: 100,
      disruption: 'reboot',
      digest,
      requests: [
        { call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 100, params: { cpu: 'host' }, digest },
        { call: 'shutdown', node: 'pve1', guest: 'qemu', vmid: 100, timeoutSeconds: 120, forceStop: false },
        { call: 'start', node: 'pve1', guest: 'qemu', vmid: 100 },
      ],
    })
    const report = await execute(makePlan([action]), p.client, fast(p))
    expect(report.results[0]).toMatchObject({ status: 'ok' })
    expect(writes(p)).toEqual([
      'POST /nodes/pve1/qemu/100/config',
      'POST /nodes/pve1/qemu/100/status/shutdown',
      'POST /nodes/pve1/qemu/100/status/start',
    ])
    expect(p.sim.control.guest(100)).toMatchObject({ status: 'running', config: { cpu: 'host' }, pending: {} })
  })

  describe('a restart-class action that fails ends in the desired power state (restorePower)', () => {
    const shutdown = {
      call: 'shutdown',
      node: 'pve1',
      guest: 'qemu',
      vmid: 100,
      timeoutSeconds: 120,
      forceStop: false,
    } as const
    const start = { call: 'start', node: 'pve1', guest: 'qemu', vmid: 100 } as const
    const update = { call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 100, params: { cpu: 'host' } } as const
    const paths = { update: '/nodes/{node}/qemu/{vmid}/config', start: '/nodes/{node}/qemu/{vmid}/status/start' }
    const run = async (requests: Action['requests'], fail: (keyof typeof paths)[]) => {
      const p = pve()
      await add(p, 100, { params: { name: 'a', cpu: 'kvm64' }, running: true })
      for (const f of fail)
        p.sim.control.failNext({
          method: 'POST',
          path: paths[f],
          status: 400,
          message: 'Parameter verification failed.',
        })
      const report = await execute(
        makePlan([makeAction({ type: 'shutdown-then-update', vmid: 100, requests })]),
        p.client,
        fast(p),
      )
      return { p, result: report.results[0]! }
    }
    const S = 'POST /nodes/pve1/qemu/100/status/shutdown'
    const U = 'POST /nodes/pve1/qemu/100/config'
    const G = 'POST /nodes/pve1/qemu/100/status/start'

    it('a write that fails after the shutdown (a plan in the old order): the start is still sent', async () => {
      const { p, result } = await run([shutdown, update, start], ['update'])
      expect(writes(p)).toEqual([S, U, G])
      expect(result.status).toBe('failed')
      expect(result.error).toMatch(
        /^update failed: .*Parameter verification failed\.; desired power state restored \(start sent\)$/,
      )
      expect(p.sim.control.guest(100)).toMatchObject({ status: 'running', config: { cpu: 'kvm64' } })
    })

    it('a write that fails before the shutdown: nothing is stopped, nothing started', async () => {
      const { p, result } = await run([update, shutdown, start], ['update'])
      expect(writes(p)).toEqual([U])
      expect(result.status).toBe('failed')
      expect(result.error).toMatch(/^update failed: .*Parameter verification failed\.$/)
      expect(p.sim.control.guest(100)!.status).toBe('running')
    })

    it('desired stopped: the shutdown is sent even when the write failed', async () => {
      const { p, result } = await run([update, shutdown], ['update'])
      expect(writes(p)).toEqual([U, S])
      expect(result.error).toMatch(
        /^update failed: .*Parameter verification failed\.; desired power state restored \(shutdown sent\)$/,
      )
      expect(p.sim.control.guest(100)!.status).toBe('stopped')
    })

    it('a start that fails is reported once, with no second attempt', async () => {
      const { p, result } = await run([update, shutdown, start], ['start'])
      expect(writes(p)).toEqual([U, S, G])
      expect(result.error).toMatch(/^start failed: .*Parameter verification failed\.$/)
    })

    it('a failing start after a failed write is reported with the first error', async () => {
      const { p, result } = await run([shutdown, update, start], ['update', 'start'])
      expect(writes(p)).toEqual([S, U, G])
      expect(result.error).toMatch(
        /^update failed: .*Parameter verification failed\.; restoring the power state also failed: start failed: .*Parameter verification failed\.$/,
      )
      expect(p.sim.control.guest(100)!.status).toBe('stopped')
    })
  })

  it('with disruption none, leaves restart-class actions alone and reports them skipped', async () => {
    const p = pve()
    await add(p, 100, { params: { cpu: 'kvm64' }, running: true })
    const action = makeAction({
      type: 'restart',
      vmid: 100,
      requests: [
        { call: 'shutdown', node: 'pve1', guest: 'qemu', vmid: 100, timeoutSeconds: 120, forceStop: false },
        { call: 'start', node: 'pve1', guest: 'qemu', vmid: 100 },
      ],
    })
    const report = await execute(makePlan([action]), p.client, fast(p, { disruption: 'none' }))
    expect(report.results[0]).toMatchObject({ status: 'skipped', skip: { code: 'disruption' } })
    expect(writes(p)).toEqual([])
  })

  it('never force-deletes: a running guest without a prior shutdown fails with PVE refusal (DeleteRunningVMRefused)', async () => {
    const p = pve()
    await add(p, 100, { params: { tags: 'proxops' }, running: true })
    const del = makeAction({
      type: 'delete',
      vmid: 100,
      requests: [{ call: 'deleteGuest', node: 'pve1', guest: 'qemu', vmid: 100 }],
    })
    const report = await execute(makePlan([del]), p.client, fast(p))
    expect(report.results[0]!.status).toBe('failed')
    // PVE::API2::Qemu destroy_vm refuses a running VM before forking
    expect(report.results[0]!.error).toMatch(/^delete failed: .*VM 100 is running - destroy failed/)
    expect(p.sim.control.guest(100)?.status).toBe('running')
    expect(writes(p)).toEqual(['DELETE /nodes/pve1/qemu/100'])
  })

  it('deletes after a graceful shutdown and confirms the guest is gone', async () => {
    const p = pve()
    await add(p, 100, { params: { tags: 'proxops' }, running: true })
    const del = makeAction({
      type: 'delete',
      vmid: 100,
      requests: [
        { call: 'shutdown', node: 'pve1', guest: 'qemu', vmid: 100, timeoutSeconds: 120, forceStop: false },
        { call: 'deleteGuest', node: 'pve1', guest: 'qemu', vmid: 100 },
      ],
    })
    const report = await execute(makePlan([del]), p.client, fast(p))
    expect(report.results[0]!.status).toBe('ok')
    expect(p.sim.control.guest(100)).toBeUndefined()
  })

  it("respects PVE's protection flag: the delete fails with PVE's message", async () => {
    const p = pve()
    await add(p, 100, { params: { protection: 1 } })
    const del = makeAction({
      type: 'delete',
      vmid: 100,
      requests: [{ call: 'deleteGuest', node: 'pve1', guest: 'qemu', vmid: 100 }],
    })
    const report = await execute(makePlan([del]), p.client, fast(p))
    expect(report.results[0]!.error).toMatch(/^delete failed: .*can't remove VM 100 - protection mode enabled/)
    expect(p.sim.control.guest(100)).toBeDefined()
  })

  it('refuses a clone whose source and target vmid are the same (E6)', async () => {
    const p = pve()
    await add(p, 9000, { params: { name: 'tpl' } })
    await wait(p, await p.client.markTemplate('pve1', 'qemu', 9000))
    p.sim.stats.reset()
    const clone = makeAction({
      type: 'clone',
      vmid: 9000,
      requests: [{ call: 'cloneGuest', node: 'pve1', guest: 'qemu', vmid: 9000, params: { newid: 9000, full: 1 } }],
    })
    const report = await execute(makePlan([clone]), p.client, fast(p))
    expect(report.results[0]).toMatchObject({
      status: 'failed',
      error: 'refused: clone source and target are both vmid 9000',
    })
    expect(writes(p)).toEqual([])
  })

  it('refuses to write a disk create form over a live volume, even when the plan asks for it', async () => {
    const p = pve()
    await add(p, 100, { params: { scsi1: 'local-lvm:32' } })
    const live = config(p, 100)!.scsi1
    expect(live).toMatch(/^local-lvm:vm-100-disk-\d,size=32G$/)
    const bad = makeAction({
      type: 'update',
      vmid: 100,
      requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 100, params: { scsi1: 'local-lvm:8' } }],
    })
    const report = await execute(makePlan([bad]), p.client, fast(p))
    expect(report.results[0]!.error).toBe(
      `refused: scsi1 would be allocated over the live volume ${live!.split(',')[0]!}`,
    )
    expect(writes(p)).toEqual([])
    expect(config(p, 100)!.scsi1).toBe(live)
  })

  it('allocates a new disk in an empty or `none` slot', async () => {
    const p = pve()
    await add(p, 100, { params: { ide2: 'none,media=cdrom' } })
    const add8 = (params: PlanParams): Action =>
      makeAction({
        type: 'update',
        vmid: 100,
        requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 100, params }],
      })
    const report = await execute(
      makePlan([add8({ scsi1: 'local-lvm:8', ide2: 'local-lvm:cloudinit' })]),
      p.client,
      fast(p),
    )
    expect(report.results[0]!.status).toBe('ok')
    expect(config(p, 100)!.scsi1).toMatch(/^local-lvm:vm-100-disk-\d,size=8G$/)
    expect(config(p, 100)!.ide2).toMatch(/^local-lvm:vm-100-cloudinit,media=cdrom/)
  })

  it('after a clone, sends `onlyIfAbsent` keys only into empty slots (Clone_DriveNotRewritten)', async () => {
    const p = pve()
    await add(p, 9000, { params: { name: 'tpl', ide2: 'local-lvm:cloudinit', scsi0: 'local-lvm:8' } })
    await wait(p, await p.client.markTemplate('pve1', 'qemu', 9000))
    p.sim.stats.reset()
    const sent: PveParams[] = []
    const recording = writer(p, {
      updateConfig: (node, type, vmid, params, options) => {
        sent.push(params)
        return p.client.updateConfig(node, type, vmid, params, options)
      },
    })
    const clone = makeAction({
      type: 'clone',
      vmid: 101,
      requests: [
        { call: 'cloneGuest', node: 'pve1', guest: 'qemu', vmid: 9000, params: { newid: 101, full: 1, name: 'web' } },
        {
          call: 'updateConfig',
          node: 'pve1',
          guest: 'qemu',
          vmid: 101,
          params: { memory: 4096, ide2: 'local-lvm:cloudinit', ciuser: 'ops', delete: 'sshkeys' },
          onlyIfAbsent: ['ide2'],
        },
      ],
    })
    const report = await execute(makePlan([clone]), recording, fast(p))
    expect(report.results[0]!.status).toBe('ok')
    expect(sent).toEqual([{ memory: 4096, ciuser: 'ops', delete: 'sshkeys' }])
    // the clone's own cloud-init drive stays (PVE's clone copies it to the target's name)
    expect(config(p, 101)).toMatchObject({ memory: '4096', ciuser: 'ops' })
    expect(config(p, 101)!.ide2).toMatch(/^local-lvm:vm-101-cloudinit,media=cdrom/)
  })

  it('resolves secret references at execute time and never lets a value into the report (canary)', async () => {
    const p = pve()
    const canaryKey = 'ssh-ed25519 AAAACANARYKEY0123456789 alice@canary'
    const canaryPassword = 'canary-password-7f3a9'
    await add(p, 100)
    // an error that echoes a value back, as PVE's parameter errors do
    p.sim.control.failNext({
      method: 'POST',
      path: '/nodes/{node}/qemu/{vmid}/config',
      status: 400,
      message: `Parameter verification failed: cipassword: bad value '${canaryPassword}'`,
    })
    const sent: PveParams[] = []
    const recording = writer(p, {
      updateConfig: (node, type, vmid, params, options) => {
        sent.push(params)
        return p.client.updateConfig(node, type, vmid, params, options)
      },
    })
    const withSecrets = makeAction({
      type: 'update',
      vmid: 100,
      requests: [
        {
          call: 'updateConfig',
          node: 'pve1',
          guest: 'qemu',
          vmid: 100,
          params: {
            sshkeys: {
              secret: {
                refs: ['cloud-init.ssh-keys.alice'],
                encoding: 'sshkeys',
                inline: ['ssh-ed25519 AAAAPUBLIC bob'],
              },
            },
            cipassword: { secret: { refs: ['cloud-init.passwords.default'], encoding: 'plain' } },
          },
        },
      ],
    })
    const secrets: Record<string, string> = {
      'cloud-init.ssh-keys.alice': `${canaryKey}\n${canaryKey}\n`,
      'cloud-init.passwords.default': canaryPassword,
    }
    const events: ProgressEvent[] = []
    const options = fast(p, { secrets: (ref) => secrets[ref]!, onProgress: (e) => events.push(e) })
    const report = await execute(makePlan([withSecrets]), recording, options)
    expect(report.results[0]!.status).toBe('failed')
    expect(report.results[0]!.error).toMatch(
      /^update failed: .*Parameter verification failed: cipassword: bad value '\(sensitive\)'/,
    )
    expect(JSON.stringify({ report, events })).not.toMatch(/canary/i)
    // what went to PVE: resolved, de-duplicated, percent-encoded keys
    expect(decodeURIComponent(sent[0]!.sshkeys as string)).toBe(`${canaryKey}\nssh-ed25519 AAAAPUBLIC bob`)
    expect(sent[0]!.cipassword).toBe(canaryPassword)
    // and once PVE takes it: the keys as sent, the password stored hashed (qemu-server cloudinit_config)
    const again = await execute(makePlan([withSecrets]), p.client, options)
    expect(again.results[0]!.status).toBe('ok')
    expect(decodeURIComponent(config(p, 100)!.sshkeys!)).toBe(`${canaryKey}\nssh-ed25519 AAAAPUBLIC bob`)
    expect(config(p, 100)!.cipassword).not.toContain(canaryPassword)
    expect(JSON.stringify({ again, events })).not.toMatch(/canary/i)
  })

  it('fails an action whose secret cannot be resolved, naming the reference only', async () => {
    const p = pve()
    await add(p, 100)
    const action = makeAction({
      type: 'update',
      vmid: 100,
      requests: [
        {
          call: 'updateConfig',
          node: 'pve1',
          guest: 'qemu',
          vmid: 100,
          params: { cipassword: { secret: { refs: ['cloud-init.passwords.nope'], encoding: 'plain' } } },
        },
      ],
    })
    const noPort = await execute(makePlan([action]), p.client, fast(p))
    expect(noPort.results[0]!.error).toBe(
      'secret reference cloud-init.passwords.nope for parameter cipassword cannot be resolved: no secrets port was given to execute()',
    )
    const missing = await execute(
      makePlan([action]),
      p.client,
      fast(p, {
        secrets: () => {
          throw new Error('key cloud-init.passwords.nope not found')
        },
      }),
    )
    expect(missing.results[0]!.error).toBe(
      'secret reference cloud-init.passwords.nope for parameter cipassword cannot be resolved: Error',
    )
    expect(writes(p)).toEqual([])
  })

  it("retries PVE's lock timeout with bounded backoff, then fails", async () => {
    const p = pve()
    await add(p, 100)
    // another worker holds the config flock: the qmconfig worker's lock_config gives up (PVE::Tools::lock_file)
    p.sim.control.setFlockContention(100, true)
    const delays: number[] = []
    const update = makeAction({
      type: 'update',
      vmid: 100,
      requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 100, params: { memory: 2048 } }],
    })
    const said: string[] = []
    const ok = await execute(
      makePlan([update]),
      p.client,
      fast(p, {
        lockRetryDelayMs: 100,
        sleep: async (ms) => {
          if (ms >= 100) delays.push(ms)
          // the other worker lets go during the second wait
          if (delays.length === 2) p.sim.control.setFlockContention(100, false)
          await new Promise((r) => setTimeout(r, Math.min(ms, 2)))
        },
        onProgress: (e) => {
          if (e.type === 'retry') said.push(`${e.attempt}/${e.attempts} in ${e.delayMs}: ${e.reason}`)
          // each retry is reported before its wait
          if (e.type === 'retry') expect(delays).toHaveLength(said.length - 1)
        },
      }),
    )
    expect(ok.results[0]!.status).toBe('ok')
    expect(config(p, 100)!.memory).toBe('2048')
    expect(delays).toEqual([100, 200])
    expect(said).toHaveLength(2)
    expect(said[0]).toMatch(
      /^2\/4 in 100: update: .*can't lock file '\/var\/lock\/qemu-server\/lock-100\.conf' - got timeout/,
    )
    expect(said[1]).toMatch(/^3\/4 in 200: update: .*can't lock file/)
    p.sim.control.setFlockContention(100, true)
    p.sim.stats.reset()
    const failed = await execute(makePlan([update]), p.client, fast(p, { lockRetries: 2 }))
    expect(failed.results[0]!.error).toMatch(
      /^update failed: .*can't lock file '\/var\/lock\/qemu-server\/lock-100\.conf' - got timeout/,
    )
    // the first attempt and two retries, each refused before forking (update_vm_api takes the lock first)
    expect(writes(p)).toEqual(Array.from({ length: 3 }, () => 'POST /nodes/pve1/qemu/100/config'))
    expect(failed.results[0]!.tasks).toEqual([])
  })

  it('treats start of a running guest and stop of a stopped one as done', async () => {
    const p = pve()
    await add(p, 100, { running: true })
    await add(p, 200, { type: 'lxc' })
    const report = await execute(
      makePlan([
        makeAction({ type: 'start', vmid: 100, requests: [{ call: 'start', node: 'pve1', guest: 'qemu', vmid: 100 }] }),
        makeAction({
          type: 'stop',
          vmid: 200,
          kind: 'LXC',
          requests: [{ call: 'shutdown', node: 'pve1', guest: 'lxc', vmid: 200, timeoutSeconds: 60, forceStop: false }],
        }),
      ]),
      p.client,
      fast(p),
    )
    expect(report.results.map((r) => r.status)).toEqual(['ok', 'ok'])
    expect(p.sim.control.guest(100)!.status).toBe('running')
    expect(p.sim.control.guest(200)!.status).toBe('stopped')
  })

  it('fails an action the read-back does not confirm', async () => {
    const p = pve()
    await add(p, 100)
    // a writer that answers a start with a task that does something else, and succeeds
    const liar = writer(p, {
      start: async (node, type, vmid) => (await p.client.updateConfig(node, type, vmid, { description: 'x' }))!,
    })
    const report = await execute(
      makePlan([
        makeAction({ type: 'start', vmid: 100, requests: [{ call: 'start', node: 'pve1', guest: 'qemu', vmid: 100 }] }),
      ]),
      liar,
      fast(p, { confirmAttempts: 2 }),
    )
    expect(report.results[0]).toMatchObject({
      status: 'failed',
      error: 'not confirmed by read-back: qemu 100 on pve1: power state is stopped, expected running',
    })
  })

  it('confirms an LXC template mark that PVE completes after answering', async () => {
    const p = pve()
    await add(p, 200, { type: 'lxc' })
    const report = await execute(
      makePlan([
        makeAction({
          type: 'mark-template',
          kind: 'TemplateCT',
          vmid: 200,
          requests: [{ call: 'markTemplate', node: 'pve1', guest: 'lxc', vmid: 200 }],
        }),
      ]),
      p.client,
      fast(p, { confirmDelayMs: 5 }),
    )
    expect(report.results[0]!.status).toBe('ok')
    expect(config(p, 200)!.template).toBe('1')
  })

  // PVE::API2::LXC `template` answers null and converts in a vztemplate worker that runs as long as PVE's tasks do
  const markCt = makePlan([
    makeAction({
      type: 'mark-template',
      kind: 'TemplateCT',
      vmid: 200,
      requests: [{ call: 'markTemplate', node: 'pve1', guest: 'lxc', vmid: 200 }],
    }),
  ])

  it('waits for a slow LXC template conversion to the end of its vztemplate worker (PVE::API2::LXC template)', async () => {
    const p = pve()
    await add(p, 200, { type: 'lxc' })
    // one read-back, no delay: the conversion must be over when the action says it is
    const report = await waitsForHeldTask(p.sim, 'vztemplate', () =>
      execute(markCt, p.client, fast(p, { confirmAttempts: 1 })),
    )
    expect(report.results[0]).toMatchObject({ status: 'ok' })
    expect(config(p, 200)!.template).toBe('1')
  })

  it('a writer that answers null without the worker: waits on the config, bounded by the task timeout', async () => {
    const p = pve()
    await add(p, 200, { type: 'lxc' })
    const noWorker = writer(p, {
      markTemplate: async (node, type, vmid) => {
        await p.client.markTemplate(node, type, vmid)
        return null
      },
    })
    const report = await waitsForHeldTask(p.sim, 'vztemplate', () =>
      execute(markCt, noWorker, fast(p, { confirmAttempts: 1 })),
    )
    expect(report.results[0]).toMatchObject({ status: 'ok' })
    expect(config(p, 200)!.template).toBe('1')

    const q = pve()
    await add(q, 200, { type: 'lxc' })
    const never = writer(q, { markTemplate: () => Promise.resolve(null) })
    const stuck = await execute(markCt, never, fast(q, { confirmAttempts: 1, taskTimeoutMs: 60 }))
    expect(stuck.results[0]).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^mark template: lxc 200 is not a template 0 s after PVE accepted the conversion/),
    })
  })

  it('runs prunes only after every other action, and actions on one guest in plan order', async () => {
    const p = pve()
    await add(p, 100, { node: 'pve2', params: { tags: 'proxops' } })
    await add(p, 101)
    const order: string[] = []
    const del = makeAction({
      type: 'delete',
      vmid: 100,
      node: 'pve2',
      requests: [{ call: 'deleteGuest', node: 'pve2', guest: 'qemu', vmid: 100 }],
    })
    const update = makeAction({
      type: 'update',
      vmid: 101,
      requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 101, params: { memory: 1024 } }],
    })
    const start = makeAction({
      type: 'start',
      vmid: 101,
      requests: [{ call: 'start', node: 'pve1', guest: 'qemu', vmid: 101 }],
    })
    await execute(
      makePlan([update, start, del]),
      p.client,
      fast(p, {
        onProgress: (e) =>
          e.type !== 'task-running' && e.type !== 'task-started' && order.push(`${e.type} ${e.action.id}`),
      }),
    )
    expect(order).toEqual([
      'action-started VM/pve1/101#update',
      'action-finished VM/pve1/101#update',
      'action-started VM/pve1/101#start',
      'action-finished VM/pve1/101#start',
      'action-started VM/pve2/100#delete',
      'action-finished VM/pve2/100#delete',
    ])
    expect(writes(p)).toEqual([
      'POST /nodes/pve1/qemu/101/config',
      'POST /nodes/pve1/qemu/101/status/start',
      'DELETE /nodes/pve2/qemu/100',
    ])
  })

  it('keeps at most 2 actions per node and 1 download per storage in flight', async () => {
    const p = pve()
    const inFlight = new Map<string, number>()
    let peakNode = 0
    let peakStorage = 0
    const slow = writer(p, {
      waitTask: async (task, options) => {
        const key = task.upid.includes(':download:') ? `storage:${task.node}` : `node:${task.node}`
        inFlight.set(key, (inFlight.get(key) ?? 0) + 1)
        if (key.startsWith('node')) peakNode = Math.max(peakNode, inFlight.get(key)!)
        else peakStorage = Math.max(peakStorage, inFlight.get(key)!)
        await new Promise((r) => setTimeout(r, 3))
        try {
          return await p.client.waitTask(task, options)
        } finally {
          inFlight.set(key, inFlight.get(key)! - 1)
        }
      },
    })
    const creates = [100, 101, 102, 103, 104].map((vmid) => createVm(vmid, 'pve1'))
    const downloads = ['a.iso', 'b.iso', 'c.iso'].map((filename) => {
      p.sim.control.setRemoteFile(`https://x/${filename}`, { content: `iso ${filename}` })
      return makeAction({
        type: 'download',
        kind: 'ISO',
        node: 'pve2',
        storage: 'local',
        filename,
        address: `ISO/pve2/local/${filename}`,
        requests: [
          {
            call: 'downloadUrl',
            node: 'pve2',
            storage: 'local',
            params: { url: `https://x/${filename}`, filename, content: 'iso' },
          },
        ],
      })
    })
    const report = await execute(makePlan([...creates, ...downloads]), slow, fast(p))
    expect(report.summary).toEqual({ actions: 8, ok: 8, failed: 0, skipped: 0 })
    expect(peakNode).toBe(2)
    expect(peakStorage).toBe(1)
    expect(p.sim.control.storageContent('pve2', 'local').map((v) => v.volid)).toEqual(
      expect.arrayContaining(['local:iso/a.iso', 'local:iso/b.iso', 'local:iso/c.iso']),
    )
  })

  it('stops starting actions when cancelled and reports the rest as skipped', async () => {
    const p = pve()
    const controller = new AbortController()
    const actions = [100, 101, 102].map((vmid) => createVm(vmid))
    const report = await execute(
      makePlan(actions),
      p.client,
      fast(p, {
        nodeConcurrency: 1,
        signal: controller.signal,
        onProgress: (e) => e.type === 'action-started' && controller.abort(),
      }),
    )
    expect(report.results.map((r) => r.status)).toEqual(['ok', 'skipped', 'skipped'])
    expect(report.results[1]!.skip!.code).toBe('cancelled')
    expect(report.cancelled).toBe(true)
    expect(p.sim.control.guests().map((g) => g.vmid)).toEqual([100])
  })

  it('reports task progress with the elapsed time', async () => {
    const p = pve()
    let clock = 0
    const slow = writer(p, {
      waitTask: async (task, options) => {
        clock += 7000
        await new Promise((r) => setTimeout(r, 30))
        return p.client.waitTask(task, options)
      },
    })
    const events: ProgressEvent[] = []
    await execute(
      makePlan([createVm(100)]),
      slow,
      fast(p, { progressIntervalMs: 10, now: () => clock, onProgress: (e) => events.push(e) }),
    )
    expect(events[0]!.type).toBe('action-started')
    expect(events[1]!.type).toBe('task-started')
    const running = events.filter((e) => e.type === 'task-running')
    expect(running.length).toBeGreaterThan(0)
    expect(running[0]).toMatchObject({ elapsedMs: 7000 })
    expect(events.at(-1)).toMatchObject({ type: 'action-finished', result: { status: 'ok', durationMs: 7000 } })
  })

  it('ends every action exactly once as ok, failed or skipped, and never runs a dependant of a failure (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ node: fc.constantFrom('pve1', 'pve2'), fail: fc.boolean(), dep: fc.option(fc.nat(9)) }), {
          minLength: 1,
          maxLength: 10,
        }),
        async (specs) => {
          const p = simPve({ taskDurationMs: 1 })
          try {
            const actions = specs.map((s, i) => {
              // a failing create names a storage the node does not have: PVE refuses it
              const a = createVm(100 + i, s.node, s.fail ? { scsi0: 'nope:8' } : {})
              const dep = s.dep !== null && s.dep < i ? [`VM/${specs[s.dep]!.node}/${100 + s.dep}#create`] : []
              return { ...a, dependsOn: dep }
            })
            const report = await execute(makePlan(actions), p.client, fast(p, { taskPollIntervalMs: 1 }))
            expect(report.results.map((r) => r.id)).toEqual(actions.map((a) => a.id))
            for (const [i, r] of report.results.entries()) {
              const depResult = actions[i]!.dependsOn.map((d) => report.results.find((x) => x.id === d)!)
              if (depResult.some((d) => d.status !== 'ok')) expect(r.status).toBe('skipped')
              else expect(r.status).toBe(specs[i]!.fail ? 'failed' : 'ok')
              expect(p.sim.control.guest(100 + i) !== undefined).toBe(r.status === 'ok')
            }
          } finally {
            await p.close()
          }
        },
      ),
      { numRuns: 20 },
    )
  })
})

describe('execute: resize', () => {
  it('grows a disk and confirms the new size by reading it back', async () => {
    const p = pve()
    await add(p, 100, { params: { scsi0: 'local-lvm:8' } })
    const resize = makeAction({
      type: 'resize',
      vmid: 100,
      requests: [{ call: 'resizeDisk', node: 'pve1', guest: 'qemu', vmid: 100, disk: 'scsi0', size: '16G' }],
    })
    const report = await execute(makePlan([resize]), p.client, fast(p))
    expect(report.results[0]!.status).toBe('ok')
    expect(config(p, 100)!.scsi0).toBe('local-lvm:vm-100-disk-0,size=16G')
  })

  it('fails a resize PVE answered OK for but that did not grow the disk', async () => {
    const p = pve()
    await add(p, 100, { params: { scsi0: 'local-lvm:8' } })
    const noop = writer(p, { resizeDisk: async () => null })
    const resize = makeAction({
      type: 'resize',
      vmid: 100,
      requests: [{ call: 'resizeDisk', node: 'pve1', guest: 'qemu', vmid: 100, disk: 'scsi0', size: '16G' }],
    })
    const report = await execute(makePlan([resize]), noop, fast(p, { confirmAttempts: 1 }))
    expect(report.results[0]!.error).toBe(
      `not confirmed by read-back: qemu 100 on pve1: disk scsi0 is ${8 * 1024 ** 3} bytes, expected at least ${16 * 1024 ** 3}`,
    )
  })

  it("reports PVE's refusal to shrink", async () => {
    const p = pve()
    await add(p, 100, { params: { scsi0: 'local-lvm:8' } })
    const shrink = makeAction({
      type: 'resize',
      vmid: 100,
      requests: [{ call: 'resizeDisk', node: 'pve1', guest: 'qemu', vmid: 100, disk: 'scsi0', size: '4G' }],
    })
    const report = await execute(makePlan([shrink]), p.client, fast(p))
    // qemu-server's resize worker refuses a smaller size (PVE::API2::Qemu resize_vm)
    expect(report.results[0]!.error).toMatch(/^resize failed: .*shrinking disks is not supported/)
    expect(config(p, 100)!.scsi0).toBe('local-lvm:vm-100-disk-0,size=8G')
  })
})

describe('toJobs', () => {
  it('maps dependencies, required resources, per-guest order, prunes-last and limits onto jobs', async () => {
    const { toJobs } = await import('./execute.js')
    const iso = makeAction({
      id: 'iso#download',
      type: 'download',
      kind: 'ISO',
      address: 'ISO/pve1/local/a.iso',
      node: 'pve1',
      storage: 'local',
      filename: 'a.iso',
      requests: [
        {
          call: 'downloadUrl',
          node: 'pve1',
          storage: 'local',
          params: { url: 'https://x/a.iso', filename: 'a.iso', content: 'iso' },
        },
      ],
    })
    const create = makeAction({
      id: 'vm#create',
      type: 'create',
      vmid: 100,
      requires: ['ISO/pve1/local/a.iso'],
      requests: [{ call: 'createGuest', node: 'pve1', guest: 'qemu', params: { vmid: 100 } }],
    })
    const start = makeAction({
      id: 'vm#start',
      type: 'start',
      vmid: 100,
      dependsOn: ['vm#create'],
      requests: [{ call: 'start', node: 'pve1', guest: 'qemu', vmid: 100 }],
    })
    const resize = makeAction({
      id: 'vm#resize',
      type: 'resize',
      vmid: 100,
      requests: [{ call: 'resizeDisk', node: 'pve1', guest: 'qemu', vmid: 100, disk: 'scsi0', size: '+1G' }],
    })
    const prune = makeAction({
      id: 'old#delete',
      type: 'delete',
      vmid: 200,
      node: 'pve2',
      requests: [{ call: 'deleteGuest', node: 'pve2', guest: 'qemu', vmid: 200 }],
    })
    const jobs = toJobs([iso, create, start, resize, prune], 2, 1)
    expect(jobs).toEqual([
      {
        id: 'iso#download',
        deps: [],
        after: [],
        slots: [
          { key: 'node:pve1', limit: 2 },
          { key: 'storage:pve1/local', limit: 1 },
        ],
      },
      { id: 'vm#create', deps: ['iso#download'], after: [], slots: [{ key: 'node:pve1', limit: 2 }] },
      { id: 'vm#start', deps: ['vm#create'], after: [], slots: [{ key: 'node:pve1', limit: 2 }] },
      { id: 'vm#resize', deps: [], after: ['vm#start'], slots: [{ key: 'node:pve1', limit: 2 }] },
      {
        id: 'old#delete',
        deps: [],
        after: ['iso#download', 'vm#create', 'vm#resize', 'vm#start'],
        slots: [{ key: 'node:pve2', limit: 2 }],
      },
    ])
  })

  it('a migration holds a task slot on the node it leaves and on the node it goes to', async () => {
    const { toJobs } = await import('./execute.js')
    const move = makeAction({
      id: 'vm#migrate',
      type: 'migrate',
      vmid: 100,
      node: 'pve2',
      requests: [
        { call: 'migrate', node: 'pve1', guest: 'qemu', vmid: 100, target: 'pve2', params: { target: 'pve2' } },
      ],
    })
    expect(toJobs([move], 2, 1)[0]?.slots).toEqual([
      { key: 'node:pve2', limit: 2 },
      { key: 'node:pve1', limit: 2 },
    ])
  })
})
