/**
 * adopt for backup jobs, then plan: a job adopted from PVE plans no change once it carries the marker (the
 * first apply of an unmarked one writes only the marker), and options BackupJob does not model are gaps.
 */
import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { parseManifest, type BackupJobManifest, type Manifest } from '@proxops/schema'
import { adopt } from '../../adopt/adopt.js'
import { selectForAdoption } from '../../adopt/select.js'
import { desired, inventory, policy, selectedBy } from '../../fixtures.test.helpers.js'
import { plan } from '../../plan/plan.js'
import { commentMarker } from '../../kit/ownership.js'
import { desiredFields } from './fields.js'
import type { LiveBackupJob } from './types.js'
import { known } from '../../inventory.js'

const MARK = commentMarker({ ownershipTag: 'proxops' })
const adoptJobs = (jobs: LiveBackupJob[]) =>
  adopt(inventory([], { backupJobs: { known: jobs } }), { cluster: 'homelab' })
const parsed = (document: Record<string, unknown>): Manifest => {
  const r = parseManifest(document)
  if (!r.ok) throw new Error(JSON.stringify(r.issues))
  return r.manifest
}
/** the jobs' part of the plan of what adopt wrote (with the guests and pools they select declared) */
const adoptThenPlan = (jobs: LiveBackupJob[]) => {
  const adopted = adoptJobs(jobs).files.map((f) => parsed(f.document))
  const p = plan(desired(...adopted, ...selectedBy(adopted)), inventory([], { backupJobs: { known: jobs } }), policy())
  const ofJobs = <T extends { kind?: string }>(xs: readonly T[]): T[] => xs.filter((x) => x.kind === 'BackupJob')
  return { ...p, actions: ofJobs(p.actions), anomalies: ofJobs(p.anomalies) }
}

/** a job as PVE holds it after ProxOps wrote `spec` (the manifest parsed by the schema) */
const written = (doc: Record<string, unknown>): LiveBackupJob => {
  const m = parsed({ apiVersion: 'proxops/v1alpha1', kind: 'BackupJob', metadata: { name: 'job' }, spec: doc })
  const spec = (m as BackupJobManifest).spec
  return {
    id: spec.id,
    values: Object.fromEntries(desiredFields(spec, { ownershipTag: 'proxops' }).map((f) => [f.key, f.value])),
  }
}

const vmids = fc.uniqueArray(fc.integer({ min: 100, max: 99_999 }), { minLength: 1, maxLength: 4 })
const specs = fc.record(
  {
    schedule: fc.constantFrom('daily', 'mon..fri 02:30', 'sat 21:00', '*-*-01 03:00'),
    storage: fc.constantFrom('local', 'nas'),
    selection: fc.oneof(
      vmids.map((v) => ({ vmids: v })),
      fc.constantFrom('prod', 'lab').map((pool) => ({ pool })),
      fc.record({
        all: fc.constant(true),
        exclude: fc.uniqueArray(fc.integer({ min: 100, max: 999 }), { maxLength: 3 }),
      }),
    ),
    mode: fc.constantFrom('snapshot', 'suspend', 'stop'),
    compress: fc.constantFrom('0', 'gzip', 'lzo', 'zstd'),
    'prune-backups': fc.oneof(
      fc.constant({ 'keep-all': true }),
      fc.record({ 'keep-last': fc.integer({ min: 1, max: 9 }), 'keep-daily': fc.integer({ min: 1, max: 9 }) }),
    ),
    'notes-template': fc.constantFrom('{{guestname}} on {{node}}', 'nightly\\n{{vmid}}'),
    enabled: fc.boolean(),
    node: fc.constantFrom('pve1', 'pve2'),
    comment: fc.constantFrom('nightly guests', 'keep'),
  },
  { requiredKeys: ['schedule', 'storage', 'selection'] },
)

describe('adopt backup jobs (fields.ts read backwards)', () => {
  test.prop([specs])('a job ProxOps wrote adopts to a manifest that plans no change', (spec) => {
    const job = written(spec)
    const p = adoptThenPlan([job])
    expect(p.actions).toEqual([])
    expect(p.anomalies).toEqual([])
  })

  it('an unmarked job: the adopted manifest plans only the claim (the marker in the comment)', () => {
    const p = adoptThenPlan([
      { id: 'a1b2c3d4-e5f6', values: { schedule: 'sun 01:00', storage: 'local', all: '1', comment: 'by hand' } },
    ])
    expect(p.actions.map((a) => [a.address, a.type])).toEqual([['BackupJob/a1b2c3d4-e5f6', 'update']])
    expect(p.actions[0]?.requests).toEqual([
      { call: 'updateBackupJob', id: 'a1b2c3d4-e5f6', params: { comment: `${MARK} by hand` } },
    ])
  })

  it('writes backupjob/<cluster>/<name>.yaml, the PVE id kept when the name differs, unmodelled options as gaps', () => {
    const r = adoptJobs([
      {
        id: 'backup-9f3a_x',
        values: { schedule: 'daily', storage: 'local', vmid: '101 100', mailto: 'ops@example.invalid', enabled: '0' },
      },
    ])
    expect(r.files.map((f) => [f.path, f.incomplete])).toEqual([['backupjob/homelab/backup-9f3a-x.yaml', []]])
    expect(r.files[0]?.document.spec).toEqual({
      id: 'backup-9f3a_x',
      schedule: 'daily',
      storage: 'local',
      selection: { vmids: [100, 101] },
      enabled: false,
    })
    expect(r.gaps).toEqual([
      {
        kind: 'BackupJob',
        node: '',
        id: 'backup-9f3a_x',
        field: 'mailto',
        value: 'ops@example.invalid',
        note: 'not modelled by BackupJob; stays on PVE as it is',
      },
    ])
    expect(r.resourcesLines).toEqual(['- ../../backupjob/homelab/backup-9f3a-x.yaml'])
    expect(r.summary.backupJobs).toBe(1)
  })

  it('a job without a selection the schema accepts is INCOMPLETE (never listed), exclude without all is a gap', () => {
    const r = adoptJobs([{ id: 'odd', values: { schedule: 'daily', storage: 'local', exclude: '100' } }])
    expect(r.files[0]?.incomplete.join('\n')).toMatch(/selection/)
    expect(r.resourcesLines).toEqual([])
    expect(r.gaps.map((g) => g.field)).toEqual(['exclude'])
  })

  it('an unreadable job listing adopts no job and says why', () => {
    const r = adopt(inventory([], { backupJobs: { unreadable: 'read failed: 403' } }), { cluster: 'homelab' })
    expect(r.files).toEqual([])
    expect(r.warnings).toEqual(['backup jobs not adopted: read failed: 403'])
  })

  it('selectForAdoption leaves out declared job ids, and every job when a guest filter is given', () => {
    const live = inventory([], {
      backupJobs: {
        known: [
          { id: 'a', values: {} },
          { id: 'b', values: {} },
        ],
      },
    })
    const base = { declaredVmids: new Set<number>(), declaredVolids: new Set<string>() }
    const s = selectForAdoption(live, { ...base, declaredJobs: new Set(['a']) })
    expect(known(s.live.backupJobs)?.map((j) => j.id)).toEqual(['b'])
    expect(s.declared.jobs).toEqual(['a'])
    expect(selectForAdoption(live, { ...base, only: { vmids: [100] } }).live.backupJobs).toEqual({ known: [] })
    expect(
      known(selectForAdoption(live, { ...base, declaredJobs: new Set(['a']), includeDeclared: true }).live.backupJobs),
    ).toHaveLength(2)
  })
})
