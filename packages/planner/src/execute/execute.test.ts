import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { FakePve } from '../test-support/index.js'
import { makeAction, makePlan } from '../testing/index.js'
import type { Action } from '../plan-types.js'
import { execute, type ExecuteOptions, type ProgressEvent } from './execute.js'

const fast = (pve: FakePve, extra: Partial<ExecuteOptions> = {}): ExecuteOptions => ({
  reader: pve,
  sleep: async () => {},
  lockRetryDelayMs: 0,
  confirmDelayMs: 0,
  ...extra,
})

const createVm = (vmid: number, node = 'pve1', extra: Record<string, string | number> = {}): Action =>
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
    const pve = new FakePve()
    const report = await execute(makePlan([createVm(100, 'pve1', { start: 1 })]), pve, fast(pve))
    expect(report.results).toMatchObject([{ id: 'VM/pve1/100#create', status: 'ok', tasks: [{ exitstatus: 'OK' }] }])
    expect(report.complete).toBe(true)
    expect(pve.guests.get(100)).toMatchObject({
      status: 'running',
      config: { name: 'vm100', scsi0: 'local-lvm:vm-100-disk-0,size=8G' },
    })
    // read back: config (through /pending) and status
    expect(pve.calls.map((c) => c.method)).toEqual(['createGuest', 'waitTask', 'guestPending', 'guestStatus'])
  })

  it('sends the digest the update was planned against; a concurrent edit fails that action only', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, config: { name: 'a', memory: '1024' } })
    pve.addGuest({ vmid: 101, config: { name: 'b', memory: '1024' } })
    const planned100 = pve.digestOf(pve.guests.get(100)!)
    const planned101 = pve.digestOf(pve.guests.get(101)!)
    pve.guests.get(100)!.config.memory = '512' // out-of-band edit after plan
    const update = (vmid: number, digest: string): Action =>
      makeAction({
        type: 'update',
        vmid,
        digest,
        requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid, params: { memory: 4096 }, digest }],
      })
    const report = await execute(makePlan([update(100, planned100), update(101, planned101)]), pve, fast(pve))
    expect(report.results.map((r) => r.status)).toEqual(['failed', 'ok'])
    expect(report.results[0]!.error).toBe('update failed: checksum mismatch (file change by other user?)')
    expect(pve.guests.get(100)!.config.memory).toBe('512')
    expect(pve.guests.get(101)!.config.memory).toBe('4096')
    expect(pve.writes().find((c) => c.method === 'updateConfig')!.args[4]).toEqual({ digest: planned100 })
    expect(report.complete).toBe(false)
  })

  it("reports a failed task with PVE's exit status and defers its dependants (E2EDeferralWhenPrerequisiteFails)", async () => {
    const pve = new FakePve()
    pve.taskFault = (t) => (t.type === 'download' ? 'download failed: 404 Not Found' : undefined)
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
          params: { vmid: 200, ostemplate: 'local:vztmpl/debian.tar.zst' },
        },
      ],
    })
    const unrelated = createVm(300, 'pve2')
    const report = await execute(makePlan([download, lxc, unrelated]), pve, fast(pve))
    expect(report.results.map((r) => r.status)).toEqual(['failed', 'skipped', 'ok'])
    expect(report.results[0]!.error).toBe('download failed: download failed: 404 Not Found')
    expect(report.results[1]!.skip).toEqual({
      code: 'deferred',
      reason: 'deferred: prerequisite CTTemplate/pve1/local/debian.tar.zst#download failed',
    })
    expect(pve.guests.has(200)).toBe(false)
    expect(pve.guests.has(300)).toBe(true)
  })

  it('applies a reboot-class change with the write (held pending), a graceful shutdown that applies it, then a start', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, status: 'running', config: { name: 'a', cpu: 'kvm64' } })
    const digest = pve.digestOf(pve.guests.get(100)!)
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
    const report = await execute(makePlan([action]), pve, fast(pve))
    expect(report.results[0]).toMatchObject({ status: 'ok' })
    expect(pve.writes().map((c) => c.method)).toEqual(['updateConfig', 'shutdown', 'start'])
    expect(pve.writes()[1]!.args[3]).toEqual({ timeoutSeconds: 120, forceStop: false })
    expect(pve.guests.get(100)).toMatchObject({ status: 'running', config: { cpu: 'host' }, pending: {} })
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
    const run = async (requests: Action['requests'], fault: (method: string) => boolean) => {
      const pve = new FakePve()
      pve.addGuest({ vmid: 100, status: 'running', config: { name: 'a', cpu: 'kvm64' } })
      pve.fault = (call) => (fault(call.method) ? new Error('400 Parameter verification failed.') : undefined)
      const report = await execute(
        makePlan([makeAction({ type: 'shutdown-then-update', vmid: 100, requests })]),
        pve,
        fast(pve),
      )
      return { pve, result: report.results[0]! }
    }

    it('a write that fails after the shutdown (a plan in the old order): the start is still sent', async () => {
      const { pve, result } = await run([shutdown, update, start], (m) => m === 'updateConfig')
      expect(pve.writes().map((c) => c.method)).toEqual(['shutdown', 'updateConfig', 'start'])
      expect(result).toMatchObject({
        status: 'failed',
        error: 'update failed: 400 Parameter verification failed.; desired power state restored (start sent)',
      })
      expect(pve.guests.get(100)).toMatchObject({ status: 'running', config: { cpu: 'kvm64' } })
    })

    it('a write that fails before the shutdown: nothing is stopped, nothing started', async () => {
      const { pve, result } = await run([update, shutdown, start], (m) => m === 'updateConfig')
      expect(pve.writes().map((c) => c.method)).toEqual(['updateConfig'])
      expect(result).toMatchObject({ status: 'failed', error: 'update failed: 400 Parameter verification failed.' })
      expect(pve.guests.get(100)!.status).toBe('running')
    })

    it('desired stopped: the shutdown is sent even when the write failed', async () => {
      const { pve, result } = await run([update, shutdown], (m) => m === 'updateConfig')
      expect(pve.writes().map((c) => c.method)).toEqual(['updateConfig', 'shutdown'])
      expect(result.error).toBe(
        'update failed: 400 Parameter verification failed.; desired power state restored (shutdown sent)',
      )
      expect(pve.guests.get(100)!.status).toBe('stopped')
    })

    it('a start that fails is reported once, with no second attempt', async () => {
      const { pve, result } = await run([update, shutdown, start], (m) => m === 'start')
      expect(pve.writes().map((c) => c.method)).toEqual(['updateConfig', 'shutdown', 'start'])
      expect(result.error).toBe('start failed: 400 Parameter verification failed.')
    })

    it('a failing start after a failed write is reported with the first error', async () => {
      const { pve, result } = await run([shutdown, update, start], (m) => m === 'updateConfig' || m === 'start')
      expect(result.error).toBe(
        'update failed: 400 Parameter verification failed.; restoring the power state also failed: start failed: 400 Parameter verification failed.',
      )
      expect(pve.guests.get(100)!.status).toBe('stopped')
    })
  })

  it('with disruption none, leaves restart-class actions alone and reports them skipped', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, status: 'running', config: { cpu: 'kvm64' } })
    const action = makeAction({
      type: 'restart',
      vmid: 100,
      requests: [
        { call: 'shutdown', node: 'pve1', guest: 'qemu', vmid: 100, timeoutSeconds: 120, forceStop: false },
        { call: 'start', node: 'pve1', guest: 'qemu', vmid: 100 },
      ],
    })
    const report = await execute(makePlan([action]), pve, fast(pve, { disruption: 'none' }))
    expect(report.results[0]).toMatchObject({ status: 'skipped', skip: { code: 'disruption' } })
    expect(pve.writes()).toEqual([])
  })

  it('never force-deletes: a running guest without a prior shutdown fails with PVE refusal (DeleteRunningVMRefused)', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, status: 'running', config: { tags: 'proxops' } })
    const del = makeAction({
      type: 'delete',
      vmid: 100,
      requests: [{ call: 'deleteGuest', node: 'pve1', guest: 'qemu', vmid: 100 }],
    })
    const report = await execute(makePlan([del]), pve, fast(pve))
    expect(report.results[0]).toMatchObject({
      status: 'failed',
      error: 'delete failed: VM 100 is running - destroy failed',
    })
    expect(pve.guests.has(100)).toBe(true)
    expect(pve.writes().map((c) => c.method)).toEqual(['deleteGuest'])
  })

  it('deletes after a graceful shutdown and confirms the guest is gone', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, status: 'running', config: { tags: 'proxops' } })
    const del = makeAction({
      type: 'delete',
      vmid: 100,
      requests: [
        { call: 'shutdown', node: 'pve1', guest: 'qemu', vmid: 100, timeoutSeconds: 120, forceStop: false },
        { call: 'deleteGuest', node: 'pve1', guest: 'qemu', vmid: 100 },
      ],
    })
    const report = await execute(makePlan([del]), pve, fast(pve))
    expect(report.results[0]!.status).toBe('ok')
    expect(pve.guests.has(100)).toBe(false)
  })

  it("respects PVE's protection flag: the delete fails with PVE's message", async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, config: { protection: '1' } })
    const del = makeAction({
      type: 'delete',
      vmid: 100,
      requests: [{ call: 'deleteGuest', node: 'pve1', guest: 'qemu', vmid: 100 }],
    })
    const report = await execute(makePlan([del]), pve, fast(pve))
    expect(report.results[0]!.error).toBe("delete failed: can't remove VM 100 - protection mode enabled")
  })

  it('refuses a clone whose source and target vmid are the same (E6)', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 9000, config: { template: '1' } })
    const clone = makeAction({
      type: 'clone',
      vmid: 9000,
      requests: [{ call: 'cloneGuest', node: 'pve1', guest: 'qemu', vmid: 9000, params: { newid: 9000, full: 1 } }],
    })
    const report = await execute(makePlan([clone]), pve, fast(pve))
    expect(report.results[0]).toMatchObject({
      status: 'failed',
      error: 'refused: clone source and target are both vmid 9000',
    })
    expect(pve.writes()).toEqual([])
  })

  it('refuses to write a disk create form over a live volume, even when the plan asks for it', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, config: { scsi1: 'local-lvm:vm-100-disk-1,size=32G' } })
    const bad = makeAction({
      type: 'update',
      vmid: 100,
      requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 100, params: { scsi1: 'local-lvm:8' } }],
    })
    const report = await execute(makePlan([bad]), pve, fast(pve))
    expect(report.results[0]!.error).toBe(
      'refused: scsi1 would be allocated over the live volume local-lvm:vm-100-disk-1',
    )
    expect(pve.writes()).toEqual([])
    expect(pve.guests.get(100)!.config.scsi1).toBe('local-lvm:vm-100-disk-1,size=32G')
  })

  it('allocates a new disk in an empty or `none` slot', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, config: { ide2: 'none,media=cdrom' } })
    const add = makeAction({
      type: 'update',
      vmid: 100,
      requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 100, params: { scsi1: 'local-lvm:8' } }],
    })
    const report = await execute(makePlan([add]), pve, fast(pve))
    expect(report.results[0]!.status).toBe('ok')
    expect(pve.guests.get(100)!.config.scsi1).toMatch(/^local-lvm:vm-100-disk-\d,size=8G$/)
  })

  it('after a clone, sends `onlyIfAbsent` keys only into empty slots (Clone_DriveNotRewritten)', async () => {
    const pve = new FakePve()
    pve.addGuest({
      vmid: 9000,
      config: {
        name: 'tpl',
        template: '1',
        ide2: 'local-lvm:base-9000-cloudinit,media=cdrom',
        scsi0: 'local-lvm:base-9000-disk-0,size=8G',
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
    const report = await execute(makePlan([clone]), pve, fast(pve))
    expect(report.results[0]!.status).toBe('ok')
    const sent = pve.writes().find((c) => c.method === 'updateConfig')!.args[3] as Record<string, unknown>
    expect(sent).toEqual({ memory: 4096, ciuser: 'ops', delete: 'sshkeys' })
    expect(pve.guests.get(101)!.config.ide2).toBe('local-lvm:vm-101-cloudinit,media=cdrom')
  })

  it('resolves secret references at execute time and never lets a value into the report (canary)', async () => {
    const pve = new FakePve()
    const canaryKey = 'ssh-ed25519 AAAACANARYKEY0123456789 alice@canary'
    const canaryPassword = 'canary-password-7f3a9'
    pve.fault = (call) =>
      call.method === 'updateConfig'
        ? new Error(`400 Parameter verification failed: cipassword: bad value '${canaryPassword}'`)
        : undefined
    pve.addGuest({ vmid: 100, config: {} })
    const withSecrets = (vmid: number): Action =>
      makeAction({
        type: 'update',
        vmid,
        requests: [
          {
            call: 'updateConfig',
            node: 'pve1',
            guest: 'qemu',
            vmid,
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
    const report = await execute(
      makePlan([withSecrets(100)]),
      pve,
      fast(pve, { secrets: (ref) => secrets[ref]!, onProgress: (e) => events.push(e) }),
    )
    const text = JSON.stringify({ report, events })
    expect(report.results[0]!.status).toBe('failed')
    expect(report.results[0]!.error).toBe(
      "update failed: 400 Parameter verification failed: cipassword: bad value '(sensitive)'",
    )
    expect(text).not.toContain('canary')
    expect(text).not.toContain('CANARY')
    // what went to PVE: resolved, de-duplicated, percent-encoded keys
    const sent = pve.writes()[0]!.args[3] as Record<string, string>
    expect(decodeURIComponent(sent.sshkeys!)).toBe(`${canaryKey}\nssh-ed25519 AAAAPUBLIC bob`)
    expect(sent.cipassword).toBe(canaryPassword)
  })

  it('fails an action whose secret cannot be resolved, naming the reference only', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100 })
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
    const noPort = await execute(makePlan([action]), pve, fast(pve))
    expect(noPort.results[0]!.error).toBe(
      'secret reference cloud-init.passwords.nope for parameter cipassword cannot be resolved: no secrets port was given to execute()',
    )
    const missing = await execute(
      makePlan([action]),
      pve,
      fast(pve, {
        secrets: () => {
          throw new Error('key cloud-init.passwords.nope not found')
        },
      }),
    )
    expect(missing.results[0]!.error).toBe(
      'secret reference cloud-init.passwords.nope for parameter cipassword cannot be resolved: Error',
    )
    expect(pve.writes()).toEqual([])
  })

  it("retries PVE's lock timeout with bounded backoff, then fails", async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100 })
    let failures = 2
    pve.taskFault = (t) =>
      t.type === 'qmconfig' && failures-- > 0
        ? "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout"
        : undefined
    const delays: number[] = []
    const update = makeAction({
      type: 'update',
      vmid: 100,
      requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid: 100, params: { memory: 2048 } }],
    })
    const said: string[] = []
    const ok = await execute(
      makePlan([update]),
      pve,
      fast(pve, {
        lockRetryDelayMs: 100,
        sleep: async (ms) => void delays.push(ms),
        onProgress: (e) => {
          if (e.type === 'retry') said.push(`${e.attempt}/${e.attempts} in ${e.delayMs}: ${e.reason}`)
          // each retry is reported before its wait
          if (e.type === 'retry') expect(delays).toHaveLength(said.length - 1)
        },
      }),
    )
    expect(ok.results[0]!.status).toBe('ok')
    expect(delays).toEqual([100, 200])
    expect(said).toEqual([
      "2/4 in 100: update: can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout",
      "3/4 in 200: update: can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout",
    ])
    failures = 10
    const failed = await execute(makePlan([update]), pve, fast(pve, { lockRetries: 2 }))
    expect(failed.results[0]!.error).toBe(
      "update failed: can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout",
    )
    expect(failed.results[0]!.tasks).toHaveLength(3)
  })

  it('treats start of a running guest and stop of a stopped one as done', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, status: 'running' })
    pve.addGuest({ type: 'lxc', vmid: 200, status: 'stopped' })
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
      pve,
      fast(pve),
    )
    expect(report.results.map((r) => r.status)).toEqual(['ok', 'ok'])
  })

  it('fails an action the read-back does not confirm', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100 })
    // a writer that answers OK but changes nothing
    const liar = Object.assign(Object.create(pve) as FakePve, {
      start: async () => ({ node: 'pve1', upid: (await pve.stop('pve1', 'qemu', 100)).upid }),
    })
    const report = await execute(
      makePlan([
        makeAction({ type: 'start', vmid: 100, requests: [{ call: 'start', node: 'pve1', guest: 'qemu', vmid: 100 }] }),
      ]),
      liar,
      fast(pve, { confirmAttempts: 2 }),
    )
    expect(report.results[0]).toMatchObject({
      status: 'failed',
      error: 'not confirmed by read-back: qemu 100 on pve1: power state is stopped, expected running',
    })
  })

  it('confirms an LXC template mark that PVE completes after answering', async () => {
    const pve = new FakePve()
    const g = pve.addGuest({ type: 'lxc', vmid: 200 })
    const lagging = Object.assign(Object.create(pve) as FakePve, {
      markTemplate: async () => {
        setTimeout(() => (g.config.template = '1'), 5)
        return null
      },
    })
    const report = await execute(
      makePlan([
        makeAction({
          type: 'mark-template',
          kind: 'TemplateCT',
          vmid: 200,
          requests: [{ call: 'markTemplate', node: 'pve1', guest: 'lxc', vmid: 200 }],
        }),
      ]),
      lagging,
      fast(pve, { confirmDelayMs: 5, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) }),
    )
    expect(report.results[0]!.status).toBe('ok')
  })

  it('runs prunes only after every other action, and actions on one guest in plan order', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, node: 'pve2', config: { tags: 'proxops' } })
    pve.addGuest({ vmid: 101, node: 'pve1' })
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
      pve,
      fast(pve, {
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
  })

  it('keeps at most 2 actions per node and 1 download per storage in flight', async () => {
    const pve = new FakePve()
    let inFlight = new Map<string, number>()
    let peakNode = 0
    let peakStorage = 0
    const slow = Object.assign(Object.create(pve) as FakePve, {
      waitTask: async (task: { node: string; upid: string }) => {
        const key = task.upid.includes(':download:') ? `storage:${task.node}` : `node:${task.node}`
        inFlight.set(key, (inFlight.get(key) ?? 0) + 1)
        if (key.startsWith('node')) peakNode = Math.max(peakNode, inFlight.get(key)!)
        else peakStorage = Math.max(peakStorage, inFlight.get(key)!)
        await new Promise((r) => setTimeout(r, 3))
        inFlight.set(key, inFlight.get(key)! - 1)
        return pve.waitTask(task)
      },
    })
    const creates = [100, 101, 102, 103, 104].map((vmid) => createVm(vmid, 'pve1'))
    const downloads = ['a.iso', 'b.iso', 'c.iso'].map((filename) =>
      makeAction({
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
      }),
    )
    const report = await execute(makePlan([...creates, ...downloads]), slow, fast(pve))
    expect(report.summary).toEqual({ actions: 8, ok: 8, failed: 0, skipped: 0 })
    expect(peakNode).toBe(2)
    expect(peakStorage).toBe(1)
    inFlight = new Map()
  })

  it('stops starting actions when cancelled and reports the rest as skipped', async () => {
    const pve = new FakePve()
    const controller = new AbortController()
    const actions = [100, 101, 102].map((vmid) => createVm(vmid))
    const report = await execute(
      makePlan(actions),
      pve,
      fast(pve, {
        nodeConcurrency: 1,
        signal: controller.signal,
        onProgress: (e) => e.type === 'action-started' && controller.abort(),
      }),
    )
    expect(report.results.map((r) => r.status)).toEqual(['ok', 'skipped', 'skipped'])
    expect(report.results[1]!.skip!.code).toBe('cancelled')
    expect(report.cancelled).toBe(true)
    expect(pve.guests.size).toBe(1)
  })

  it('reports task progress with the elapsed time', async () => {
    const pve = new FakePve()
    let clock = 0
    const slow = Object.assign(Object.create(pve) as FakePve, {
      waitTask: async (task: { node: string; upid: string }) => {
        clock += 7000
        await new Promise((r) => setTimeout(r, 30))
        return pve.waitTask(task)
      },
    })
    const events: ProgressEvent[] = []
    await execute(
      makePlan([createVm(100)]),
      slow,
      fast(pve, { progressIntervalMs: 10, now: () => clock, onProgress: (e) => events.push(e) }),
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
          const pve = new FakePve()
          const failing = new Set<string>()
          const actions = specs.map((s, i) => {
            const a = createVm(100 + i, s.node)
            if (s.fail) failing.add(String(100 + i))
            const dep = s.dep !== null && s.dep < i ? [`VM/${specs[s.dep]!.node}/${100 + s.dep}#create`] : []
            return { ...a, dependsOn: dep }
          })
          pve.taskFault = (t) => (failing.has(t.id) ? 'unable to create VM - storage full' : undefined)
          const report = await execute(makePlan(actions), pve, fast(pve))
          expect(report.results.map((r) => r.id)).toEqual(actions.map((a) => a.id))
          for (const [i, r] of report.results.entries()) {
            const depResult = actions[i]!.dependsOn.map((d) => report.results.find((x) => x.id === d)!)
            if (depResult.some((d) => d.status !== 'ok')) expect(r.status).toBe('skipped')
            else expect(r.status).toBe(specs[i]!.fail ? 'failed' : 'ok')
            expect(pve.guests.has(100 + i)).toBe(r.status === 'ok')
          }
        },
      ),
      { numRuns: 30 },
    )
  })
})

