/**
 * What a backup job may select (selection.ts, after pve-manager PVE::VZDump get_included_guests): only guests
 * this entry manages, or a pool it owns whose guests it all manages; `all` never reaches another entry's guest
 * or a node this entry cannot see. Anything else is blocked in the plan with the reason, created or not.
 */
import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import type { Manifest } from '@proxops/schema'
import { plan } from '../../plan/plan.js'
import { backupJob, desired, inventory, orphan, policy, pool, vm } from '../../fixtures.test.helpers.js'
import type { LiveInventory, LivePool } from '../../inventory.js'
import type { Plan } from '../../plan-types.js'
import { desiredFields } from './fields.js'
import type { LiveBackupJob } from './types.js'

const A = { clusterEntry: 'a', pruneRatioLimit: 1 }
/** a guest of cluster entry b, and a hand-made one */
const theirs = (vmid: number, node = 'pve1') => orphan(vmid, 'proxops;proxops.b', { node })
const handMade = (vmid: number, node = 'pve1') => orphan(vmid, '', { node })
const livePool = (poolid: string, vmids: number[], comment = 'managed-by=proxops.a'): LivePool => ({
  poolid,
  comment,
  vmids,
  storages: [],
})
const jobOf = (p: Plan) => ({
  actions: p.actions.filter((a) => a.kind === 'BackupJob').map((a) => `${a.address}#${a.type}`),
  blocked: p.anomalies.filter((a) => a.code === 'unmanaged-selection').map((a) => a.message),
})
const planOf = (manifests: Manifest[], live: Partial<LiveInventory> & { guests?: LiveInventory['guests'] } = {}) =>
  jobOf(
    plan(
      desired(...manifests),
      inventory([...(live.guests ?? [])], { ...live, guests: [...(live.guests ?? [])] }),
      policy(A),
    ),
  )

describe('a backup job selects only what this entry manages', () => {
  it("vmids: another entry's guest (the red team's job 701, mode stop) is blocked in the plan, not created", () => {
    const job = backupJob('nightly', { mode: 'stop', selection: { vmids: [701] } })
    const r = planOf([job], { guests: [theirs(701)] })
    expect(r.actions).toEqual([])
    expect(r.blocked).toEqual([
      expect.stringMatching(
        /^it names guests this entry does not manage: 701 \(no guest of this cluster declares it\);.*not created$/,
      ),
    ])
  })

  it("vmids: a declared vmid held by another entry's guest is not this entry's either", () => {
    const job = backupJob('nightly', { selection: { vmids: [701] } })
    const r = planOf([job, vm('mine', 701)], { guests: [theirs(701)] })
    expect(r.blocked[0]).toContain('701 (owned by cluster entry b)')
    expect(r.actions).toEqual([])
  })

  it('vmids: declared guests are fine; an existing job that names a foreign guest is reported, never written', () => {
    expect(planOf([backupJob('nightly', { selection: { vmids: [100] } }), vm('mine', 100)]).actions).toEqual([
      'BackupJob/nightly#create',
    ])
    const job = backupJob('nightly', { selection: { vmids: [701] } })
    const onPve: LiveBackupJob = {
      id: 'nightly',
      values: Object.fromEntries(
        desiredFields(job.spec, { ownershipTag: 'proxops', clusterEntry: 'a' }).map((f) => [f.key, f.value]),
      ),
    }
    const r = planOf([job], { guests: [theirs(701)], backupJobs: { known: [onPve] } })
    expect(r.actions).toEqual([])
    expect(r.blocked[0]).toMatch(/not changed \(the job on PVE runs as it is until the selection is fixed\)$/)
  })

  it('pool: only a declared pool, not marked for another entry, whose guests this entry all manages', () => {
    const job = backupJob('nightly', { selection: { pool: 'web' } })
    expect(planOf([job]).blocked[0]).toContain('no Pool of this cluster declares')
    expect(
      planOf([job, pool('web')], { pools: { known: [livePool('web', [], 'managed-by=proxops.b')] } }).blocked[0],
    ).toContain("another entry's marker (managed-by=proxops.b)")
    const held = planOf([job, pool('web'), vm('mine', 100)], {
      guests: [handMade(705)],
      pools: { known: [livePool('web', [100, 705])] },
    })
    expect(held.blocked[0]).toContain(
      'pool web holds guests this entry does not manage: 705 (no guest of this cluster declares it)',
    )
    expect(planOf([job, pool('web'), vm('mine', 100)], { pools: { known: [livePool('web', [100])] } }).actions).toEqual(
      ['BackupJob/nightly#create'],
    )
    // the pools could not be read: what the job reaches is unknown, so nothing is written
    const unread = plan(desired(job, pool('web')), inventory([], { pools: { unreadable: 'HTTP 403' } }), policy(A))
    expect(unread.skips.filter((s) => s.address === 'BackupJob/nightly').map((s) => s.code)).toEqual(['unknown'])
  })

  it("all: reaches hand-made guests (that is what it means), never another entry's unless excluded", () => {
    const all = (exclude: number[] = [], node?: string) =>
      backupJob('everything', { selection: { all: true, exclude }, ...(node ? { node } : {}) })
    expect(planOf([all()], { guests: [handMade(500)] }).actions).toEqual(['BackupJob/everything#create'])
    expect(planOf([all()], { guests: [theirs(701), theirs(702, 'pve2')] }).blocked[0]).toContain(
      'all: true reaches guests of another cluster entry: 701 (owned by cluster entry b), 702 (owned by cluster entry b); exclude them',
    )
    expect(planOf([all([701, 702])], { guests: [theirs(701), theirs(702, 'pve2')] }).actions).toHaveLength(1)
    // `node` limits what it reaches (get_included_guests skips the guests of other nodes)
    expect(planOf([all([], 'pve2')], { guests: [theirs(701)] }).actions).toHaveLength(1)
    // an entry limited to some nodes cannot see who owns the guests of the others
    const limited = (job: Manifest) =>
      jobOf(plan(desired(job), inventory([], { nodesOutside: ['pve4'] }), policy({ ...A, nodes: ['pve1'] })))
    expect(limited(all()).blocked[0]).toContain('all: true reaches the guests of pve4, outside this entry')
    expect(limited(all([], 'pve1')).actions).toEqual(['BackupJob/everything#create'])
  })
})

