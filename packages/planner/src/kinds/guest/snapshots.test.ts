/** Safety snapshots at the plan level (docs/safety.md, "Safety snapshots"). */
import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { drift2Arb } from '../../arbitraries.test.helpers.js'
import {
  artifact,
  desired,
  GiB,
  inventory,
  liveCt,
  liveVm,
  lookup,
  lxc,
  policy,
  vm,
} from '../../fixtures.test.helpers.js'
import type { DesiredState } from '../../desired.js'
import type { LiveInventory, LiveStorage } from '../../inventory.js'
import type { Action, Plan, Policy } from '../../plan-types.js'
import { serializePlan } from '../../serialize.js'
import { simApply, simCycle, withSim } from '../../test-support/sim.js'
import { plan } from '../../plan/plan.js'
import {
  isSnapshotTrigger,
  isStoppingMove,
  safetySnapshotDescription,
  safetySnapshotName,
  safetySnapshotsOf,
  snapshotProblem,
  volumeProblem,
} from './snapshots.js'

const storage = (name: string, type: string, node = 'pve1'): LiveStorage => ({
  node,
  storage: name,
  type,
  content: ['images', 'rootdir'],
  active: true,
  enabled: true,
  shared: false,
})
const on = (over: Partial<Policy> = {}) => policy({ safetySnapshots: { keep: 2 }, ...over })
const lvm = [storage('local-lvm', 'lvmthin'), storage('local', 'dir')]
const types = (p: Plan) => p.actions.map((a) => `${a.type}${a.type === 'resize' ? `:${a.id.split(':').pop()}` : ''}`)
const annotated = <M extends { metadata: object }>(m: M, value: string): M => ({
  ...m,
  metadata: { ...m.metadata, annotations: { 'proxops/safety-snapshots': value } },
})

describe('which changes take a safety snapshot', () => {
  // a running VM with a reboot-class change (iothread on its disk) and a disk to grow
  const m = vm('web', 100, {
    memory: 4096,
    disks: [{ storage: 'local-lvm', size: 40 * GiB, interface: 'scsi0', iothread: true }],
  })
  const live = () => inventory([liveVm(100, 'web')], { storages: lvm })

  it('a restart-class change and a resize wait for one snapshot action, which comes first; keep is in the request', () => {
    const p = plan(desired(m), live(), on())
    expect(types(p)).toEqual(['snapshot', 'shutdown-then-update'])
    const [snap, update] = p.actions as [Action, Action]
    expect(snap.id).toBe('VM/pve1/100(web)#snapshot')
    expect(snap.requests).toEqual([
      {
        call: 'snapshot',
        node: 'pve1',
        guest: 'qemu',
        vmid: 100,
        keep: 2,
        digest: liveVm(100, 'web').digest,
        mark: 'managed-by=proxops',
      },
    ])
    expect(snap.digest).toBe(liveVm(100, 'web').digest)
    expect(update.dependsOn).toContain(snap.id)
    expect(p.summary.snapshot).toBe(1)
    // the same plan without the policy: no snapshot, nothing else changes
    const off = plan(desired(m), live(), policy())
    expect(types(off)).toEqual(['shutdown-then-update'])
    expect(off.actions[0]?.requests).toEqual(update.requests)
  })

  it('a separate resize (no rewrite of its slot) depends on the snapshot too; a hotplug-only update takes none', () => {
    const grow = vm('web', 100, {
      memory: 2048,
      disks: [{ storage: 'local-lvm', size: 40 * GiB, interface: 'scsi0', iothread: false }],
    })
    const p = plan(desired(grow), live(), on())
    expect(types(p)).toEqual(['snapshot', 'resize:scsi0'])
    expect(p.actions[1]?.dependsOn).toEqual(['VM/pve1/100(web)#snapshot'])
    // tags and the description are written live: nothing to snapshot for
    const live2 = inventory([liveVm(100, 'web', { tags: 'proxops;old' })], { storages: lvm })
    const q = plan(desired(vm('web', 100)), live2, on())
    expect(q.actions.map((a) => [a.type, a.disruption])).toEqual([['update', 'none']])
  })

  it('a stopped guest: a disk resize still takes one; a start or a stop the manifest asks for takes none', () => {
    const stopped = inventory([liveVm(100, 'web', {}, { status: 'stopped' })], { storages: lvm })
    const grow = vm('web', 100, {
      disks: [{ storage: 'local-lvm', size: 40 * GiB, interface: 'scsi0', iothread: false }],
    })
    expect(types(plan(desired({ ...grow, spec: { ...grow.spec, state: 'stopped' } }), stopped, on()))).toEqual([
      'snapshot',
      'resize:scsi0',
    ])
    expect(types(plan(desired(vm('web', 100)), stopped, on()))).toEqual(['start'])
    const running = inventory([liveVm(100, 'web')], { storages: lvm })
    const m2 = vm('web', 100)
    expect(types(plan(desired({ ...m2, spec: { ...m2.spec, state: 'stopped' } }), running, on()))).toEqual(['stop'])
  })

  it('the annotation overrides the cluster: "false" opts a guest out, "true" opts it in (keep 3 without a policy)', () => {
    expect(types(plan(desired(annotated(m, 'false')), live(), on()))).toEqual(['shutdown-then-update'])
    const p = plan(desired(annotated(m, 'true')), live(), policy())
    expect(types(p)).toEqual(['snapshot', 'shutdown-then-update'])
    expect(p.actions[0]?.requests[0]).toMatchObject({ call: 'snapshot', keep: 3 })
  })

  it('LXC: a reboot-class change of a running CT (its rootfs options) takes one', () => {
    const ct = lxc('cache', 200, { root: { storage: 'local-lvm', size: 16 * GiB } })
    const tmpl = artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst')
    const vol = { node: 'pve1', storage: 'local', volid: 'local:vztmpl/debian-12.tar.zst', content: 'vztmpl' }
    const p = plan(desired(tmpl, ct), inventory([liveCt(200, 'cache')], { storages: lvm, volumes: [vol] }), on())
    expect(types(p)[0]).toBe('snapshot')
    expect(p.actions[0]?.requests[0]).toMatchObject({ call: 'snapshot', guest: 'lxc', vmid: 200 })
    for (const a of p.actions.slice(1)) if (isSnapshotTrigger(a)) expect(a.dependsOn).toContain(p.actions[0]?.id)
  })
})

