/**
 * Safety snapshots through the CLI, one lifecycle (pve-guest-common PVE::AbstractConfig snapshot_create /
 * snapshot_delete behind qemu-server's `snapshot` and `delsnapshot`): validate refuses a bad `keep`, a create
 * takes none, a disk resize shows `+ snapshot` in diff and takes `proxops-<UTC time>` first, a saved plan
 * without its snapshot action is refused, the prune keeps the newest `keep` proxops-* snapshots and never an
 * admin's, and the cluster converges.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import type { Simulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { baseEnv, git, makeRepo, proxops, startLab, vmManifest, adminClient, closeLab } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

let sim: Simulator
let repo: string
let admin: PveClient
const run = (args: string[]) => proxops(args, { cwd: repo, env: baseEnv(repo) })
const config = () => path.join(repo, 'clusters/lab/config.yaml')
const vm = (size: string) => vmManifest('app', 140).replace('size: 4GiB', `size: ${size}`)
function commit(files: Record<string, string>): void {
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(repo, file), text)
  git(repo, 'commit', '-q', '-am', 'snapshots')
}
const snapshots = async () => (await admin.snapshots('pve1', 'qemu', 140)).map((s) => s.name).sort()

beforeAll(async () => {
  sim = await startLab()
  repo = await makeRepo(sim, {
    manifests: { 'vm/lab/app.yaml': vm('4GiB') },
    clusterExtra: '      safety-snapshots:\n        keep: 0',
  })
  admin = adminClient(sim)
})
afterAll(() => closeLab(admin, sim, repo))

describe('safety snapshots', () => {
  it('validate, create, + snapshot before a resize, saved plan contract, prune to keep, converged', async () => {
    const bad = await run(['validate'])
    expect(bad.code).toBe(1)
    expect(bad.stdout + bad.stderr).toMatch(/clusters\/lab\/config\.yaml:\d+.*safety-snapshots\.keep.*between 1 and 20/)
    commit({ 'clusters/lab/config.yaml': readFileSync(config(), 'utf8').replace('keep: 0', 'keep: 1') })

    // a create takes no snapshot
    const created = await run(['apply', '--yes'])
    expect(created.code, created.stderr).toBe(0)
    expect(await snapshots()).toEqual([])
    await admin.waitTaskOk(await admin.createSnapshot('pve1', 'qemu', 140, 'manual'), { pollIntervalMs: 20 })

    // a resize: the snapshot action first in the text plan, and in the saved plan
    commit({ 'vm/lab/app.yaml': vm('6GiB') })
    const planFile = path.join(repo, '..', `${path.basename(repo)}-snap.json`)
    const diff = await run(['diff', '--out', planFile])
    expect(diff.code).toBe(0)
    expect(diff.stdout).toMatch(/\+ snapshot VM\/pve1\/140\(app\)\n[\s\S]*~ VM\/pve1\/140\(app\)/)
    expect(diff.stdout).toContain('Plan: 0 to create, 1 to update, 0 to delete, 1 safety snapshot.')
    // the same plan without its snapshot action is not what a fresh plan produces: refused, nothing written
    type Saved = { plans: { actions: { type: string; dependsOn: string[] }[] }[] }
    const tampered = JSON.parse(readFileSync(planFile, 'utf8')) as Saved
    const lab = tampered.plans[0]!
    expect(lab.actions.map((a) => a.type)).toEqual(['snapshot', 'resize'])
    lab.actions = lab.actions.filter((a) => a.type !== 'snapshot')
    for (const a of lab.actions) a.dependsOn = []
    const tamperedFile = `${planFile}.tampered.json`
    writeFileSync(tamperedFile, `${JSON.stringify(tampered, null, 2)}\n`)
    const writes = sim.stats.writes()
    const refused = await run(['apply', '--plan', tamperedFile, '--yes'])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/cluster lab: .*fresh plan/)
    expect(sim.stats.writes()).toBe(writes)

    const applied = await run(['apply', '--plan', planFile, '--yes'])
    expect(applied.code, applied.stderr).toBe(0)
    const first = await snapshots()
    expect(first).toEqual(['manual', expect.stringMatching(/^proxops-\d{8}T\d{6}Z$/) as string])
    expect(sim.control.guest(140)!.config.scsi0).toMatch(/size=6G/)

    // the next resize keeps only the newest proxops-* snapshot (keep: 1); the admin's stays
    commit({ 'vm/lab/app.yaml': vm('8GiB') })
    const again = await run(['apply', '--yes'])
    expect(again.code, again.stderr).toBe(0)
    const second = await snapshots()
    expect(second).toHaveLength(2)
    expect(second).toContain('manual')
    expect(second).not.toContain(first[1])
    expect(sim.control.guest(140)!.config.scsi0).toMatch(/size=8G/)

    const converged = await run(['diff', '--detailed-exitcode'])
    expect(converged.code).toBe(0)
    expect(converged.stdout).toContain('No changes. PVE matches git.')
    rmSync(planFile)
    rmSync(tamperedFile)
  })
})
