/**
 * A VM's whole lifecycle against the simulator through the real client: create, drift, update (hot and
 * reboot-class), power, delete; plus the ownership and budget rules around prunes.
 */
import { describe, expect, it } from 'vitest'
import { useEnv, actionLines, cycle, failures, testVm } from './helpers.js'

const env = useEnv()

const vm = (vmid: number, spec: Record<string, unknown> = {}, name?: string) =>
  testVm(vmid, { tags: ['web'], ...spec }, name)

describe('VM lifecycle (simulator)', () => {
  it('creates, converges, corrects drift, applies a reboot-class change, powers off and prunes (E2ECreatesConverges)', async () => {
    const desired = [vm(101)]
    const created = await cycle(env, desired)
    expect(actionLines(created.plan)).toEqual(['create VM/pve1/101(vm101)'])
    expect(failures(created.report)).toEqual([])
    const g = env.sim.control.guest(101)!
    expect(g.status).toBe('running')
    expect(g.config.tags).toBe('proxops;web')

    const again = await cycle(env, desired, { dryRun: true })
    expect(actionLines(again.plan)).toEqual([])

    // drift: someone changes memory by hand
    env.sim.control.driftSet(101, 'memory', '2048')
    const drift = await cycle(env, desired)
    expect(drift.plan.actions).toHaveLength(1)
    expect(drift.plan.actions[0]!.diffs.map((d) => [d.key, d.before, d.after])).toContainEqual([
      'memory',
      '2048',
      '1024',
    ])
    expect(failures(drift.report)).toEqual([])
    expect((await cycle(env, desired, { dryRun: true })).plan.actions).toEqual([])

    // a reboot-class change on a running VM: write (held pending), graceful shutdown, start
    const faster = [vm(101, { cpu: { type: 'host', cores: 4 } })]
    const reboot = await cycle(env, faster)
    expect(reboot.plan.actions.map((a) => [a.type, a.disruption])).toEqual([['shutdown-then-update', 'reboot']])
    expect(failures(reboot.report)).toEqual([])
    expect(env.sim.control.guest(101)).toMatchObject({
      status: 'running',
      config: expect.objectContaining({ cores: '4' }),
      pending: {},
    })
    expect((await cycle(env, faster, { dryRun: true })).plan.actions).toEqual([])

    // power
    const stopped = [vm(101, { cpu: { type: 'host', cores: 4 }, state: 'stopped' })]
    const stop = await cycle(env, stopped)
    expect(stop.plan.actions.map((a) => a.type)).toEqual(['stop'])
    expect(failures(stop.report)).toEqual([])
    expect(env.sim.control.guest(101)!.status).toBe('stopped')
    expect((await cycle(env, stopped, { dryRun: true })).plan.actions).toEqual([])

    // delete: the manifest goes away, the tagged VM is pruned (E2EPruneTaggedOrphan)
    const pruned = await cycle(env, [], { policy: { allowEmpty: ['VM'], pruneRatioLimit: 1 } })
    expect(pruned.plan.actions.map((a) => `${a.type} ${a.vmid}`)).toEqual(['delete 101'])
    expect(failures(pruned.report)).toEqual([])
    expect(env.sim.control.guest(101)).toBeUndefined()
  })

  it('with disruption none, leaves a reboot-class change pending and reports it', async () => {
    const desired = [vm(102)]
    expect(failures((await cycle(env, desired)).report)).toEqual([])
    const changed = [vm(102, { cpu: { type: 'host', cores: 3 } })]
    const held = await cycle(env, changed, { policy: { disruption: 'none' } })
    expect(held.plan.actions.filter((a) => a.type === 'shutdown-then-update' || a.type === 'restart')).toEqual([])
    expect(failures(held.report)).toEqual([])
    expect(env.sim.control.guest(102)!.status).toBe('running')
    const after = await cycle(env, changed, { policy: { disruption: 'none' }, dryRun: true })
    expect(after.plan.actions.filter((a) => a.type === 'shutdown-then-update' || a.type === 'restart')).toEqual([])
    expect([...after.plan.pending, ...after.plan.skips].length).toBeGreaterThan(0)
    await cycle(env, [], { policy: { allowEmpty: ['VM'], pruneRatioLimit: 1, pruneBudget: 'unlimited' } })
    expect(env.sim.control.guest(102)).toBeUndefined()
  })

  it('prunes within the budget, never untagged objects, and keeps desired ones (E2EPruneRespectsBudget, E2EPruneUntaggedIgnored)', async () => {
    const keep = vm(110)
    const orphans = [111, 112, 113].map((id) => vm(id))
    expect(failures((await cycle(env, [keep, ...orphans])).report)).toEqual([])
    // an untagged VM made by hand
    const task = await env.client.createGuest('pve1', 'qemu', { vmid: 119, name: 'handmade', memory: 512 })
    await env.client.waitTask(task, { pollIntervalMs: 10 })
    const before = env.sim.control.guest(119)!.digest

    const first = await cycle(env, [keep], { policy: { pruneBudget: 2, pruneRatioLimit: 1 } })
    expect(first.plan.actions.filter((a) => a.type === 'delete')).toHaveLength(2)
    expect(first.plan.skips.filter((s) => s.code === 'prune-budget').map((s) => s.vmid)).toHaveLength(1)
    expect(first.plan.skips.filter((s) => s.code === 'untagged').map((s) => s.vmid)).toEqual([119])
    expect(failures(first.report)).toEqual([])
    const left = [111, 112, 113].filter((id) => env.sim.control.guest(id))
    expect(left).toHaveLength(1)
    expect(env.sim.control.guest(110)).toBeDefined()
    expect(env.sim.control.guest(119)!.digest).toBe(before)

    const second = await cycle(env, [keep], { policy: { pruneBudget: 2, pruneRatioLimit: 1 } })
    expect(second.plan.actions.map((a) => a.vmid)).toEqual(left)
    expect(failures(second.report)).toEqual([])
    expect(env.sim.control.guest(119)!.digest).toBe(before)
  })

  it('suppresses every prune when the desired set of a kind is empty (E2EAnomalySuppressesPrune) and a diff never writes (E2EDiffIsDryRun)', async () => {
    const ids = [120, 121, 122, 123]
    expect(
      failures(
        (
          await cycle(
            env,
            ids.map((id) => vm(id)),
          )
        ).report,
      ),
    ).toEqual([])
    const writes = env.client.writes
    const dry = await cycle(env, [], { dryRun: true })
    expect(env.client.writes).toBe(writes)
    expect(dry.plan.actions.filter((a) => a.type === 'delete')).toEqual([])
    expect(dry.plan.anomalies.map((a) => a.code)).toContain('empty-desired')
    const applied = await cycle(env, [])
    expect(applied.report!.results.filter((r) => r.type === 'delete')).toEqual([])
    for (const id of ids) expect(env.sim.control.guest(id)).toBeDefined()
    await cycle(env, [], { policy: { allowEmpty: ['VM'], pruneRatioLimit: 1, pruneBudget: 'unlimited' } })
  })

  it('grows a disk in place (PUT resize) and never shrinks one', async () => {
    const small = [vm(140)]
    expect(failures((await cycle(env, small, { policy: { pruneBudget: 0 } })).report)).toEqual([])
    const volume = env.sim.control.guest(140)!.config.scsi0!.split(',')[0]
    const bigger = [vm(140, { disks: [{ storage: 'local-lvm', size: '12GiB' }] })]
    const grow = await cycle(env, bigger, { policy: { pruneBudget: 0 } })
    expect(grow.plan.actions.map((a) => a.type)).toEqual(['resize'])
    expect(failures(grow.report)).toEqual([])
    expect(env.sim.control.guest(140)!.config.scsi0).toMatch(new RegExp(`^${volume},.*size=12G`))
    expect((await cycle(env, bigger, { policy: { pruneBudget: 0 }, dryRun: true })).plan.actions).toEqual([])
    const shrink = await cycle(env, small, { policy: { pruneBudget: 0 }, dryRun: true })
    expect(shrink.plan.actions).toEqual([])
    expect(shrink.plan.anomalies.map((a) => a.code)).toContain('volume-shrink')
  })

  it('fails an update whose config changed after the plan, and the next cycle re-plans (digest)', async () => {
    const desired = [vm(130)]
    expect(failures((await cycle(env, desired)).report)).toEqual([])
    const changed = [vm(130, { memory: '2GiB' })]
    const { observe, plan, execute, DEFAULT_POLICY } = await import('../src/index.js')
    const live = await observe('homelab', env.reader)
    const p = plan({ cluster: 'homelab', manifests: changed }, live, DEFAULT_POLICY)
    env.sim.control.driftSet(130, 'description', 'edited by hand')
    const report = await execute(p, env.writer, { reader: env.reader, taskPollIntervalMs: 10 })
    expect(report.results[0]!.status).toBe('failed')
    expect(report.results[0]!.error).toMatch(/checksum mismatch|changed/i)
    const next = await cycle(env, changed)
    expect(failures(next.report)).toEqual([])
    expect(env.sim.control.guest(130)!.config.memory).toBe('2048')
  })
})
