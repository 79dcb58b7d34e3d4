/**
 * apply on a real terminal: the built CLI under a pty (util-linux `script`) against the simulator. One lifecycle:
 * the live block redraws in place with running actions, their elapsed time and the counts; a PVE 5xx is shown as
 * a retry while it happens; the block is gone before the report, which names each action once. Ctrl-C, typed on
 * the pty, is said above the block, which then counts what will not start.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { spawn, spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import {
  BIN,
  baseEnv,
  findCanaries,
  git,
  proxops,
  transcript,
  vmManifest,
  useLab,
  commitManifests,
  vmManifests,
} from './harness.js'

const haveScript = spawnSync('script', ['--version']).status === 0

const lab = useLab({}, { testTimeout: 120_000 })
let repo: string
beforeAll(async () => {
  repo = await lab.repo()
})

/**
 * Runs the CLI on a pty; resolves to what the terminal received (stdout and stderr, as a person sees them).
 * `keys(screen)` is asked as output arrives (also after it typed, so it can release a held task); the first text it
 * returns is typed on the terminal, once (a `\x03` is Ctrl-C: the pty's line discipline turns it into SIGINT for the
 * CLI, as a keyboard does).
 */
function onTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  keys?: (screen: string) => string | undefined,
): Promise<{ code: number | null; screen: string }> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  // a pty made without a terminal around it has no size: give it one, as a terminal window would
  const command = `stty rows 40 cols 120; exec ${quoted}`
  // -q no banner, -e the child's exit code, -f flush as it comes, -c the command; the typescript file is unused
  const child = spawn('script', ['-qefc', command, '/dev/null'], { cwd: repo, env, stdio: ['pipe', 'pipe', 'pipe'] })
  let screen = ''
  let typed = false
  const seen = (c: Buffer): void => {
    screen += c.toString()
    const text = keys?.(screen)
    if (text !== undefined && !typed) {
      typed = true
      child.stdin.write(text)
    }
  }
  child.stdout.on('data', seen)
  child.stderr.on('data', seen)
  return new Promise((resolve) => {
    child.on('close', (code) => {
      transcript.push(screen)
      resolve({ code, screen })
    })
  })
}

