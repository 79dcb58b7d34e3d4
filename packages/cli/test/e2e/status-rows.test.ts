/**
 * Every object's row says what the planner says about it (issue 30, item 5), through the CLI against the
 * simulator: a Pool and a BackupJob that PVE already holds under another cluster entry's marker (pve-manager
 * PVE::API2::Pool create_pool, PVE::API2::Backup create_job: the comment carries the marker) are blocked, with the
 * planner's owned-elsewhere reason, in `status -o json`, the status table and the daemon's /status, as the
 * cluster line says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { PveClient } from '@proxops/pve-client'
import {
  adminClient,
  baseEnv,
  freePort,
  httpGet,
  proxops,
  start,
  vmManifest,
  waitFor,
  useLab,
  transcriptCanaries,
} from './harness.js'

const lab = useLab()
let repo: string
let admin: PveClient

interface Row {
  kind: string
  name: string
  state: string
  blocked?: string
  reason?: string
}
interface Cycle {
  cluster: string
  result: string
  blocked: number
  objects: Row[]
}

const POOL = `apiVersion: proxops/v1alpha1\nkind: Pool\nmetadata:\n  name: web\nspec:\n  id: web-tier\n  comment: web tier\n`
const JOB = `apiVersion: proxops/v1alpha1\nkind: BackupJob\nmetadata:\n  name: nightly\nspec:\n  id: nightly-job\n  schedule: "02:30"\n  storage: local\n  selection:\n    vmids: [100]\n  mode: snapshot\n`

beforeAll(async () => {
  admin = adminClient(lab.sim)
  repo = await lab.repo({
    manifests: {
      'vm/lab/app.yaml': vmManifest('app', 100),
      'pool/lab/web.yaml': POOL,
      'backupjob/lab/nightly.yaml': JOB,
    },
  })
  // the same PVE cluster, reconciled under another entry (edge): its pool and job carry edge's marker
  await admin.createPool({ poolid: 'web-tier', comment: 'managed-by=proxops.edge web tier' })
  await admin.request('POST', '/cluster/backup', {
    params: { id: 'nightly-job', schedule: '03:00', storage: 'local', all: 1, comment: 'managed-by=proxops.edge' },
  })
})
afterAll(async () => {
  await admin.close()
})

const blockedRows = (objects: readonly Row[]) =>
  objects
    .filter((o) => o.kind === 'Pool' || o.kind === 'BackupJob')
    .map((o) => [o.kind, o.name, o.state, o.blocked, o.reason?.includes("another cluster entry's marker")])

const EXPECTED = [
  ['BackupJob', 'nightly', 'blocked', 'anomaly', true],
  ['Pool', 'web', 'blocked', 'anomaly', true],
]

describe('status rows of the cluster-wide kinds', () => {
  it('status -o json and the status table say blocked for a Pool and a BackupJob owned elsewhere', async () => {
    const env = baseEnv(repo)
    expect((await proxops(['apply', '--yes'], { cwd: repo, env })).code).toBe(1)
    const json = await proxops(['status', '--output', 'json'], { cwd: repo, env })
    const doc = JSON.parse(json.stdout) as { cycles: Cycle[] }
    const lab = doc.cycles[0]!
    expect(lab.result).toBe('blocked')
    expect(blockedRows(lab.objects)).toEqual(EXPECTED)
    // the rows count what the cluster line counts
    expect(lab.objects.filter((o) => o.state === 'blocked')).toHaveLength(lab.blocked)

    const table = await proxops(['status'], { cwd: repo, env })
    expect(table.stdout).toMatch(/\[lab\] blocked \(2 objects blocked: anomaly 2\)/)
    expect(table.stdout).toMatch(/^ {2}BackupJob +nightly +- +blocked +anomaly: backup job nightly-job carries/m)
    expect(table.stdout).toMatch(/^ {2}Pool +web +- +blocked +anomaly: pool web-tier carries/m)
  })

  it("the daemon's /status says the same", async () => {
    const port = await freePort()
    const data = mkdtempSync(path.join(os.tmpdir(), 'proxops-data-'))
    const daemon = start(['run', '--listen', `127.0.0.1:${port}`, '--data-dir', data], {
      cwd: repo,
      env: baseEnv(repo),
    })
    try {
      const doc = await waitFor(async () => {
        const r = await httpGet(port, '/status')
        const d = r ? (JSON.parse(r.body) as { clusters: (Cycle | { result: null })[] }) : undefined
        return d?.clusters[0]?.result ? (d as { clusters: Cycle[] }) : undefined
      }, 60_000)
      expect(doc.clusters[0]!.result).toBe('blocked')
      expect(blockedRows(doc.clusters[0]!.objects)).toEqual(EXPECTED)
    } finally {
      daemon.child.kill('SIGTERM')
      expect((await daemon.done).code).toBe(0)
      rmSync(data, { recursive: true, force: true })
    }
  })

  it('no canary anywhere', () => {
    expect(transcriptCanaries()).toEqual([])
  })
})