describe('volumes PVE cannot snapshot (PVE::Storage::volume_has_feature)', () => {
  const m = vm('web', 100, {
    memory: 4096,
    disks: [{ storage: 'local', size: 32 * GiB, interface: 'scsi0', iothread: true }],
  })

  it('a raw volume on a dir storage: an anomaly naming the disk and the way out, no disruptive action', () => {
    const live = liveVm(100, 'web', { scsi0: 'local:100/vm-100-disk-0.raw,size=32G', tags: 'proxops;old' })
    const p = plan(desired(m), inventory([live], { storages: lvm }), on())
    expect(p.anomalies.map((a) => [a.code, a.field])).toEqual([['snapshot-unsupported', 'scsi0']])
    expect(p.anomalies[0]?.message).toContain('local:100/vm-100-disk-0.raw')
    expect(p.anomalies[0]?.message).toContain('proxops/safety-snapshots: "false"')
    expect(p.actions).toEqual([])
    // the same guest on qcow2 snapshots
    const qcow = liveVm(100, 'web', { scsi0: 'local:100/vm-100-disk-0.qcow2,size=32G' })
    expect(types(plan(desired(m), inventory([qcow], { storages: lvm }), on()))).toEqual([
      'snapshot',
      'shutdown-then-update',
    ])
  })

  it('an undeclared storage type (or an unlisted storage) is left to PVE; iSCSI, base volumes and paths are refused', () => {
    const t = (s: string) => (s === 'store' ? 'btrfs' : s === 'lun' ? 'iscsi' : s === 'dir' ? 'dir' : undefined)
    expect(volumeProblem('store:vm-100-disk-0', t)).toBeUndefined()
    expect(volumeProblem('unlisted:vm-100-disk-0', t)).toBeUndefined()
    expect(volumeProblem('lun:0.0.1.scsi-36001', t)).toMatch(/iscsi storage lun has no snapshots/)
    expect(volumeProblem('dir:100/base-100-disk-0.qcow2', t)).toMatch(/base volume/)
    expect(volumeProblem('dir:100/base-100-disk-0.qcow2/101/vm-101-disk-0.qcow2', t)).toBeUndefined()
    expect(volumeProblem('/dev/sdb', t)).toMatch(/not a storage volume/)
    // CD-ROMs and the cloud-init drive are not snapshotted; a bind mount point is refused
    expect(
      snapshotProblem('qemu', { ide2: 'dir:iso/x.iso,media=cdrom', ide0: 'dir:vm-100-cloudinit,media=cdrom' }, t),
    ).toBeUndefined()
    expect(snapshotProblem('lxc', { rootfs: 'store:subvol-200-disk-0', mp0: '/srv/data,mp=/data' }, t)).toEqual({
      key: 'mp0',
      volume: '/srv/data',
      reason: 'not a storage volume (a path or device)',
    })
  })

  it('a guest opted out has no anomaly and its changes as without the policy', () => {
    const live = liveVm(100, 'web', { scsi0: 'local:100/vm-100-disk-0.raw,size=32G' })
    const p = plan(desired(annotated(m, 'false')), inventory([live], { storages: lvm }), on())
    expect(p.anomalies).toEqual([])
    expect(types(p)).toEqual(['shutdown-then-update'])
  })
})

