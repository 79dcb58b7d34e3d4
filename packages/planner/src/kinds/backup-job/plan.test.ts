import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { plan } from '../../plan/plan.js'
import { backupJob, desired, inventory, policy, selectedBy } from '../../fixtures.test.helpers.js'
import { commentMarker, commentOwner } from '../../kit/ownership.js'
import { desiredFields } from './fields.js'
import type { BackupJobManifest, BackupJobSpec } from '@proxops/schema'
import type { LiveBackupJob } from './types.js'

const TAG = { ownershipTag: 'proxops' }
const MARK = commentMarker(TAG)
const live = (id: string, values: Record<string, string>): LiveBackupJob => ({ id, values })
/** what PVE holds after creating `m` the way ProxOps does */
const applied = (m: BackupJobManifest): LiveBackupJob =>
  live(m.spec.id, Object.fromEntries(desiredFields(m.spec, TAG).map((f) => [f.key, f.value])))
/**
 * The backup-job part of the plan of `manifests` over `jobs`, with the guests and pools their selections name
 * declared as well (a job may select only those, selection.ts).
 */
function planOf(manifests: BackupJobManifest[], jobs: LiveBackupJob[], over = {}) {
  const named = selectedBy(manifests)
  const p = plan(desired(...manifests, ...named), inventory([], { backupJobs: { known: jobs } }), policy(over))
  const ofJobs = <T extends { kind?: string }>(xs: readonly T[]): T[] =>
    xs.filter((x) => x.kind === 'BackupJob' || x.kind === undefined)
  return { ...p, actions: ofJobs(p.actions), anomalies: ofJobs(p.anomalies), skips: ofJobs(p.skips) }
}

