/**
 * Day-two GitOps through the daemon against the simulator (issue 43): commits only, the leader lock and its
 * standby, suspensions, per-object policies and reconcile-now.
 */
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Simulator } from '@proxops/pve-sim'
import {
  baseEnv,
  errorLines,
  findCanaries,
  freePort,
  git,
  httpGet,
  makeRepo,
  proxops,
  start,
  startLab,
  transcript,
  vmManifest,
  waitFor,
} from './harness.js'

vi.setConfig({ testTimeout: 180_000, hookTimeout: 60_000 })

// each case has a simulator of its own: two repositories of one cluster entry would prune each other's guests
let sim: Simulator
const sims: Simulator[] = []
const cleanup: string[] = []
const tmp = (prefix: string): string => {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix))
  cleanup.push(dir)
  return dir
}

beforeEach(async () => {
  sim = await startLab()
  sims.push(sim)
})
afterAll(async () => {
  for (const s of sims) await s.close()
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

describe('two daemons on one data dir', () => {
  it('the second waits as a standby (on /readyz), a manual apply waits for the running cycle or refuses, and after a SIGKILL of the leader the standby takes over within an interval; nothing runs twice', async () => {
    const root = await makeRepo(sim, { manifests: { 'vm/lab/k.yaml': vmManifest('k', 210) } })
    cleanup.push(root)
    const data = tmp('proxops-data-')
    const daemon = async () => {
      const port = await freePort()
      const d = start(['run', '--listen', `127.0.0.1:${port}`, '--git-poll-sec', '1', '--data-dir', data], {
        cwd: root,
        env: baseEnv(root),
      })
      await waitFor(() => httpGet(port, '/healthz'))
      return { ...d, port }
    }
    const creates = () => sim.control.tasks().filter((t) => t.type === 'qmcreate' && t.id === '210')
    // the leader's create is held: it is mid-cycle, holding the write lock, when it is killed
    sim.control.setTaskBehaviour('qmcreate', { hold: true })
    try {
      const leader = await daemon()
      await waitFor(() => (creates().some((t) => t.status === 'running') ? true : undefined), 30_000)
      const standby = await daemon()
      const ready = await waitFor(async () => {
        const r = await httpGet(standby.port, '/readyz')
        return r?.status === 503 && r.body.includes('standby') ? r : undefined
      })
      expect(JSON.parse(ready.body)).toMatchObject({ ready: false, role: 'standby', leader: leader.child.pid })
      expect((await httpGet(standby.port, '/'))?.body).toContain(
        `standby: the daemon with pid ${leader.child.pid} leads`,
      )
      // a manual apply on the same data dir waits for the running cycle, then refuses and says so
      const apply = await proxops(['apply', '--yes', '--lock-wait', '1', '--data-dir', data], {
        cwd: root,
        env: baseEnv(root),
      })
      expect(apply.code).toBe(1)
      expect(apply.stderr).toContain(`Waiting for the running cycle of the proxops daemon (pid ${leader.child.pid})`)
      expect(errorLines(apply.stderr).join('\n')).toMatch(
        /the proxops daemon \(pid \d+\) is running a cycle on .* nothing was applied/,
      )
      leader.child.kill('SIGKILL')
      const t0 = Date.now()
      await leader.done
      // the standby leads within one poll interval (1 s; generous on a loaded machine)
      await waitFor(() => (standby.stderrSoFar().includes('"proxops.daemon.leader"') ? true : undefined), 10_000, 50)
      expect(Date.now() - t0).toBeLessThan(5_000)
      // PVE's task carries on; the new leader finds the guest locked by it and creates nothing
      sim.control.setTaskBehaviour('qmcreate', null)
      await waitFor(
        async () => ((await httpGet(standby.port, '/convergedz'))?.status === 200 ? true : undefined),
        60_000,
      )
      expect(creates()).toHaveLength(1)
      expect(sim.control.guests().filter((g) => g.vmid === 210)).toHaveLength(1)
      const ready2 = JSON.parse((await httpGet(standby.port, '/readyz'))?.body ?? '{}') as { role?: string }
      expect(ready2.role).toBe('leader')
      standby.child.kill('SIGTERM')
      const done = await standby.done
      expect(done.code).toBe(0)
      const actions = events(done.stderr).filter((e) => e.event === 'proxops.action')
      expect(actions.filter((a) => a.action === 'create')).toEqual([])
      // with no daemon left, a manual apply takes the write lock at once
      expect((await proxops(['apply', '--yes', '--data-dir', data], { cwd: root, env: baseEnv(root) })).code).toBe(0)
    } finally {
      sim.control.setTaskBehaviour('qmcreate', null)
    }
  })
})

describe('no secret', () => {
  it('reaches any output', () => {
    expect(transcript.flatMap((t) => findCanaries(t))).toEqual([])
  })
})