describe('execute: resize', () => {
  it('grows a disk and confirms the new size by reading it back', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, config: { scsi0: 'local-lvm:vm-100-disk-0,size=8G' } })
    const resize = makeAction({
      type: 'resize',
      vmid: 100,
      requests: [{ call: 'resizeDisk', node: 'pve1', guest: 'qemu', vmid: 100, disk: 'scsi0', size: '16G' }],
    })
    const report = await execute(makePlan([resize]), pve, fast(pve))
    expect(report.results[0]!.status).toBe('ok')
    expect(pve.guests.get(100)!.config.scsi0).toBe('local-lvm:vm-100-disk-0,size=16G')
  })

  it('fails a resize PVE answered OK for but that did not grow the disk', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, config: { scsi0: 'local-lvm:vm-100-disk-0,size=8G' } })
    const noop = Object.assign(Object.create(pve) as FakePve, { resizeDisk: async () => null })
    const resize = makeAction({
      type: 'resize',
      vmid: 100,
      requests: [{ call: 'resizeDisk', node: 'pve1', guest: 'qemu', vmid: 100, disk: 'scsi0', size: '16G' }],
    })
    const report = await execute(makePlan([resize]), noop, fast(pve, { confirmAttempts: 1 }))
    expect(report.results[0]!.error).toBe(
      `not confirmed by read-back: qemu 100 on pve1: disk scsi0 is ${8 * 1024 ** 3} bytes, expected at least ${16 * 1024 ** 3}`,
    )
  })

  it("reports PVE's refusal to shrink", async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 100, config: { scsi0: 'local-lvm:vm-100-disk-0,size=8G' } })
    const shrink = makeAction({
      type: 'resize',
      vmid: 100,
      requests: [{ call: 'resizeDisk', node: 'pve1', guest: 'qemu', vmid: 100, disk: 'scsi0', size: '4G' }],
    })
    const report = await execute(makePlan([shrink]), pve, fast(pve))
    expect(report.results[0]!.error).toBe('resize failed: shrinking disks is not supported')
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
})