describe('planBackupJobs (PVE::API2::Backup create_job / update_job / delete_job)', () => {
  it('creates a missing job with the marker in its comment and every owned option', () => {
    const p = planOf([backupJob('nightly', { mode: 'stop', 'prune-backups': { 'keep-last': 3, 'keep-daily': 7 } })], [])
    expect(p.actions.map((a) => [a.address, a.type, a.node])).toEqual([['BackupJob/nightly', 'create', '']])
    expect(p.actions[0]?.requests).toEqual([
      {
        call: 'createBackupJob',
        params: {
          id: 'nightly',
          schedule: 'daily',
          storage: 'local',
          vmid: '100',
          mode: 'stop',
          'prune-backups': 'keep-daily=7,keep-last=3',
          enabled: '1',
          comment: MARK,
        },
      },
    ])
  })

  it('updates per field, and removes the selection keys of the old form', () => {
    const m = backupJob('nightly', { selection: { pool: 'prod' }, schedule: 'sat 21:00' })
    const p = planOf([m], [live('nightly', { schedule: 'daily', storage: 'local', vmid: '101,100', comment: MARK })])
    expect(p.actions[0]?.diffs).toEqual([
      { field: 'spec.schedule', key: 'schedule', before: 'daily', after: 'sat 21:00' },
      { field: 'spec.selection.pool', key: 'pool', after: 'prod' },
      { field: 'spec.selection', key: 'vmid', before: '100,101' },
    ])
    expect(p.actions[0]?.requests).toEqual([
      { call: 'updateBackupJob', id: 'nightly', params: { schedule: 'sat 21:00', pool: 'prod', delete: 'vmid' } },
    ])
  })

  it('claims a declared job without the marker by writing it; options it does not declare stay', () => {
    const p = planOf(
      [backupJob('nightly')],
      [live('nightly', { schedule: 'daily', storage: 'local', vmid: '100', mailto: 'ops@x' })],
    )
    expect(p.actions[0]?.reason).toMatch(/claimed/)
    expect(p.actions[0]?.requests).toEqual([{ call: 'updateBackupJob', id: 'nightly', params: { comment: MARK } }])
  })

  it('prunes only owned jobs git does not declare; unowned ones are reported, never touched', () => {
    const p = planOf(
      [backupJob('keep')],
      [
        applied(backupJob('keep')),
        applied(backupJob('gone')),
        applied(backupJob('gone2')),
        live('theirs', { comment: 'by hand' }),
      ],
      { pruneRatioLimit: 1 },
    )
    expect(p.actions.map((a) => `${a.address}#${a.type}`)).toEqual(['BackupJob/gone#delete', 'BackupJob/gone2#delete'])
    expect(p.skips.map((s) => [s.address, s.code])).toEqual([['BackupJob/theirs', 'untagged']])
  })

  describe('the marker names the cluster entry (two entries of one PVE cluster), as a pool marker does', () => {
    const a = { clusterEntry: 'a', pruneRatioLimit: 1 }
    const b = { clusterEntry: 'b', pruneRatioLimit: 1 }
    const ofEntry = (m: BackupJobManifest, entry: string) =>
      live(
        m.spec.id,
        Object.fromEntries(desiredFields(m.spec, { ...TAG, clusterEntry: entry }).map((f) => [f.key, f.value])),
      )

    it('JobsCarryTheEntryMarker: created with managed-by=proxops.a, then converged', () => {
      const m = backupJob('nightly', { comment: 'guests' })
      const p = planOf([m], [], a)
      expect(p.actions[0]?.requests).toEqual([
        expect.objectContaining({ params: expect.objectContaining({ comment: 'managed-by=proxops.a guests' }) }),
      ])
      expect(planOf([m], [ofEntry(m, 'a')], a).actions).toEqual([])
    })

    it("AnEntryNeverPrunesAnotherEntrysJobs: b declares none of a's jobs and deletes none of them", () => {
      const jobs = [ofEntry(backupJob('a1'), 'a'), ofEntry(backupJob('a2'), 'a'), ofEntry(backupJob('b1'), 'b')]
      const p = planOf([backupJob('b2')], jobs, { ...b, pruneBudget: 'unlimited' })
      expect(p.actions.map((x) => `${x.address}#${x.type}`)).toEqual(['BackupJob/b2#create', 'BackupJob/b1#delete'])
      expect(p.skips.map((s) => [s.address, s.code])).toEqual([
        ['BackupJob/a1', 'owned-elsewhere'],
        ['BackupJob/a2', 'owned-elsewhere'],
      ])
      // even with nothing declared and the empty-desired guard lifted
      const none = planOf([], jobs, { ...b, pruneBudget: 'unlimited', allowEmpty: ['BackupJob'] })
      expect(none.actions.map((x) => x.address)).toEqual(['BackupJob/b1'])
      // the same jobs are a's to prune
      expect(planOf([backupJob('a1')], jobs, a).actions.map((x) => `${x.address}#${x.type}`)).toEqual([
        'BackupJob/a2#delete',
      ])
    })

    it('AnEntryNeverTakesOverAnotherEntrysJob: declaring its id is an owned-elsewhere anomaly, no write', () => {
      const p = planOf([backupJob('a1', { schedule: 'sat 21:00' })], [ofEntry(backupJob('a1'), 'a')], b)
      expect(p.actions).toEqual([])
      expect(p.anomalies.map((x) => [x.code, x.address])).toEqual([['owned-elsewhere', 'BackupJob/a1']])
      expect(p.anomalies[0]?.message).toContain('managed-by=proxops.a')
    })

    it('UnmarkedJobsMigrate: the bare managed-by=proxops is claimed by a declaration, never pruned', () => {
      const bare = [applied(backupJob('old')), applied(backupJob('kept'))]
      const p = planOf([backupJob('kept')], bare, a)
      expect(p.actions.map((x) => [x.address, x.type])).toEqual([['BackupJob/kept', 'update']])
      expect(p.actions[0]?.reason).toContain('claimed (declared, no managed-by=proxops.a marker yet)')
      expect(p.actions[0]?.diffs).toEqual([
        { field: 'spec.comment', key: 'comment', before: 'managed-by=proxops', after: 'managed-by=proxops.a' },
      ])
      expect(p.skips.map((s) => [s.address, s.code])).toEqual([['BackupJob/old', 'unmarked']])
      expect(p.skips[0]?.message).toContain('write managed-by=proxops.a in its comment')
    })
  })

  test.prop([
    fc.array(
      fc.record({
        id: fc.constantFrom('j1', 'j2', 'j3', 'j4', 'j5'),
        marker: fc.constantFrom(
          undefined,
          'by hand',
          'managed-by=proxops',
          'managed-by=proxops.a',
          'managed-by=proxops.b',
        ),
      }),
      { maxLength: 5 },
    ),
    fc.subarray(['j1', 'j2', 'j3', 'j4', 'j5']),
  ])('property: entry b writes and deletes no job marked for entry a, and deletes only its own', (lives, declared) => {
    const jobs = [...new Map(lives.map((l) => [l.id, l])).values()].map((l) =>
      live(l.id, { schedule: 'daily', storage: 'local', vmid: '100', ...(l.marker ? { comment: l.marker } : {}) }),
    )
    const p = planOf(
      declared.map((id) => backupJob(id)),
      jobs,
      { clusterEntry: 'b', pruneRatioLimit: 1, pruneBudget: 'unlimited', allowEmpty: ['BackupJob'] },
    )
    for (const action of p.actions) {
      const j = jobs.find((x) => `BackupJob/${x.id}` === action.address)
      if (j === undefined) continue
      expect(j.values.comment).not.toBe('managed-by=proxops.a')
      if (action.type === 'delete') expect(j.values.comment).toBe('managed-by=proxops.b')
    }
  })

  it('guards: the budget the guests left, the empty-desired guard, the ratio guard, an unreadable listing', () => {
    const owned = [applied(backupJob('a1')), applied(backupJob('a2')), applied(backupJob('a3'))]
    expect(planOf([], owned).anomalies.map((a) => a.code)).toEqual(['empty-desired'])
    expect(planOf([], owned, { allowEmpty: ['BackupJob'], pruneBudget: 2 }).actions).toHaveLength(2)
    expect(planOf([backupJob('a1')], owned).anomalies.map((a) => a.code)).toEqual(['prune-ratio'])
    expect(planOf([backupJob('a1')], owned, { pruneBudget: 0 }).skips.map((s) => s.code)).toEqual([
      'prune-budget',
      'prune-budget',
    ])
    const unread = plan(desired(backupJob('a1')), inventory([], { backupJobs: { unreadable: 'HTTP 403' } }), policy())
    expect([unread.actions, unread.skips.map((s) => s.code)]).toEqual([[], ['unknown']])
  })
})

