/**
 * Backup jobs against the simulator's /cluster/backup (PVE::API2::Backup) with the real client: create, drift
 * made by hand, update, claim of a hand-made job, prune of an owned one, and the plan empty after each apply.
 */
import { expect, it } from 'vitest'
import type { PveClient } from '@proxops/pve-client'
import { useSimPve } from '../../test-support/use-sim.js'
import { reconcile } from '../../reconcile/reconcile.js'
import { backupJob, desired, policy, vm } from '../../fixtures.test.helpers.js'
import type { BackupJobManifest } from '@proxops/schema'

let pve: PveClient
useSimPve({ taskDurationMs: 10 }, 'file', (e) => {
  pve = e.client
})

const pol = policy({ nodes: [], pruneRatioLimit: 1 })
/** the guests the jobs select (a job may select only guests this entry manages) */
const guests = [100, 101].map((vmid) => vm(`g${vmid}`, vmid, { state: 'stopped' }))

/** one apply cycle (the planner's reconcile()), then a dry run that must plan nothing */
async function converge(jobs: BackupJobManifest[]) {
  const all = desired(...jobs, ...guests)
  const { plan: p, report } = await reconcile({
    desired: all,
    reader: pve,
    writer: pve,
    policy: pol,
    execute: { confirmAttempts: 1, confirmDelayMs: 0 },
  })
  expect(report?.results.map((r) => r.status)).toEqual(p.actions.map(() => 'ok'))
  expect((await reconcile({ desired: all, reader: pve, policy: pol })).plan.actions).toEqual([])
  return { ...p, actions: p.actions.filter((a) => a.kind === 'BackupJob') }
}

it('create, drift, update, claim and prune converge, and each next plan is empty', async () => {
  const nightly = backupJob('nightly', {
    schedule: 'mon..fri 02:30',
    selection: { vmids: [100, 101] },
    'prune-backups': { 'keep-last': 3 },
    mode: 'snapshot',
    compress: 'zstd',
    comment: 'db',
  })
  expect((await converge([nightly])).actions.map((a) => a.type)).toEqual(['create'])
  const onPve = await pve.get('/cluster/backup/nightly')
  expect(onPve).toMatchObject({
    comment: 'managed-by=proxops db',
    'prune-backups': { 'keep-last': '3' },
    vmid: '100,101',
  })

  // drift by hand: another schedule and a pool selection; the plan puts back both and drops the pool
  await pve.request('PUT', '/cluster/backup/nightly', { params: { schedule: 'daily', enabled: 0 } })
  const drift = await converge([nightly])
  expect(drift.actions[0]?.diffs.map((d) => d.key)).toEqual(['schedule', 'enabled'])

  // a selection change: vmids -> all with exclude
  await converge([backupJob('nightly', { ...nightly.spec, selection: { all: true, exclude: [105] } })])

  // a hand-made job is claimed once declared; another hand-made one is never pruned
  await pve.request('POST', '/cluster/backup', { params: { id: 'legacy', schedule: 'sun 01:00', all: 1 } })
  await pve.request('POST', '/cluster/backup', { params: { id: 'theirs', schedule: 'sun 01:00', all: 1 } })
  const claim = await converge([
    nightly,
    backupJob('legacy', { selection: { all: true, exclude: [] }, schedule: 'sun 01:00' }),
  ])
  expect(claim.actions.map((a) => [a.address, a.type])).toEqual([
    ['BackupJob/legacy', 'update'],
    ['BackupJob/nightly', 'update'],
  ])

  // legacy leaves git: it carries the marker now, so it is pruned; `theirs` stays
  const prune = await converge([nightly])
  expect(prune.actions.map((a) => [a.address, a.type])).toEqual([['BackupJob/legacy', 'delete']])
  const ids = ((await pve.get('/cluster/backup')) as { id: string }[]).map((j) => j.id).sort()
  expect(ids).toEqual(['nightly', 'theirs'])
})