describe.skipIf(!haveScript)('apply on a terminal (pty)', () => {
  it('one live block redrawn in place, retries as they happen, each action once in the report', async () => {
    commitManifests(repo, vmManifests({ t1: 150, t2: 151, t3: 152 }, 'pve1'), 'three on pve1')
    lab.sim.control.setTaskDuration(2_200)
    // the first task status poll answers 503: the client retries it, and says so while it does
    lab.sim.control.failNext({ method: 'GET', path: /\/tasks\/.*\/status$/, status: 503, count: 1 })
    let r: { code: number | null; screen: string }
    try {
      r = await onTerminal(['apply', '--yes'], { ...baseEnv(repo), TERM: 'xterm' })
    } finally {
      lab.sim.control.setTaskDuration(50)
      lab.sim.control.clearFaults()
    }
    const screen = r.screen
    expect(r.code, screen).toBe(0)
    // the block: a headline with the counts, redrawn (log-update erases the previous frame's lines)
    const frames = screen.split('Applying to cluster lab:').length - 1
    expect(frames).toBeGreaterThan(2)
    expect(screen).toContain('\u001b[2K') // erase line
    expect(screen).toMatch(/Applying to cluster lab: 0 done, 0 failed, 0 skipped, 2 running, \d+ queued/)
    expect(screen).toMatch(/Applying to cluster lab: [1-4] done/)
    // running actions with their elapsed time, which moves on between frames
    expect(screen).toMatch(/VM\/pve1\/150\(t1\) create {2}[0-9.]+s/)
    expect(screen).toMatch(/VM\/pve1\/15\d\(t\d\) create {2}[12](\.\d)?s/)
    // the retry was shown (above the block), not swallowed
    expect(screen).toMatch(
      /retry {3}GET \/nodes\/\{node\}\/tasks\/\{upid\}\/status \(attempt 2 of 3 in [0-9.]+s\): .*503/,
    )
    // no plain per-event lines on a terminal; the report names each action once
    expect(screen).not.toMatch(/ {2}start {3}VM\//)
    for (const id of [150, 151, 152]) {
      const lines = screen.split(/\r?\n/).filter((l) => l.includes(`VM/pve1/${id}(`) && /\bok\b/.test(l))
      expect(lines, screen).toHaveLength(1)
    }
    expect(screen).toMatch(/Apply complete for cluster lab: \d ok, 0 failed, 0 skipped\./)
    // the block was cleared before the report: the last frame is followed by an erase, then the report
    const last = screen.lastIndexOf('Applying to cluster lab:')
    expect(screen.indexOf('Apply complete', last)).toBeGreaterThan(last)
    expect(screen.slice(last, screen.indexOf('Apply complete', last))).toContain('\u001b[2K')
    expect(findCanaries(screen)).toEqual([])
  })
})

describe('without a terminal', () => {
  it('plain one-line events; retries are logged as they happen', async () => {
    // a 503 on the first read of the guest list: diff retries it and says so on stderr, then plans
    lab.sim.control.failNext({ method: 'GET', path: '/cluster/resources', status: 503, count: 1 })
    const diff = await proxops(['diff'], { cwd: repo })
    lab.sim.control.clearFaults()
    expect(diff.code).toBe(0)
    expect(diff.stderr).toMatch(
      /^warn: retry GET \/cluster\/resources \(attempt 2 of 3 in [0-9.]+s\): 503 Service Unavailable cluster=lab event=pve\.request\.retry$/m,
    )
    writeFileSync(path.join(repo, 'vm/lab/t1.yaml'), vmManifest('t1', 150, { node: 'pve1', memory: '768MiB' }))
    git(repo, 'commit', '-qam', 'more memory for t1')
    const apply = await proxops(['apply', '--yes'], { cwd: repo })
    expect(apply.code, apply.stderr).toBe(0)
    expect(apply.stderr).toMatch(/^ {2}start {3}VM\/pve1\/150\(t1\) update$/m)
    expect(apply.stderr).toMatch(/^ {2}ok {6}VM\/pve1\/150\(t1\) update \([0-9.]+s\)$/m)
    expect(apply.stderr).not.toContain('Applying to cluster')
    expect(apply.stderr).not.toContain('\u001b[')
    expect(apply.stdout).toMatch(/Apply complete for cluster lab: 1 ok, 0 failed, 0 skipped\./)
  })
})

describe.skipIf(!haveScript)('Ctrl-C on a terminal (pty)', () => {
  it('says it stops above the live block, which then counts what will not start; running actions finish', async () => {
    commitManifests(repo, vmManifests({ s1: 160, s2: 161, s3: 162, s4: 163 }, 'pve2'), 'four on pve2')
    // the creates are held until the CLI has said it stops: Ctrl-C always meets them running
    lab.sim.control.setTaskBehaviour('qmcreate', { hold: true })
    let r: { code: number | null; screen: string }
    try {
      // two tasks per node: two creates run, two are queued when Ctrl-C is pressed
      r = await onTerminal(['apply', '--yes'], { ...baseEnv(repo), TERM: 'xterm' }, (screen) => {
        if (/Stopping on cluster lab after running actions finish: .* 2 running, 2 not started/.test(screen))
          lab.sim.control.setTaskBehaviour('qmcreate', null)
        return /Applying to cluster lab: 0 done, 0 failed, 0 skipped, 2 running, 2 queued/.test(screen)
          ? '\x03'
          : undefined
      })
    } finally {
      lab.sim.control.setTaskBehaviour('qmcreate', null)
    }
    const screen = r.screen
    const stop = screen.indexOf('proxops: SIGINT: stopping after running actions finish; Ctrl-C again to abort')
    expect(stop, screen).toBeGreaterThan(0)
    // the stop line is written by the live block's own writer (above it), then the block counts what will not start
    expect(screen.slice(stop)).toMatch(
      /Stopping on cluster lab after running actions finish: 0 done, 0 failed, 0 skipped, 2 running, 2 not started/,
    )
    // the running creates finish, the queued ones never start
    expect(screen).toMatch(/ok {6}VM\/pve2\/160\(s1\) create/)
    expect(screen).toMatch(/ok {6}VM\/pve2\/161\(s2\) create/)
    expect(screen).toMatch(/skipped VM\/pve2\/16[23]\(s[34]\) create: cancelled before it started/)
    expect(r.code).toBe(1)
    expect((await proxops(['status'], { cwd: repo })).stdout).toMatch(/s[1-4]/)
    expect(findCanaries(screen)).toEqual([])
  })
})

describe.skipIf(!haveScript)('the daemon on a terminal (pty)', () => {
  it('logs timed human lines on a terminal and NDJSON when asked for', async () => {
    const text = await onTerminal(['run', '--once', '--listen', '127.0.0.1:0'], { ...baseEnv(repo), TERM: 'xterm' })
    expect(text.code, text.screen).toBe(0)
    expect(text.screen).toMatch(/^\d\d:\d\d:\d\d info: daemon started .*listen=127\.0\.0\.1:\d+/m)
    expect(text.screen).toMatch(/^\d\d:\d\d:\d\d info: cycle finished event=proxops\.cycle cluster=lab /m)
    const json = await onTerminal(['run', '--once', '--listen', '127.0.0.1:0', '--log-format', 'json'], {
      ...baseEnv(repo),
      TERM: 'xterm',
    })
    const lines = json.screen.split(/\r?\n/).filter((l) => l.trim() !== '')
    expect(lines.length).toBeGreaterThan(1)
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
  })
})
