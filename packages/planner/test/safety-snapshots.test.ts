/**
 * Safety snapshots against the simulator (pve-guest-common PVE::AbstractConfig snapshot_create and
 * snapshot_delete behind qemu-server's `snapshot` / `delsnapshot`): the snapshot is taken before the guest's
 * disruptive change, older proxops-* snapshots are pruned to the newest N, other snapshots are never touched,
 * and the change that follows still sends a digest PVE accepts (a snapshot rewrites the config file).
 */
import { describe, expect, it } from 'vitest'
import { observe, plan, execute, DEFAULT_POLICY } from '../src/index.js'
import { useEnv, actionLines, adminCall, cycle, failures, testVm } from './helpers.js'

const env = useEnv()

const policy = { safetySnapshots: { keep: 2 }, pruneBudget: 0 }
const at = Date.parse('2026-12-01T20:00:00Z')
const names = async (vmid: number) => (await env.client.snapshots('pve1', 'qemu', vmid)).map((s) => s.name).sort()
const snapshot = async (vmid: number, name: string, description?: string) =>
  env.client.waitTaskOk(
    await env.client.createSnapshot('pve1', 'qemu', vmid, name, description !== undefined ? { description } : {}),
    { pollIntervalMs: 10 },
  )
/** the mark this entry's safety snapshots carry (no cluster entry in this policy: the ownership tag alone) */
const MARKED = 'managed-by=proxops safety snapshot taken before a disruptive change'

describe('safety snapshots (simulator)', () => {
  it('snapshot first, prune to the newest 2 marked proxops-* only, then the restart-class change and the resize', async () => {
    expect(failures((await cycle(env, [testVm(160)], { policy })).report)).toEqual([])
    await snapshot(160, 'before-upgrade')
    await snapshot(160, 'proxops-20200101T000000Z', MARKED)
    await snapshot(160, 'proxops-20200102T000000Z', MARKED)
    // an admin's snapshot named like ProxOps' (the red team's): never rotated, and reported
    await snapshot(160, 'proxops-20191231T000000Z', 'my own pre-upgrade state, keep!')
    const changed = [testVm(160, { cpu: { type: 'host', cores: 4 }, disks: [{ storage: 'local-lvm', size: '10GiB' }] })]
    const started = Date.now()
    const run = await cycle(env, changed, { policy, execute: { now: () => at + (Date.now() - started) } })
    expect(actionLines(run.plan)).toEqual([
      'snapshot VM/pve1/160(vm160)',
      'shutdown-then-update VM/pve1/160(vm160)',
      'resize VM/pve1/160(vm160)',
    ])
    expect(failures(run.report)).toEqual([])
    // the newest two marked proxops-* (the new one included); the admin's snapshots stay, the lookalike noted
    expect(await names(160)).toEqual([
      'before-upgrade',
      'proxops-20191231T000000Z',
      'proxops-20200102T000000Z',
      'proxops-20261201T200000Z',
    ])
    expect(run.report?.results[0]?.notes).toEqual([
      expect.stringMatching(/^left snapshot proxops-20191231T000000Z alone: .*mark managed-by=proxops /),
    ])
    const taken = (await env.client.snapshots('pve1', 'qemu', 160)).find((s) => s.name === 'proxops-20261201T200000Z')
    expect(taken?.description).toBe(MARKED)
    const g = env.sim.control.guest(160)!
    expect(g.config.cores).toBe('4')
    expect(g.config.scsi0).toMatch(/size=10G/)
    expect(g.config.parent).toBe('proxops-20261201T200000Z')
    expect(g.status).toBe('running')
    // the snapshot keeps the config from before the change
    const snap = (await env.client.get('/nodes/pve1/qemu/160/snapshot/proxops-20261201T200000Z/config')) as {
      cores: number
    }
    expect(snap.cores).toBe(2)
    // converged: the snapshot (`parent`) is no drift
    expect((await cycle(env, changed, { policy, dryRun: true })).plan.actions).toEqual([])
  })

  it('a config edited after the plan: the snapshot fails on the digest and the change waiting for it is deferred', async () => {
    const changed = [testVm(160, { cpu: { type: 'host', cores: 6 }, disks: [{ storage: 'local-lvm', size: '10GiB' }] })]
    const live = await observe('homelab', env.reader)
    const p = plan({ cluster: 'homelab', manifests: changed }, live, { ...DEFAULT_POLICY, ...policy })
    expect(p.actions.map((a) => a.type)).toEqual(['snapshot', 'shutdown-then-update'])
    env.sim.control.driftSet(160, 'description', 'edited by hand')
    const report = await execute(p, env.writer, { reader: env.reader, taskPollIntervalMs: 10 })
    expect(report.results.map((r) => r.status)).toEqual(['failed', 'skipped'])
    expect(report.results[0]!.error).toMatch(/changed since plan \(digest mismatch\)/)
    expect(await names(160)).toEqual([
      'before-upgrade',
      'proxops-20191231T000000Z',
      'proxops-20200102T000000Z',
      'proxops-20261201T200000Z',
    ])
    expect(env.sim.control.guest(160)!.config.cores).toBe('4')
  })

  it('a raw disk on a dir storage: an anomaly, no snapshot and no disruptive change', async () => {
    // a directory storage for images: PVE allocates raw there unless told otherwise
    await adminCall(env, 'POST', '/storage', { storage: 'vmdir', type: 'dir', path: '/srv/vm', content: 'images' })
    const onDir = { disks: [{ storage: 'vmdir', size: '1GiB' }] }
    expect(failures((await cycle(env, [testVm(161, onDir)], { policy })).report)).toEqual([])
    const grow = [testVm(161, { disks: [{ storage: 'vmdir', size: '2GiB' }] })]
    const p = (await cycle(env, grow, { policy })).plan
    expect(p.actions).toEqual([])
    expect(p.anomalies.map((a) => [a.code, a.field])).toEqual([['snapshot-unsupported', 'scsi0']])
    // PVE agrees: snapshot_create refuses the guest
    const refused = await env.client.waitTask(await env.client.createSnapshot('pve1', 'qemu', 161, 'manual'), {
      pollIntervalMs: 10,
    })
    expect(refused.exitstatus).toBe('snapshot feature is not available')
  })
})
