/**
 * A BackupJob's lifecycle through the CLI against the simulator's /cluster/backup (PVE::API2::Backup):
 * create, drift made by hand, an update from git, adopt of a job made by hand (its claim writes only the
 * marker), and a prune of the owned jobs once git drops them, while a job without the marker, one marked for
 * another cluster entry and one marked before entries existed are never touched.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Simulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { baseEnv, findCanaries, git, makeRepo, proxops, startLab, adminClient, vmManifest } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

let sim: Simulator
let root: string
let pve: PveClient
const run = (...args: string[]) => proxops(args, { cwd: root, env: baseEnv(root) })
const jobYaml = (schedule: string) =>
  `apiVersion: proxops/v1alpha1\nkind: BackupJob\nmetadata:\n  name: nightly\nspec:\n  schedule: "${schedule}"\n  storage: local\n  selection:\n    vmids: [100, 101]\n  mode: snapshot\n  prune-backups:\n    keep-last: 3\n  comment: nightly guests\n`
// a job may select only guests this entry manages: the two it names are declared
const GUESTS = `${vmManifest('g100', 100)}---\n${vmManifest('g101', 101)}`
beforeAll(async () => {
  sim = await startLab()
  root = await makeRepo(sim, {
    manifests: { 'vm/lab/guests.yaml': GUESTS, 'backupjob/lab/nightly.yaml': jobYaml('mon..fri 02:30') },
  })
  pve = adminClient(sim)
})
afterAll(async () => {
  await pve.close()
  await sim.close()
  rmSync(root, { recursive: true, force: true })
})

it('validate refuses a schedule PVE cannot parse, naming file and field', async () => {
  writeFileSync(path.join(root, 'backupjob/lab/nightly.yaml'), jobYaml('every night'))
  const v = await run('validate')
  expect(v.code).not.toBe(0)
  expect(v.stdout + v.stderr).toMatch(
    /backupjob\/lab\/nightly\.yaml:6:13 schedule-invalid spec\.schedule: "every night"/,
  )
  writeFileSync(path.join(root, 'backupjob/lab/nightly.yaml'), jobYaml('mon..fri 02:30'))
})

it('validate refuses two BackupJobs of one PVE job id, naming both files (diff would fail on the second)', async () => {
  const resources = path.join(root, 'clusters/lab/resources.yaml')
  const listed = readFileSync(resources, 'utf8')
  const weekly = path.join(root, 'backupjob/lab/weekly.yaml')
  writeFileSync(weekly, jobYaml('sun 03:00').replace('name: nightly\nspec:\n', 'name: weekly\nspec:\n  id: nightly\n'))
  writeFileSync(resources, `${listed}  - ../../backupjob/lab/weekly.yaml\n`)
  const v = await run('validate')
  expect(v.code).toBe(1)
  expect(v.stdout + v.stderr).toMatch(
    /backupjob\/lab\/weekly\.yaml:6:\d+ backup-job-id-duplicate PVE backup job id "nightly" is declared by both BackupJob\/nightly \(backupjob\/lab\/nightly\.yaml:1\) and BackupJob\/weekly/,
  )
  writeFileSync(resources, listed)
  rmSync(weekly)
  expect((await run('validate')).code).toBe(0)
})

it('create, drift, update, adopt, prune; a hand-made job is never touched', async () => {
  const job = async (id: string) => (await pve.get(`/cluster/backup/${id}`)) as Record<string, unknown>
  const commit = (message: string) => {
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', message)
  }
  // create
  expect((await run('diff')).stdout).toMatch(/BackupJob\/nightly/)
  expect((await run('apply', '--yes')).code).toBe(0)
  expect((await run('diff', '--detailed-exitcode')).code).toBe(0)

  // drift made by hand is put back; two jobs made by hand appear
  await pve.request('PUT', '/cluster/backup/nightly', { params: { schedule: 'daily' } })
  await pve.request('POST', '/cluster/backup', {
    params: {
      id: 'byhand',
      schedule: 'sun 01:00',
      storage: 'local',
      all: 1,
      comment: 'weekly all',
      mailto: 'ops@example.invalid',
    },
  })
  await pve.request('POST', '/cluster/backup', { params: { id: 'theirs', schedule: 'sat 03:00', vmid: '100' } })
  const drift = await run('diff', '--detailed-exitcode')
  expect(drift.code).toBe(2)
  expect(drift.stdout).toMatch(/schedule/)
  expect((await run('apply', '--yes')).code).toBe(0)
  expect(await job('nightly')).toMatchObject({
    schedule: 'mon..fri 02:30',
    comment: 'managed-by=proxops.lab nightly guests',
  })

  // update from git
  writeFileSync(path.join(root, 'backupjob/lab/nightly.yaml'), jobYaml('sat 21:00'))
  commit('nightly on saturdays')
  expect((await run('apply', '--yes')).code).toBe(0)
  expect(await job('nightly')).toMatchObject({ schedule: 'sat 21:00' })

  // adopt the hand-made jobs; declaring one is its claim: the first apply writes only the marker
  const adopted = await run('adopt', '--cluster', 'lab')
  expect(adopted.code, adopted.stdout + adopted.stderr).toBe(0)
  expect(adopted.stdout).toContain('adopt: wrote backupjob/lab/byhand.yaml (BackupJob)')
  expect(adopted.stdout).toContain('adopt: gap BackupJob byhand: mailto=ops@example.invalid')
  expect(adopted.stdout).toContain('backup job nightly')
  // complete, so listed for resources.yaml; the job without a storage is INCOMPLETE
  expect(adopted.stdout).toMatch(/^ +- \.\.\/\.\.\/backupjob\/lab\/byhand\.yaml$/m)
  expect(adopted.stdout).toMatch(/backupjob\/lab\/theirs\.yaml: .*storage/)
  expect(readFileSync(path.join(root, 'backupjob/lab/byhand.yaml'), 'utf8')).toMatch(/selection:\n\s+all: true\n/)
  rmSync(path.join(root, 'backupjob/lab/theirs.yaml'))
  writeFileSync(
    path.join(root, 'clusters/lab/resources.yaml'),
    'resources:\n  - ../../vm/lab/guests.yaml\n  - ../../backupjob/lab/nightly.yaml\n  - ../../backupjob/lab/byhand.yaml\n',
  )
  commit('adopt byhand')
  const claim = await run('diff', '--output', 'json')
  const set = JSON.parse(claim.stdout) as { plans: { actions: { address: string; diffs: { key: string }[] }[] }[] }
  expect(set.plans[0]!.actions.map((a) => [a.address, a.diffs.map((d) => d.key)])).toEqual([
    ['BackupJob/byhand', ['comment']],
  ])
  expect((await run('apply', '--yes')).code).toBe(0)
  expect(await job('byhand')).toMatchObject({
    comment: 'managed-by=proxops.lab weekly all',
    mailto: 'ops@example.invalid',
  })
  expect((await run('diff', '--detailed-exitcode')).code).toBe(0)

  // another cluster entry's job (one PVE cluster under two entries) and one marked before entries existed
  for (const [id, comment] of [
    ['edgejob', 'managed-by=proxops.edge edge nightly'],
    ['legacy', 'managed-by=proxops old'],
  ] as const)
    await pve.request('POST', '/cluster/backup', {
      params: { id, schedule: 'sun 04:00', storage: 'local', all: 1, comment },
    })
  const listed = await run('diff')
  expect(listed.stdout).toMatch(/BackupJob\/edgejob: another cluster entry's backup job; never touched/)
  expect(listed.stdout).toMatch(/BackupJob\/legacy: marked managed-by=proxops without a cluster entry/)

  // prune: git drops both owned jobs; the unmarked one, the other entry's and the legacy one stay
  writeFileSync(path.join(root, 'clusters/lab/resources.yaml'), 'resources:\n  - ../../vm/lab/guests.yaml\n')
  commit('drop the jobs')
  const pruned = await run('apply', '--yes', '--allow-empty', 'BackupJob')
  // the legacy job waits for someone to say whose it is: the cluster is not reported converged
  expect(pruned.code, pruned.stdout + pruned.stderr).toBe(1)
  expect(pruned.stdout).toContain('[lab] blocked (1 object blocked: unmarked 1)')
  expect(pruned.stdout).toMatch(/ok +BackupJob\/byhand delete/)
  expect(((await pve.get('/cluster/backup')) as { id: string }[]).map((j) => j.id).sort()).toEqual([
    'edgejob',
    'legacy',
    'theirs',
  ])
  expect(findCanaries(pruned.stdout + pruned.stderr + adopted.stdout)).toEqual([])
})
