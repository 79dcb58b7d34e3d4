/**
 * Day-two GitOps through the daemon against the simulator (issue 43): commits only, the leader lock and its
 * standby, suspensions, per-object policies and reconcile-now.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Simulator } from '@proxops/pve-sim'
import { baseEnv, findCanaries, git, makeRepo, proxops, startLab, transcript, vmManifest } from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

let sim: Simulator
const cleanup: string[] = []
const tmp = (prefix: string): string => {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix))
  cleanup.push(dir)
  return dir
}

beforeAll(async () => {
  sim = await startLab()
})
afterAll(async () => {
  await sim.close()
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true })
})

const events = (stderr: string): Record<string, unknown>[] =>
  stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)

const addVm = (root: string, name: string, vmid: number): void => {
  writeFileSync(path.join(root, `vm/lab/${name}.yaml`), vmManifest(name, vmid))
  writeFileSync(
    path.join(root, 'clusters/lab/resources.yaml'),
    `${readFileSync(path.join(root, 'clusters/lab/resources.yaml'), 'utf8')}  - ../../vm/lab/${name}.yaml\n`,
  )
}

describe('the daemon reconciles commits only', () => {
  it('an uncommitted edit is reported and never applied; a one-shot diff plans it and says the tree is dirty; the commit is applied', async () => {
    const root = await makeRepo(sim, { manifests: { 'vm/lab/a.yaml': vmManifest('a', 200) } })
    cleanup.push(root)
    const data = tmp('proxops-data-')
    const run = () =>
      proxops(['run', '--once', '--listen', `127.0.0.1:0`, '--data-dir', data], { cwd: root, env: baseEnv(root) })
    addVm(root, 'b', 201)
    const first = await run()
    expect(first.code).toBe(0)
    expect(sim.control.guests().map((g) => g.vmid)).toContain(200)
    expect(sim.control.guests().map((g) => g.vmid)).not.toContain(201)
    const log = events(first.stderr)
    expect(log.find((e) => e.event === 'proxops.cycle')).toMatchObject({
      commit: git(root, 'rev-parse', 'HEAD').trim(),
      result: 'converged',
    })
    expect(log.find((e) => e.event === 'proxops.git' && e.level === 'warn')).toMatchObject({
      message: 'uncommitted changes in the work tree are not applied; commit them',
      uncommitted: ['clusters/lab/resources.yaml', 'vm/lab/b.yaml'],
    })
    // the one-shot commands keep reading the work tree as it is, and say so
    const diff = await proxops(['diff'], { cwd: root, env: baseEnv(root) })
    expect(diff.stdout).toMatch(/uncommitted changes \(dirty work tree\)/)
    expect(diff.stdout).toMatch(/VM\/pve1\/201\(b\)/)
    git(root, 'add', '-A')
    git(root, 'commit', '-qm', 'b')
    expect((await run()).code).toBe(0)
    expect(sim.control.guests().map((g) => g.vmid)).toContain(201)
  })
})

describe('no secret', () => {
  it('reaches any output', () => {
    expect(transcript.flatMap((t) => findCanaries(t))).toEqual([])
  })
})
