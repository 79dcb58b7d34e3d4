/**
 * A BackupJob's lifecycle through the built CLI against the simulator's /cluster/backup (PVE::API2::Backup):
 * create, drift made by hand, update, and a prune of the owned job once git drops it, while a job made by hand
 * (no ownership marker) is never touched.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Simulator } from '@proxops/pve-sim'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import { baseEnv, findCanaries, git, makeRepo, proxops, startLab } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

let sim: Simulator
let root: string
let pve: PveClient
const run = (...args: string[]) => proxops(args, { cwd: root, env: baseEnv(root) })
const jobYaml = (schedule: string) =>
  `apiVersion: proxops/v1alpha1\nkind: BackupJob\nmetadata:\n  name: nightly\nspec:\n  schedule: "${schedule}"\n  storage: local\n  selection:\n    vmids: [100, 101]\n  mode: snapshot\n  prune-backups:\n    keep-last: 3\n  comment: nightly guests\n`
beforeAll(async () => {
  sim = await startLab()
  root = await makeRepo(sim, { manifests: { 'backupjob/lab/nightly.yaml': jobYaml('mon..fri 02:30') } })
  pve = createPveClient({
    baseUrl: sim.url,
    auth: { type: 'token', tokenId: 'root@pam!proxops', secret: sim.token.secret },
    tls: { fingerprint: sim.fingerprint! },
  })
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
  expect(v.stdout + v.stderr).toMatch(/backupjob\/lab\/nightly\.yaml:6:13 schedule-invalid "every night"/)
  writeFileSync(path.join(root, 'backupjob/lab/nightly.yaml'), jobYaml('mon..fri 02:30'))
})

it('create, drift, update, prune; a hand-made job is never touched', async () => {
  const diff = await run('diff')
  expect(diff.stdout).toMatch(/BackupJob\/nightly/)
  expect((await run('apply', '--yes')).code).toBe(0)
  expect((await run('diff', '--detailed-exitcode')).code).toBe(0)

  await pve.request('PUT', '/cluster/backup/nightly', { params: { schedule: 'daily' } })
  await pve.request('POST', '/cluster/backup', { params: { id: 'byhand', schedule: 'sun 01:00', all: 1 } })
  const job = async (id: string) => (await pve.get(`/cluster/backup/${id}`)) as Record<string, unknown>
  const drift = await run('diff', '--detailed-exitcode')
  expect(drift.code).toBe(2)
  expect(drift.stdout).toMatch(/schedule/)
  expect((await run('apply', '--yes')).code).toBe(0)
  expect(await job('nightly')).toMatchObject({
    schedule: 'mon..fri 02:30',
    comment: 'managed-by=proxops nightly guests',
  })

  writeFileSync(path.join(root, 'clusters/lab/resources.yaml'), 'resources: []\n')
  git(root, 'add', '-A')
  git(root, 'commit', '-q', '-m', 'drop the job')
  const pruned = await run('apply', '--yes', '--allow-empty', 'BackupJob')
  expect(pruned.code, pruned.stdout + pruned.stderr).toBe(0)
  expect(((await pve.get('/cluster/backup')) as { id: string }[]).map((j) => j.id)).toEqual(['byhand'])
  expect(findCanaries(pruned.stdout + pruned.stderr)).toEqual([])
})
