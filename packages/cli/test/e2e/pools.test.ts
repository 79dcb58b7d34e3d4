/**
 * Pools through the CLI, one lifecycle (pve-manager PVE::API2::Pool, qemu-server create_vm with `pool`):
 * validate refuses a bad pool id, apply creates the pool and the guest in it, a hand edit (comment, a move to
 * another pool) shows as drift and converges, a changed spec.pool moves the guest, adopt writes the Pool and
 * spec.pool back so that the adopted files plan nothing, and a prune removes the pool only after its guest
 * and never a pool that holds a guest ProxOps does not own.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Simulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { baseEnv, git, makeRepo, proxops, startLab, vmManifest, adminClient, closeLab } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

let sim: Simulator
let repo: string
/** an admin's own client, for edits made outside ProxOps */
let admin: PveClient
const run = (args: string[]) => proxops(args, { cwd: repo, env: baseEnv(repo) })
const poolYaml = (name: string, spec: string) =>
  `apiVersion: proxops/v1alpha1\nkind: Pool\nmetadata:\n  name: ${name}\nspec:\n${spec}`
const guest = (pool: string) => `${vmManifest('app', 130)}  pool: ${pool}\n`

function commit(files: Record<string, string | undefined>): void {
  for (const [file, text] of Object.entries(files)) {
    if (text === undefined) rmSync(path.join(repo, file), { force: true })
    else {
      mkdirSync(path.dirname(path.join(repo, file)), { recursive: true })
      writeFileSync(path.join(repo, file), text)
    }
  }
  const listed = Object.keys(files).filter((f) => files[f] !== undefined)
  writeFileSync(
    path.join(repo, 'clusters/lab/resources.yaml'),
    listed.length > 0 ? `resources:\n${listed.map((f) => `  - ../../${f}\n`).join('')}` : 'resources: []\n',
  )
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '--allow-empty', '-m', 'pools')
}
/** poolid -> comment and member vmids, as PVE lists them */
async function pools(): Promise<Map<string, { comment?: string; vms: (number | undefined)[] }>> {
  const out = new Map<string, { comment?: string; vms: (number | undefined)[] }>()
  for (const p of await admin.pools()) {
    const d = await admin.pool(p.poolid)
    out.set(p.poolid, { ...(d.comment !== undefined ? { comment: d.comment } : {}), vms: d.members.map((m) => m.vmid) })
  }
  return out
}

beforeAll(async () => {
  sim = await startLab()
  repo = await makeRepo(sim, { manifests: {} })
  admin = adminClient(sim)
})
afterAll(() => closeLab(admin, sim, repo))

describe('Pool and spec.pool lifecycle', () => {
  it('validate, create, drift, update, adopt, prune', async () => {
    const files = {
      'pool/lab/web.yaml': poolYaml('web', '  comment: front end\n'),
      'pool/lab/db.yaml': poolYaml('db', '  {}\n'),
      'vm/lab/app.yaml': guest('web'),
    }
    // validate names the file and field of an id create_pool would refuse
    commit({ ...files, 'pool/lab/db.yaml': poolYaml('db', '  id: 9db\n') })
    const bad = await run(['validate'])
    expect(bad.code).toBe(1)
    expect(bad.stdout + bad.stderr).toMatch(/pool\/lab\/db\.yaml:\d+:\d+ field-invalid .*PVE pool id/)
    commit(files)

    // create: the pools first, the guest with pool=web
    const created = await run(['apply', '--yes'])
    expect(created.stderr).not.toMatch(/proxops: error/)
    expect(created.code).toBe(0)
    expect(created.stdout).toContain('3 ok')
    expect((await pools()).get('web')).toEqual({ comment: 'managed-by=proxops.lab front end', vms: [130] })
    expect((await run(['diff', '--detailed-exitcode'])).code).toBe(0)

    // drift by hand: the comment edited, the guest moved to db
    await admin.updatePool({ poolid: 'web', comment: 'edited' })
    await admin.updatePool({ poolid: 'db', vms: '130', 'allow-move': true })
    const drift = await run(['diff', '--detailed-exitcode'])
    expect(drift.code).toBe(2)
    expect(drift.stdout).toContain('spec.comment')
    expect(drift.stdout).toMatch(/spec\.pool.*"db" -> "web"/)
    expect((await run(['apply', '--yes'])).code).toBe(0)
    expect((await pools()).get('web')).toEqual({ comment: 'managed-by=proxops.lab front end', vms: [130] })

    // update from git: the guest moves to db
    commit({ ...files, 'vm/lab/app.yaml': guest('db') })
    expect((await run(['apply', '--yes'])).code).toBe(0)
    const moved = await pools()
    expect([moved.get('web')?.vms, moved.get('db')?.vms]).toEqual([[], [130]])
    expect((await run(['diff', '--detailed-exitcode'])).code).toBe(0)

    // adopt: forget the manifests (nothing is pruned without a budget) and adopt them back
    commit({ 'pool/lab/web.yaml': undefined, 'pool/lab/db.yaml': undefined, 'vm/lab/app.yaml': undefined })
    const adopted = await run(['adopt', '--cluster', 'lab'])
    expect(adopted.code).toBe(0)
    expect(readFileSync(path.join(repo, 'vm/lab/app.yaml'), 'utf8')).toContain('pool: db')
    expect(readFileSync(path.join(repo, 'pool/lab/web.yaml'), 'utf8')).toContain('comment: front end')
    commit({
      'pool/lab/web.yaml': readFileSync(path.join(repo, 'pool/lab/web.yaml'), 'utf8'),
      'pool/lab/db.yaml': readFileSync(path.join(repo, 'pool/lab/db.yaml'), 'utf8'),
      'vm/lab/app.yaml': readFileSync(path.join(repo, 'vm/lab/app.yaml'), 'utf8'),
    })
    expect((await run(['diff', '--detailed-exitcode'])).code).toBe(0)

    // prune: db goes after its guest; web holds a guest made by hand, so it stays
    await admin.waitTaskOk(await admin.createGuest('pve1', 'qemu', { vmid: 190, memory: 256, pool: 'web' }))
    commit({ 'pool/lab/web.yaml': undefined, 'pool/lab/db.yaml': undefined, 'vm/lab/app.yaml': undefined })
    const pruned = await run([
      'apply',
      '--yes',
      '--prune-budget',
      'unlimited',
      '--allow-empty',
      'VM',
      '--allow-empty',
      'Pool',
    ])
    expect(pruned.stderr).not.toMatch(/proxops: error/)
    expect(pruned.stdout).toContain('Pool/db')
    expect([...(await pools()).keys()]).toEqual(['web'])
    expect(pruned.stdout).toMatch(/Pool\/web.*contains guest 190/)
  })
})