// ------------------------------------------------------------------------------------------- property

const ownerArb = fc.constantFrom('mine', 'theirs', 'hand')
const estateArb = fc.record({
  guests: fc.array(
    fc.record({ vmid: fc.integer({ min: 100, max: 109 }), owner: ownerArb, node: fc.constantFrom('pve1', 'pve2') }),
    {
      maxLength: 6,
    },
  ),
  selection: fc.oneof(
    fc.uniqueArray(fc.integer({ min: 100, max: 109 }), { minLength: 1, maxLength: 4 }).map((vmids) => ({ vmids })),
    fc.constant({ pool: 'web' }),
    fc.uniqueArray(fc.integer({ min: 100, max: 109 }), { maxLength: 3 }).map((exclude) => ({ all: true, exclude })),
  ),
  inPool: fc.uniqueArray(fc.integer({ min: 100, max: 109 }), { maxLength: 4 }),
  node: fc.option(fc.constantFrom('pve1', 'pve2'), { nil: undefined }),
})

test.prop([estateArb], { numRuns: 200 })(
  "whenever a job is written, every guest PVE would run it on (get_included_guests) is one this entry manages, or for all: no other entry's",
  (e) => {
    const byVmid = new Map(e.guests.map((g) => [g.vmid, g]))
    const guests = [...byVmid.values()].map((g) =>
      g.owner === 'mine'
        ? orphan(g.vmid, 'proxops;proxops.a', { node: g.node })
        : g.owner === 'theirs'
          ? theirs(g.vmid, g.node)
          : handMade(g.vmid, g.node),
    )
    const mine = [...byVmid.values()]
      .filter((g) => g.owner === 'mine')
      .map((g) => vm(`g${g.vmid}`, g.vmid, { node: g.node }))
    const job = backupJob('job', { selection: e.selection, ...(e.node ? { node: e.node } : {}) })
    const p = plan(
      desired(job, pool('web'), ...mine),
      inventory(guests, { pools: { known: [livePool('web', e.inPool)] } }),
      policy({ ...A, pruneBudget: 0 }),
    )
    const written = p.actions.some((a) => a.kind === 'BackupJob')
    const blocked = p.anomalies.some((a) => a.code === 'unmanaged-selection')
    expect(written).not.toBe(blocked)
    if (!written) return
    const managed = new Set(mine.map((m) => m.spec.vmid))
    const sel = e.selection
    // PVE::VZDump get_included_guests: the selected vmids, on the job's node when it has one
    const reached =
      'vmids' in sel
        ? sel.vmids
        : 'pool' in sel
          ? e.inPool
          : guests.map((g) => g.vmid).filter((v) => !sel.exclude.includes(v))
    const onNode = reached.filter(
      (v) => e.node === undefined || byVmid.get(v)?.node === undefined || byVmid.get(v)?.node === e.node,
    )
    if ('all' in sel) for (const v of onNode) expect(byVmid.get(v)?.owner).not.toBe('theirs')
    else for (const v of reached) expect(managed.has(v), `guest ${v}`).toBe(true)
  },
)
