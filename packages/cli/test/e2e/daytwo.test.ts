/**
 * Day-two GitOps through the daemon against the simulator (issue 43): commits only, the leader lock and its
 * standby, suspensions, per-object policies and reconcile-now.
 */
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { createHmac } from 'node:crypto'
import { createServer } from 'node:http'
import path from 'node:path'
import type { Simulator } from '@proxops/pve-sim'
import { encryptSops } from '@proxops/sops'
import {
  AGE_KEY_FILE,
  CANARY,
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

describe('suspend and resume', () => {
  it('a suspended object or cluster with drift is read, shown with its drift and never written; it survives restarts; resume converges it', async () => {
    const root = await makeRepo(sim, {
      manifests: { 'vm/lab/s.yaml': vmManifest('s', 220), 'vm/lab/t.yaml': vmManifest('t', 221) },
    })
    cleanup.push(root)
    const data = tmp('proxops-data-')
    const env = baseEnv(root)
    const memory = (vmid: number) => Number(sim.control.guests().find((g) => g.vmid === vmid)?.config.memory)
    const edit = (name: string, vmid: number, mem: string, annotation = '') => {
      writeFileSync(
        path.join(root, `vm/lab/${name}.yaml`),
        vmManifest(name, vmid, { memory: mem }).replace('metadata:\n', `metadata:\n${annotation}`),
      )
      git(root, 'commit', '-qam', `${name}: ${mem}`)
    }
    const once = () => proxops(['run', '--once', '--listen', '127.0.0.1:0', '--data-dir', data], { cwd: root, env })
    expect((await once()).code).toBe(0)
    // VM s suspended by the command, VM t by its annotation; both drift
    const s = await proxops(['suspend', 'vm/s', '--reason', 'incident 7', '--data-dir', data], { cwd: root, env })
    expect(s.code).toBe(0)
    expect(s.stdout).toMatch(/^Suspended VM\/s of cluster lab since \d{4}-.*Z: incident 7$/m)
    expect((await proxops(['suspend', 'VM/s', '--data-dir', data], { cwd: root, env })).stderr).toMatch(
      /suspend needs --reason/,
    )
    edit('s', 220, '768MiB')
    edit('t', 221, '768MiB', '  annotations:\n    proxops/suspend: "firmware test"\n')
    for (let restart = 0; restart < 2; restart++) {
      const r = await once()
      const cycle = events(r.stderr).find((e) => e.event === 'proxops.cycle')
      expect(cycle).toMatchObject({ result: 'blocked', blockedByReason: { suspended: 2 }, planned: 0 })
      expect(memory(220)).toBe(512)
      expect(memory(221)).toBe(512)
    }
    // status and diff show the drift and why it waits
    const status = await proxops(['status', '--data-dir', data], { cwd: root, env })
    expect(status.stdout).toMatch(/VM +s .*blocked +suspended: suspended since .* incident 7; withheld: update \(/)
    expect(status.stdout).toMatch(
      /VM +t .*blocked +suspended: suspended by its proxops\/suspend annotation: firmware test/,
    )
    // a manual apply honours it too
    expect((await proxops(['apply', '--yes', '--data-dir', data], { cwd: root, env })).code).toBe(1)
    expect(memory(220)).toBe(512)
    // the daemon's page and /status say what is suspended, since when and why
    const port = await freePort()
    const daemon = start(['run', '--listen', `127.0.0.1:${port}`, '--data-dir', data], { cwd: root, env })
    const doc = await waitFor(async () => {
      const r = await httpGet(port, '/status')
      const d =
        r?.status === 200
          ? (JSON.parse(r.body) as { clusters: { result: string | null }[]; suspensions: unknown[] })
          : undefined
      return d && d.clusters[0]?.result !== null ? d : undefined
    }, 30_000)
    expect(doc.suspensions).toEqual([
      expect.objectContaining({
        cluster: 'lab',
        object: 'VM/s',
        reason: 'incident 7',
        since: expect.stringMatching(/Z$/),
      }),
    ])
    const page = (await httpGet(port, '/'))?.body ?? ''
    expect(page).toMatch(
      /Suspended \(read, never written\): VM\/s since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC.*: incident 7/,
    )
    daemon.child.kill('SIGTERM')
    expect((await daemon.done).code).toBe(0)
    // resume: the next cycle converges VM s; a whole cluster suspended holds everything
    expect((await proxops(['resume', 'VM/s', '--data-dir', data], { cwd: root, env })).stdout).toMatch(/^Resumed VM\/s/)
    // VM t stays suspended (blocked, not a failure: the tick exits 0)
    expect((await once()).code).toBe(0)
    expect(memory(220)).toBe(768)
    expect((await proxops(['suspend', '--reason', 'PVE upgrade', '--data-dir', data], { cwd: root, env })).code).toBe(0)
    edit('s', 220, '1GiB')
    await once()
    expect(memory(220)).toBe(768)
    expect((await proxops(['resume', '--cluster', 'lab', '--data-dir', data], { cwd: root, env })).code).toBe(0)
    edit('t', 221, '768MiB')
    expect((await once()).code).toBe(0)
    expect(memory(220)).toBe(1024)
    expect(memory(221)).toBe(768)
  })
})

describe('per-object policies', () => {
  it('prune: never (cluster list and annotation) keeps what left git, reported; ignore-fields never compares a field', async () => {
    const annotate = (text: string, lines: string) => text.replace('metadata:\n', `metadata:\n  annotations:\n${lines}`)
    const root = await makeRepo(sim, {
      manifests: {
        'vm/lab/p.yaml': vmManifest('p', 230),
        'vm/lab/q.yaml': annotate(vmManifest('q', 231), '    proxops/prune: never\n'),
        'vm/lab/r.yaml': annotate(vmManifest('r', 232), '    proxops/ignore-fields: spec.memory\n'),
        'vm/lab/s.yaml': vmManifest('s', 233),
      },
      clusterExtra: '      policy:\n        prune-never: [VM/p]',
      proxopsYaml: 'reconcile:\n  prune-budget: unlimited\n',
    })
    cleanup.push(root)
    const data = tmp('proxops-data-')
    const env = baseEnv(root)
    const once = () => proxops(['run', '--once', '--listen', '127.0.0.1:0', '--data-dir', data], { cwd: root, env })
    expect((await once()).code).toBe(0)
    const vmids = () =>
      sim.control
        .guests()
        .map((g) => g.vmid)
        .sort()
    expect(vmids()).toEqual([230, 231, 232, 233])
    // ignore-fields: a new memory in git is not compared, so not written
    writeFileSync(
      path.join(root, 'vm/lab/r.yaml'),
      annotate(vmManifest('r', 232, { memory: '768MiB' }), '    proxops/ignore-fields: spec.memory\n'),
    )
    // p, q and s leave git: only s is deleted
    writeFileSync(path.join(root, 'clusters/lab/resources.yaml'), 'resources:\n  - ../../vm/lab/r.yaml\n')
    git(root, 'add', '-A')
    git(root, 'commit', '-qm', 'drop p, q, s; r memory')
    const diff = await proxops(['diff', '--data-dir', data], { cwd: root, env })
    expect(diff.stdout).toMatch(/kept by its prune: never policy/)
    const r = await once()
    expect(r.code).toBe(0)
    expect(events(r.stderr).find((e) => e.event === 'proxops.cycle')).toMatchObject({ result: 'converged', pruned: 1 })
    expect(vmids()).toEqual([230, 231, 232])
    expect(Number(sim.control.guests().find((g) => g.vmid === 232)?.config.memory)).toBe(512)
    // and stays so, cycle after cycle
    await once()
    expect(vmids()).toEqual([230, 231, 232])
  })
})

/** Rewrites the cluster's SOPS file (as makeRepo wrote it) with one more key in its `secrets:` map, committed. */
async function addSopsSecret(root: string, key: string, value: string): Promise<void> {
  const recipient = /public key: (age1[0-9a-z]+)/.exec(readFileSync(AGE_KEY_FILE, 'utf8'))?.[1] as string
  const plain = `secrets:\n  pve-user: root@pam\n  pve-token-id: proxops\n  pve-token: ${CANARY.token}\n  git-token: ${CANARY.gitToken}\n  ${key}: ${value}\ncloud-init:\n  ssh-keys:\n    main: ${CANARY.sshKey}\n  passwords:\n    default: ${CANARY.ciPassword}\n`
  writeFileSync(
    path.join(root, 'clusters/lab/secrets.sops.yaml'),
    await encryptSops(plain, { recipients: [recipient], file: 'secrets.sops.yaml' }),
  )
  git(root, 'commit', '-qam', `secret ${key}`)
}

/** cycles the daemon counted so far, from /metrics */
async function cyclesOf(port: number): Promise<number> {
  const m = (await httpGet(port, '/metrics'))?.body ?? ''
  return [...m.matchAll(/proxops_cycles_total\{cluster="lab",result="\w+"\} (\d+)/g)].reduce(
    (n, x) => n + Number(x[1]),
    0,
  )
}

describe('reconcile now', () => {
  it('proxops reconcile (and an authenticated POST /reconcile) starts a cycle at once; without the token nothing starts', async () => {
    const root = await makeRepo(sim, { manifests: { 'vm/lab/n.yaml': vmManifest('n', 240) } })
    cleanup.push(root)
    const data = tmp('proxops-data-')
    const env = baseEnv(root)
    const port = await freePort()
    const listen = `127.0.0.1:${port}`
    // an hour between ticks: only a request can start the next one
    const daemon = start(['run', '--listen', listen, '--git-poll-sec', '3600', '--data-dir', data], { cwd: root, env })
    try {
      await waitFor(async () => ((await cyclesOf(port)) >= 1 ? true : undefined), 30_000)
      addVm(root, 'm', 241)
      git(root, 'add', '-A')
      git(root, 'commit', '-qm', 'm')
      const post = (headers: Record<string, string>) =>
        fetch(`http://${listen}/reconcile`, { method: 'POST', headers }).then((r) => r.status)
      expect(await post({})).toBe(401)
      expect(await post({ authorization: 'Bearer wrong' })).toBe(401)
      await new Promise((r) => setTimeout(r, 500))
      expect(await cyclesOf(port)).toBe(1)
      expect(sim.control.guests().map((g) => g.vmid)).not.toContain(241)
      const asked = await proxops(['reconcile', '--listen', listen, '--data-dir', data], { cwd: root, env })
      expect(asked.code).toBe(0)
      expect(asked.stdout).toBe(`The daemon at ${listen} starts a cycle of lab now.\n`)
      await waitFor(async () => ((await cyclesOf(port)) >= 2 ? true : undefined), 30_000)
      expect(sim.control.guests().map((g) => g.vmid)).toContain(241)
      expect(await cyclesOf(port)).toBe(2)
      const unknown = await proxops(['reconcile', '--cluster', 'nope', '--listen', listen, '--data-dir', data], {
        cwd: root,
        env,
      })
      expect(errorLines(unknown.stderr).join('\n')).toMatch(/refused \(404\): not configured: nope/)
      // the token never reaches a log line or an endpoint
      const token = readFileSync(path.join(data, 'reconcile.token'), 'utf8').trim()
      expect(token).toMatch(/^[0-9a-f]{64}$/)
      expect(daemon.stderrSoFar()).not.toContain(token)
      expect((await httpGet(port, '/status'))?.body).not.toContain(token)
    } finally {
      daemon.child.kill('SIGTERM')
      await daemon.done
    }
  })
})

describe('push webhooks', () => {
  it('a signed push starts a cycle within a second; bad signatures, replays and floods start nothing; the secret never shows', async () => {
    const root = await makeRepo(sim, {
      manifests: { 'vm/lab/w.yaml': vmManifest('w', 250) },
      // the receivers' secret: the SOPS file's git-token (a canary)
      clusterExtra: '      webhooks:\n        github: git-token\n        generic: git-token',
    })
    cleanup.push(root)
    const data = tmp('proxops-data-')
    const env = baseEnv(root)
    const port = await freePort()
    const daemon = start(['run', '--listen', `127.0.0.1:${port}`, '--git-poll-sec', '3600', '--data-dir', data], {
      cwd: root,
      env,
    })
    const body = Buffer.from(JSON.stringify({ ref: 'refs/heads/main', after: git(root, 'rev-parse', 'HEAD').trim() }))
    const sign = (b: Buffer, secret: string = CANARY.gitToken) =>
      `sha256=${createHmac('sha256', secret).update(b).digest('hex')}`
    const push = (headers: Record<string, string>, b = body) =>
      fetch(`http://127.0.0.1:${port}/hooks/lab/github`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-github-event': 'push', ...headers },
        body: b,
      }).then((r) => r.status)
    try {
      await waitFor(async () => ((await cyclesOf(port)) >= 1 ? true : undefined), 30_000)
      addVm(root, 'x', 251)
      git(root, 'add', '-A')
      git(root, 'commit', '-qm', 'x')
      // bad signatures, no signature, an unsigned generic request: nothing starts
      expect(await push({ 'x-github-delivery': 'bad-1', 'x-hub-signature-256': sign(body, 'not-the-secret') })).toBe(
        401,
      )
      expect(await push({ 'x-github-delivery': 'bad-2' })).toBe(401)
      const generic = await fetch(`http://127.0.0.1:${port}/hooks/lab/generic`, { method: 'POST', body })
      expect(generic.status).toBe(401)
      await new Promise((r) => setTimeout(r, 1000))
      expect(await cyclesOf(port)).toBe(1)
      // a signed push: the cycle starts within a second (its log line), and applies the new commit
      const t0 = Date.now()
      expect(await push({ 'x-github-delivery': 'good-1', 'x-hub-signature-256': sign(body) })).toBe(202)
      await waitFor(
        () => (daemon.stderrSoFar().includes('"reconcile asked: a tick starts now"') ? true : undefined),
        5_000,
        20,
      )
      expect(Date.now() - t0).toBeLessThan(1_000)
      await waitFor(async () => ((await cyclesOf(port)) >= 2 ? true : undefined), 30_000)
      expect(sim.control.guests().map((g) => g.vmid)).toContain(251)
      // the replay of that delivery starts nothing; nor does a flood of signed replays
      expect(await push({ 'x-github-delivery': 'good-1', 'x-hub-signature-256': sign(body) })).toBe(409)
      const flood = await Promise.all(
        Array.from({ length: 80 }, () => push({ 'x-github-delivery': 'good-1', 'x-hub-signature-256': sign(body) })),
      )
      expect(flood.every((s) => s === 409 || s === 429)).toBe(true)
      expect(flood).toContain(429)
      await new Promise((r) => setTimeout(r, 1000))
      expect(await cyclesOf(port)).toBe(2)
      // /status and the page show the receivers' last deliveries, never the secret
      const status = (await httpGet(port, '/status'))?.body ?? ''
      expect(JSON.parse(status)).toMatchObject({
        webhooks: expect.arrayContaining([expect.objectContaining({ path: '/hooks/lab/github', provider: 'github' })]),
      })
      expect((await httpGet(port, '/'))?.body).toMatch(
        /\/hooks\/lab\/github<\/td><td>github<\/td><td class="detail">.*refused/,
      )
      expect(findCanaries(status)).toEqual([])
    } finally {
      daemon.child.kill('SIGTERM')
      const done = await daemon.done
      expect(findCanaries(done.stderr)).toEqual([])
    }
  })
})

describe('notifications', () => {
  it('a local receiver gets one message per change of state (not per cycle), a retry after a failure, and never a secret', async () => {
    const got: { path: string; auth?: string; body: string }[] = []
    let failNext = 1
    const receiver = createServer((req, res) => {
      let body = ''
      req.on('data', (c: Buffer) => (body += c.toString()))
      req.on('end', () => {
        // the first delivery fails: the daemon tries again
        if (failNext > 0) {
          failNext--
          res.writeHead(500).end()
          return
        }
        got.push({
          path: req.url ?? '',
          body,
          ...(req.headers.authorization ? { auth: req.headers.authorization } : {}),
        })
        res.writeHead(200).end('{}')
      })
    })
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
    const rport = (receiver.address() as { port: number }).port
    const root = await makeRepo(sim, {
      manifests: { 'vm/lab/y.yaml': vmManifest('y', 260) },
      clusterExtra: [
        '      notifications:',
        `        - { type: webhook, url: "http://127.0.0.1:${rport}/json" }`,
        `        - { type: ntfy, url: "http://127.0.0.1:${rport}/ntfy", token-secret: git-token }`,
        '        - { type: slack, url-secret: slack-url }',
        `        - { type: matrix, url: "http://127.0.0.1:${rport}/mx", room: "!room:x", token-secret: git-token }`,
      ].join('\n'),
    })
    cleanup.push(root)
    // the Slack URL is a secret: it lives in the SOPS file
    await addSopsSecret(root, 'slack-url', `http://127.0.0.1:${rport}/slack`)
    const data = tmp('proxops-data-')
    const port = await freePort()
    const daemon = start(['run', '--listen', `127.0.0.1:${port}`, '--git-poll-sec', '1', '--data-dir', data], {
      cwd: root,
      env: baseEnv(root),
    })
    try {
      await waitFor(async () => ((await cyclesOf(port)) >= 1 ? true : undefined), 30_000)
      // PVE refuses the token for several cycles: one message per target, not one per cycle
      sim.control.revokeToken()
      await waitFor(() => (got.filter((g) => g.body.includes('cycle aborted')).length >= 4 ? true : undefined), 30_000)
      const before = await cyclesOf(port)
      await waitFor(async () => ((await cyclesOf(port)) >= before + 3 ? true : undefined), 30_000)
      expect(got.filter((g) => g.body.includes('cycle aborted'))).toHaveLength(4)
      sim.control.restoreToken()
      await waitFor(() => (got.filter((g) => g.body.includes('recovered')).length >= 4 ? true : undefined), 30_000)
      expect(got.map((g) => g.path).sort()).toEqual(
        ['/json', '/json', '/mx', '/mx', '/ntfy', '/ntfy', '/slack', '/slack'].map((p) =>
          p === '/mx'
            ? expect.stringMatching(/^\/mx\/_matrix\/client\/v3\/rooms\/!room%3Ax\/send\/m\.room\.message\//)
            : p,
        ),
      )
      expect(JSON.parse(got.find((g) => g.path === '/json')!.body)).toMatchObject({
        source: 'proxops',
        event: 'cycle-failed',
        cluster: 'lab',
      })
      // the ntfy and Matrix tokens go only where they belong: the Authorization header
      expect(got.find((g) => g.path === '/ntfy')?.auth).toBe(`Bearer ${CANARY.gitToken}`)
      expect(got.flatMap((g) => findCanaries(g.body))).toEqual([])
    } finally {
      sim.control.restoreToken()
      daemon.child.kill('SIGTERM')
      const done = await daemon.done
      receiver.close()
      expect(findCanaries(done.stderr)).toEqual([])
      // the first delivery failed and was sent again
      expect(done.stderr).toMatch(/"attempt":1,.*"message":"notification sent"/)
    }
  })
})

describe('sync windows', () => {
  it('outside its window a delete waits and diff says until when, a change that needs no restart does not; --override-window and an open window run it', async () => {
    const window = (schedule: string) =>
      `      sync-windows:\n        - { kind: allow, schedule: "${schedule}", duration: 1h, time-zone: Europe/Berlin }`
    const root = await makeRepo(sim, {
      manifests: { 'vm/lab/u.yaml': vmManifest('u', 270), 'vm/lab/v.yaml': vmManifest('v', 271) },
      // a window that opens only in 2100: closed now and for the next 14 days
      clusterExtra: window('2100-01-01 00:00'),
      proxopsYaml: 'reconcile:\n  prune-budget: unlimited\n  prune-window:\n    max: 10\n    period: 1h\n',
    })
    cleanup.push(root)
    const data = tmp('proxops-data-')
    const env = baseEnv(root)
    // creates are not disruptive: they run outside the window
    expect((await proxops(['apply', '--yes', '--data-dir', data], { cwd: root, env })).code).toBe(0)
    expect(
      sim.control
        .guests()
        .map((g) => g.vmid)
        .sort(),
    ).toEqual([270, 271])
    // v leaves git (a delete waits); u gets new tags (no restart: it does not wait)
    writeFileSync(path.join(root, 'clusters/lab/resources.yaml'), 'resources:\n  - ../../vm/lab/u.yaml\n')
    writeFileSync(path.join(root, 'vm/lab/u.yaml'), vmManifest('u', 270).replace('tags: [e2e]', 'tags: [e2e, web]'))
    git(root, 'commit', '-qam', 'drop v, tag u')
    const diff = await proxops(['diff', '--data-dir', data], { cwd: root, env })
    expect(diff.stdout).toMatch(/outside the cluster's sync windows: waits beyond the next 14 days; withheld: delete/)
    const once = await proxops(['run', '--once', '--listen', '127.0.0.1:0', '--data-dir', data], { cwd: root, env })
    expect(events(once.stderr).find((e) => e.event === 'proxops.cycle')).toMatchObject({
      result: 'blocked',
      blockedByReason: { 'sync-window': 1 },
    })
    expect(
      sim.control
        .guests()
        .map((g) => g.vmid)
        .sort(),
    ).toEqual([270, 271])
    expect(sim.control.guests().find((g) => g.vmid === 270)?.config.tags).toMatch(/web/)
    // a manual apply may override the window, on request
    const over = await proxops(['diff', '--override-window', '--data-dir', data], { cwd: root, env })
    expect(over.stdout).toMatch(/delete/)
    expect(over.stdout).not.toMatch(/sync windows/)
    // the window opens (one that opens every minute for an hour): the daemon's next cycle runs the delete
    writeFileSync(
      path.join(root, 'clusters/lab/config.yaml'),
      readFileSync(path.join(root, 'clusters/lab/config.yaml'), 'utf8').replace('2100-01-01 00:00', '*:*'),
    )
    git(root, 'commit', '-qam', 'window open')
    const open = await proxops(['run', '--once', '--listen', '127.0.0.1:0', '--data-dir', data], { cwd: root, env })
    expect(events(open.stderr).find((e) => e.event === 'proxops.cycle')).toMatchObject({
      result: 'converged',
      pruned: 1,
    })
    expect(sim.control.guests().map((g) => g.vmid)).toEqual([270])
  })
})

describe('the daemon remembers across restarts', () => {
  it('its recent cycles and the prune window survive a restart (the data dir)', async () => {
    const root = await makeRepo(sim, {
      manifests: Object.fromEntries([280, 281, 282, 283].map((id) => [`vm/lab/r${id}.yaml`, vmManifest(`r${id}`, id)])),
      proxopsYaml: 'reconcile:\n  prune-budget: unlimited\n  prune-window:\n    max: 1\n    period: 1h\n',
    })
    cleanup.push(root)
    const data = tmp('proxops-data-')
    const env = baseEnv(root)
    const once = () => proxops(['run', '--once', '--listen', '127.0.0.1:0', '--data-dir', data], { cwd: root, env })
    expect((await once()).code).toBe(0)
    writeFileSync(
      path.join(root, 'clusters/lab/resources.yaml'),
      'resources:\n  - ../../vm/lab/r280.yaml\n  - ../../vm/lab/r281.yaml\n',
    )
    git(root, 'commit', '-qam', 'drop two')
    expect((await once()).code).toBe(0)
    expect(sim.control.guests()).toHaveLength(3)
    // a restart does not hand out a fresh window: the second delete waits for the hour
    const third = await once()
    expect(events(third.stderr).find((e) => e.event === 'proxops.cycle')).toMatchObject({ pruned: 0, pruneBudget: 0 })
    expect(sim.control.guests()).toHaveLength(3)
    const memory = JSON.parse(readFileSync(path.join(data, 'daemon-memory.json'), 'utf8')) as {
      history: Record<string, { result: string }[]>
      deletions: Record<string, number[]>
    }
    expect(memory.history.lab).toHaveLength(3)
    expect(memory.deletions.lab).toHaveLength(1)
  })
})

describe('no secret', () => {
  it('reaches any output', () => {
    expect(transcript.flatMap((t) => findCanaries(t))).toEqual([])
  })
})