describe('templates (qemu-server / pve-container `template` refuse a guest with snapshots)', () => {
  it('a guest being converted takes no snapshot; one that has snapshots is an anomaly, not a conversion', () => {
    const t = vm('golden', 150, { memory: 4096 }, 'TemplateVM')
    const stopped = liveVm(150, 'golden', {}, { status: 'stopped' })
    const p = plan(desired(t), inventory([stopped], { storages: lvm }), on())
    expect(types(p)).toEqual(['update', 'mark-template'])
    const withSnap = liveVm(150, 'golden', { parent: 'before-upgrade' }, { status: 'stopped' })
    const q = plan(desired(t), inventory([withSnap], { storages: lvm }), on())
    expect(types(q)).toEqual(['update'])
    expect(q.anomalies.map((a) => a.code)).toEqual(['template-snapshots'])
    expect(q.anomalies[0]?.message).toContain('before-upgrade')
  })
})

/** every storage the arbitraries use, of one snapshot-capable type or not */
const storagesArb = fc.record({
  lvm: fc.constantFrom('lvmthin', 'dir', 'iscsi'),
  zfs: fc.constantFrom('zfspool', 'dir'),
})
const withStorages = (inv: LiveInventory, s: { lvm: string; zfs: string }): LiveInventory => ({
  ...inv,
  storages: ['pve1', 'pve2', 'pve3'].flatMap((n) => [storage('local-lvm', s.lvm, n), storage('local-zfs', s.zfs, n)]),
})