// ------------------------------------------------------------------------------------------- properties

const specArb: fc.Arbitrary<BackupJobSpec> = fc
  .record({
    id: fc.constant('x'),
    schedule: fc.constantFrom('daily', 'sat 21:00', 'mon..fri 02:30'),
    storage: fc.constantFrom('local', 'nas'),
    selection: fc.oneof(
      fc
        .uniqueArray(fc.integer({ min: 100, max: 110 }), { minLength: 1, maxLength: 3 })
        .map((vmids) => ({ vmids: vmids.sort((a, b) => a - b) })),
      fc.constantFrom('prod', 'lab').map((pool) => ({ pool })),
      fc
        .uniqueArray(fc.integer({ min: 100, max: 110 }), { maxLength: 2 })
        .map((exclude) => ({ all: true as const, exclude: exclude.sort((a, b) => a - b) })),
    ),
    mode: fc.option(fc.constantFrom('snapshot', 'stop'), { nil: undefined }),
    compress: fc.option(fc.constantFrom('zstd', '0'), { nil: undefined }),
    enabled: fc.boolean(),
    comment: fc.option(fc.constantFrom('nightly', 'weekly run'), { nil: undefined }),
  })
  .map((s) => Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)) as unknown as BackupJobSpec)

const idArb = fc.uniqueArray(fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'eps'), { maxLength: 4 })

/** applies a plan's backup requests to a live job list as PVE::API2::Backup does */
function apply(jobs: LiveBackupJob[], p: ReturnType<typeof plan>): LiveBackupJob[] {
  const byId = new Map(jobs.map((j) => [j.id, { ...j.values }]))
  for (const a of p.actions)
    for (const r of a.requests) {
      if (r.call === 'createBackupJob') {
        const { id, ...rest } = r.params as Record<string, string>
        byId.set(id as string, rest)
      } else if (r.call === 'updateBackupJob') {
        const v = byId.get(r.id) as Record<string, string>
        const { delete: del, ...rest } = r.params as Record<string, string>
        for (const k of (del ?? '').split(',').filter(Boolean)) delete v[k]
        Object.assign(v, rest)
      } else if (r.call === 'deleteBackupJob') byId.delete(r.id)
    }
  return [...byId].map(([id, values]) => ({ id, values })).sort((a, b) => (a.id < b.id ? -1 : 1))
}

describe('planBackupJobs properties', () => {
  test.prop([
    idArb,
    fc.array(specArb, { minLength: 5, maxLength: 5 }),
    idArb,
    fc.array(specArb, { minLength: 5, maxLength: 5 }),
    fc.subarray(['alpha', 'beta', 'gamma', 'delta', 'eps']),
  ])(
    'idempotence: after applying the plan, the next plan is empty; nothing without the marker is ever deleted',
    (wantIds, specs, liveIds, liveSpecs, unowned) => {
      const want = wantIds.map((id, i) => backupJob(id, { ...specs[i], id }))
      const jobs = liveIds.map((id, i) => {
        const j = applied(backupJob(id, { ...liveSpecs[i], id }))
        return unowned.includes(id) ? live(id, { ...j.values, comment: 'hand made' }) : j
      })
      const pol = { pruneBudget: 'unlimited' as const, allowEmpty: ['BackupJob' as const], pruneRatioLimit: 1 }
      const first = planOf(want, jobs, pol)
      for (const a of first.actions)
        if (a.type === 'delete')
          expect(commentOwner(jobs.find((j) => `BackupJob/${j.id}` === a.address)!.values.comment, TAG)).toBe('self')
      const after = apply(jobs, first)
      expect(planOf(want, after, pol).actions).toEqual([])
      // unowned, undeclared jobs are still there, unchanged
      for (const j of jobs)
        if (commentOwner(j.values.comment, TAG) !== 'self' && !(wantIds as string[]).includes(j.id))
          expect(after).toContainEqual(j)
    },
  )
})
