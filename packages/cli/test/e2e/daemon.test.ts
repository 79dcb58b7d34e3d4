/** run: health transitions, metrics, /status, the lock, URL mode, SIGTERM (idle and mid-task). */
import { beforeAll, describe, expect, it } from 'vitest'
import { existsSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import {
  CANARY,
  baseEnv,
  findCanaries,
  freePort,
  git,
  httpGet,
  makeRepo,
  proxops,
  start,
  startLab,
  vmManifest,
  waitFor,
  useLab,
  transcriptCanaries,
  commitManifests,
} from './harness.js'

const lab = useLab()
let repo: string
let data: string

const get = (port: number, p: string) => httpGet(port, p)

beforeAll(async () => {
  repo = await lab.repo()
  data = lab.tmp('proxops-data-')
})

describe('proxops run', () => {
  it('becomes ready, serves metrics and status, holds the lock, turns unready when PVE fails, stops on SIGTERM', async () => {
    const port = await freePort()
    const env = baseEnv(repo, { PROXOPS_GIT_TOKEN: CANARY.gitToken })
    const head = git(repo, 'rev-parse', 'HEAD')
    const index = readFileSync(path.join(repo, '.git', 'index'))
    const daemon = start(['run', '--listen', `127.0.0.1:${port}`, '--git-poll-sec', '1', '--data-dir', data], {
      cwd: repo,
      env,
    })
    const health = await waitFor(() => get(port, '/healthz'))
    expect(health.status).toBe(200)
    await waitFor(async () => ((await get(port, '/readyz'))?.status === 200 ? true : undefined), 30_000)
    expect(
      lab.sim.control
        .guests()
        .map((g) => g.vmid)
        .sort(),
    ).toEqual([100, 101])

    const metrics = (await get(port, '/metrics'))?.body ?? ''
    expect(metrics).toMatch(/proxops_cycles_total\{cluster="lab",result="converged"\} [1-9]/)
    expect(metrics).toMatch(/proxops_actions_total\{cluster="lab",kind="VM",action="create",result="ok"\} 2/)
    expect(metrics).toMatch(/proxops_last_success_timestamp_seconds\{cluster="lab"\} \d/)
    expect(metrics).toMatch(/proxops_pve_request_duration_seconds_count\{cluster="lab",method="GET",status="200"\} \d+/)
    expect(metrics).toMatch(/proxops_prune_deferred_total\{cluster="lab"\} 0/)
    const status = JSON.parse((await get(port, '/status'))?.body ?? '{}') as {
      clusters: { cluster: string; result: string }[]
      commit: string
    }
    expect(status.clusters).toEqual([expect.objectContaining({ cluster: 'lab', result: 'converged' })])
    expect(status.commit).toBe(git(repo, 'rev-parse', 'HEAD').trim())

    // single instance: a second daemon waits as a standby (daytwo.test.ts); a single tick refuses at once
    const second = await proxops(['run', '--once', '--listen', `127.0.0.1:${await freePort()}`, '--data-dir', data], {
      cwd: repo,
      env,
    })
    expect(second.code).toBe(1)
    expect(second.stderr).toMatch(
      /proxops: error: another proxops daemon \(pid \d+\) holds .*proxops\.lock; stop it first/,
    )

    // PVE rejects the token: cycles abort, readiness drops after 3 intervals, comes back when fixed
    lab.sim.control.revokeToken()
    await waitFor(async () => ((await get(port, '/readyz'))?.status === 503 ? true : undefined), 30_000)
    const unready = JSON.parse((await get(port, '/readyz'))?.body ?? '{}') as {
      clusters: Record<string, { reason?: string }>
    }
    expect(unready.clusters.lab?.reason).toMatch(/no successful cycle within 3 poll intervals/)
    expect((await get(port, '/healthz'))?.status).toBe(200)
    expect((await get(port, '/metrics'))?.body).toMatch(/proxops_cycles_total\{cluster="lab",result="aborted"\} [1-9]/)
    lab.sim.control.restoreToken()
    await waitFor(async () => ((await get(port, '/readyz'))?.status === 200 ? true : undefined), 30_000)

    for (const p of ['/status', '/metrics', '/readyz', '/healthz'])
      expect(findCanaries((await get(port, p))?.body ?? '')).toEqual([])

    // idle, between ticks: it exits at once (within 5 s, on a loaded machine)
    const idle = Date.now()
    daemon.child.kill('SIGTERM')
    const done = await daemon.done
    expect(Date.now() - idle).toBeLessThan(5_000)
    expect(done.code).toBe(0)
    expect(existsSync(path.join(data, 'proxops.lock'))).toBe(false)
    // local mode never touches the work tree, the index or HEAD
    expect(readFileSync(path.join(repo, '.git', 'index')).equals(index)).toBe(true)
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(head)
    expect(git(repo, 'status', '--porcelain')).toBe('')
    // logs are NDJSON on stderr
    const lines = done.stderr.trim().split('\n')
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
    expect(lines.map((l) => (JSON.parse(l) as { event?: string }).event)).toEqual(
      expect.arrayContaining(['proxops.daemon.start', 'proxops.cycle', 'proxops.action', 'proxops.daemon.stop']),
    )
    expect(done.stdout).toBe('')
  })

  it('takes over the lock of a dead daemon whose pid now belongs to another program', async () => {
    // the daemon that wrote the lock died; its pid was reused by `sleep` (the stamp is not sleep's start time)
    const other = spawn('sleep', ['60'], { stdio: 'ignore' })
    await new Promise((r) => other.once('spawn', r))
    const dir = mkdtempSync(path.join(os.tmpdir(), 'proxops-data-'))
    try {
      writeFileSync(path.join(dir, 'proxops.lock'), `${other.pid}\n1\n`)
      const port = await freePort()
      const daemon = start(['run', '--listen', `127.0.0.1:${port}`, '--data-dir', dir], {
        cwd: repo,
        env: baseEnv(repo),
      })
      const health = await waitFor(() => get(port, '/healthz'))
      expect(health.status).toBe(200)
      expect(readFileSync(path.join(dir, 'proxops.lock'), 'utf8').split('\n')[0]).toBe(String(daemon.child.pid))
      daemon.child.kill('SIGTERM')
      expect((await daemon.done).code).toBe(0)
    } finally {
      other.kill()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('SIGTERM mid-task: the running action finishes (no half-made guest), nothing new starts; a second signal exits at once', async () => {
    commitManifests(repo, { 'vm/lab/slow.yaml': vmManifest('slow', 110, { node: 'pve2' }) }, 'slow vm')
    // the create is held while the daemon is told to stop: it is running whenever the test looks
    lab.sim.control.setTaskBehaviour('qmcreate', { hold: true })
    try {
      const port = await freePort()
      const daemon = start(['run', '--listen', `127.0.0.1:${port}`, '--data-dir', data], {
        cwd: repo,
        env: baseEnv(repo),
      })
      await waitFor(
        () => (lab.sim.control.tasks().some((t) => t.type === 'qmcreate' && t.status === 'running') ? true : undefined),
        30_000,
      )
      await waitFor(() => get(port, '/healthz'))
      const t0 = Date.now()
      daemon.child.kill('SIGTERM')
      // while the running action finishes, /healthz still answers: 503, so a supervisor sees it stopping
      const stopping = await waitFor(async () => {
        const h = await get(port, '/healthz')
        return h?.status === 503 ? h : undefined
      })
      expect(JSON.parse(stopping.body)).toMatchObject({ ok: false })
      expect(lab.sim.control.tasks().some((t) => t.type === 'qmcreate' && t.status === 'running')).toBe(true)
      lab.sim.control.setTaskBehaviour('qmcreate', null)
      const done = await daemon.done
      expect(Date.now() - t0).toBeLessThan(15_000)
      expect(done.code).toBe(0)
      expect(existsSync(path.join(data, 'proxops.lock'))).toBe(false)
      expect(lab.sim.control.guests().filter((g) => g.vmid === 110)).toHaveLength(1)
      const actions = done.stderr.split('\n').filter((l) => l.includes('"proxops.action"'))
      expect(actions.map((l) => (JSON.parse(l) as { address: string; result: string }).result)).toEqual(['ok'])

      // apply interrupted twice: leaves at once (the PVE task carries on); the next apply converges, no duplicate
      writeFileSync(path.join(repo, 'vm/lab/slow.yaml'), vmManifest('slow', 110, { node: 'pve2', memory: '768MiB' }))
      git(repo, 'commit', '-qam', 'slow: more memory')
      // the config task is held: only the second signal can end the apply
      lab.sim.control.setTaskBehaviour('qmconfig', { hold: true })
      const apply = start(['apply', '--yes'], { cwd: repo, env: baseEnv(repo) })
      await waitFor(
        () => (lab.sim.control.tasks().some((t) => t.type === 'qmconfig' && t.status === 'running') ? true : undefined),
        30_000,
      )
      const t1 = Date.now()
      apply.child.kill('SIGTERM')
      await new Promise((r) => setTimeout(r, 200))
      apply.child.kill('SIGTERM')
      const killed = await apply.done
      expect(Date.now() - t1).toBeLessThan(5_000)
      expect(killed.code).toBe(143)
    } finally {
      lab.sim.control.setTaskBehaviour('qmcreate', null)
      lab.sim.control.setTaskBehaviour('qmconfig', null)
    }
    await waitFor(() => (lab.sim.control.tasks().some((t) => t.status === 'running') ? undefined : true), 30_000)
    const again = await proxops(['apply', '--yes'], { cwd: repo, env: baseEnv(repo) })
    expect(again.code).toBe(0)
    expect(lab.sim.control.guests().filter((g) => g.vmid === 110)).toHaveLength(1)
    expect((await proxops(['diff', '--detailed-exitcode'], { cwd: repo, env: baseEnv(repo) })).code).toBe(0)
  })

  it('URL mode: clones into the data dir, one commit for all clusters, --once', async () => {
    const urlData = mkdtempSync(path.join(os.tmpdir(), 'proxops-url-'))
    try {
      const r = await proxops(
        [
          'run',
          '--once',
          '--git-url',
          `file://${repo}`,
          '--listen',
          `127.0.0.1:${await freePort()}`,
          '--data-dir',
          urlData,
        ],
        {
          cwd: repo,
          env: baseEnv(repo, { PROXOPS_GIT_TOKEN: CANARY.gitToken }),
        },
      )
      expect(r.stderr).not.toMatch(/"level":"error"/)
      expect(r.code).toBe(0)
      expect(existsSync(path.join(urlData, 'git-cache', '.git'))).toBe(true)
      const cycle = r.stderr
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { event?: string; commit?: string; result?: string })
        .find((l) => l.event === 'proxops.cycle')
      expect(cycle).toMatchObject({ commit: git(repo, 'rev-parse', 'HEAD').trim(), result: 'converged' })
    } finally {
      rmSync(urlData, { recursive: true, force: true })
    }
  })

  it('the sliding prune window caps deletions across ticks', async () => {
    const own = await startLab()
    const vms = Object.fromEntries(
      [130, 131, 132, 133, 134].map((id) => [`vm/lab/v${id}.yaml`, vmManifest(`v${id}`, id)]),
    )
    const root = await makeRepo(own, {
      manifests: vms,
      proxopsYaml: 'reconcile:\n  prune-budget: unlimited\n  prune-window:\n    max: 1\n    period: 1h\n',
    })
    const dir = mkdtempSync(path.join(os.tmpdir(), 'proxops-window-'))
    try {
      expect((await proxops(['apply', '--yes'], { cwd: root, env: baseEnv(root) })).code).toBe(0)
      writeFileSync(
        path.join(root, 'clusters/lab/resources.yaml'),
        `resources:\n${[130, 131, 132].map((id) => `  - ../../vm/lab/v${id}.yaml`).join('\n')}\n`,
      )
      git(root, 'commit', '-qam', 'drop two')
      const port = await freePort()
      const daemon = start(['run', '--listen', `127.0.0.1:${port}`, '--git-poll-sec', '1', '--data-dir', dir], {
        cwd: root,
        env: baseEnv(root),
      })
      await waitFor(async () => {
        const m = (await get(port, '/metrics'))?.body ?? ''
        const cycles = [...m.matchAll(/proxops_cycles_total\{cluster="lab",result="\w+"\} (\d+)/g)].reduce(
          (n, x) => n + Number(x[1]),
          0,
        )
        return cycles >= 3 ? true : undefined
      }, 60_000)
      const metrics = (await get(port, '/metrics'))?.body ?? ''
      daemon.child.kill('SIGTERM')
      expect((await daemon.done).code).toBe(0)
      expect(
        own.control
          .guests()
          .map((g) => g.vmid)
          .filter((id) => id >= 133),
      ).toHaveLength(1)
      expect(metrics).toMatch(/proxops_actions_total\{cluster="lab",kind="VM",action="delete",result="ok"\} 1/)
      expect(metrics).toMatch(/proxops_prune_deferred_total\{cluster="lab"\} [1-9]/)
    } finally {
      await own.close()
      rmSync(root, { recursive: true, force: true })
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('no canary anywhere', () => {
    expect(transcriptCanaries()).toEqual([])
  })
})