describe('properties', () => {
  /** `a` applied on a fresh simulator, then what it shows, observed for `b` */
  const converged = (a: DesiredState, b: DesiredState, p: Policy) =>
    withSim(undefined, async (env) => {
      await simApply(env, a, p, lookup)
      return (await simCycle(env, b, p, { secrets: lookup })).live
    })

  test.prop([drift2Arb, storagesArb, fc.integer({ min: 1, max: 5 })], { numRuns: 80 })(
    'a disruptive action waits for its guest snapshot, or the guest has a snapshot-unsupported anomaly and none; nothing else changes',
    async ([a, b], st, keep) => {
      const pol = on({ pruneRatioLimit: 1, safetySnapshots: { keep } })
      // the simulator's storages are snapshot-capable; the plan is made over storage types of every kind
      const live = withStorages(await converged(a, b, policy({ pruneRatioLimit: 1 })), st)
      const p = plan(b, live, pol, { secrets: lookup })
      const off = plan(b, live, policy({ pruneRatioLimit: 1 }), { secrets: lookup })
      const refused = new Set(p.anomalies.filter((x) => x.code === 'snapshot-unsupported').map((x) => x.address))
      const snaps = new Map(p.actions.filter((x) => x.type === 'snapshot').map((x) => [x.address, x]))
      for (const act of p.actions) {
        if (!isSnapshotTrigger(act)) continue
        expect(refused.has(act.address)).toBe(false)
        // PVE snapshots no template, and converts no guest with snapshots
        if (act.kind === 'TemplateVM' || act.kind === 'TemplateCT') {
          expect(snaps.has(act.address)).toBe(false)
          continue
        }
        const snap = snaps.get(act.address)
        expect(snap?.requests[0]).toMatchObject({ call: 'snapshot', keep })
        expect(act.dependsOn).toContain(snap?.id)
        expect(p.actions.indexOf(snap as Action)).toBeLessThan(p.actions.indexOf(act))
      }
      // one snapshot per guest, only for guests with a disruptive action
      for (const [address] of snaps)
        expect(p.actions.some((x) => x.address === address && isSnapshotTrigger(x))).toBe(true)
      // the rest of the plan is the plan without the policy, less the refused guests' disruptive actions
      // (a dropped action is no longer waited for by the ones kept)
      const kept = off.actions.filter((x) => !(refused.has(x.address) && (isSnapshotTrigger(x) || isStoppingMove(x))))
      const ids = new Set(kept.map((x) => x.id))
      const strip = (x: Action) => ({
        ...x,
        dependsOn: x.dependsOn.filter((id) => !id.endsWith('#snapshot') && ids.has(id)),
      })
      expect(p.actions.filter((x) => x.type !== 'snapshot').map(strip)).toEqual(kept.map(strip))
      expect(serializePlan(plan(b, live, pol, { secrets: lookup }))).toBe(serializePlan(p))
    },
  )

  test.prop([drift2Arb], { numRuns: 60 })(
    'convergence with safety snapshots on (lvmthin and zfspool): one apply, then the plan is empty',
    ([a, b]) =>
      withSim(undefined, async (env) => {
        const pol = on({ pruneRatioLimit: 1 })
        for (const d of [a, b]) await simApply(env, d, pol, lookup)
        expect((await simCycle(env, b, pol, { secrets: lookup })).plan.actions).toEqual([])
      }),
  )
})

describe("which snapshots are this entry's (the rotation deletes only those)", () => {
  const MARK = 'managed-by=proxops.lab'
  const snapshotArb = fc.record({
    name: fc.oneof(
      fc.integer({ min: 0, max: 4e12 }).map(safetySnapshotName),
      fc.constantFrom('before-upgrade', 'proxops-manual', 'proxops-20200101T000000Z', 'proxops-20200101T000000Z-2'),
    ),
    description: fc.option(
      fc.constantFrom(
        safetySnapshotDescription(MARK),
        safetySnapshotDescription('managed-by=proxops.other'),
        safetySnapshotDescription('managed-by=proxops'),
        'safety snapshot taken by proxops before a disruptive change',
        'my own pre-upgrade state, keep!',
        `  ${MARK}  indented`,
      ),
      { nil: undefined },
    ),
    snaptime: fc.integer({ min: 0, max: 2e9 }),
  })

  test.prop([fc.array(snapshotArb, { maxLength: 8 })])(
    "ours: named proxops-<UTC time> and described with this entry's mark first; every other proxops-<time> is a lookalike",
    (snapshots) => {
      const { ours, lookalikes } = safetySnapshotsOf(snapshots, MARK)
      for (const s of snapshots) {
        const named = /^proxops-\d{8}T\d{6}Z(?:-\d+)?$/.test(s.name)
        const marked = (s.description ?? '').trim().split(/\s+/)[0] === MARK
        expect(ours.includes(s)).toBe(named && marked)
        expect(lookalikes.includes(s)).toBe(named && !marked)
      }
      // oldest first: the rotation deletes from the front
      for (let i = 1; i < ours.length; i++)
        expect(ours[i - 1]!.snaptime ?? 0).toBeLessThanOrEqual(ours[i]!.snaptime ?? 0)
    },
  )

  it("the red team's snapshot: named like ProxOps' and described by hand, it is a lookalike", () => {
    const mine = { name: 'proxops-20200101T000000Z', description: 'my own pre-upgrade state, keep!', snaptime: 1 }
    expect(safetySnapshotsOf([mine], MARK)).toEqual({ ours: [], lookalikes: [mine] })
  })
})
