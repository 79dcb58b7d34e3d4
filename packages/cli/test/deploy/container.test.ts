/**
 * deploy/container/Containerfile, checked as written. No container runtime and no image registry run here or in
 * CI, so the image itself is not built; instead:
 *
 * - a Containerfile linter (dockerfile-utils, the VS Code Docker extension's) finds no problem, and its structure is
 *   read: a build stage and a slim Node.js runtime stage of a supported major, the runtime stage takes only the
 *   tarballs and the install script from the build, a numeric non-root user, the mounts its header documents;
 * - its steps run as written: the build stage's commands are the README's tarball route, `pnpm pack-tarballs`
 *   packs (the suite runs after `pnpm build`), the runtime stage's install line runs deploy/install-tarballs.sh
 *   with its paths moved into a scratch directory, and the `proxops` it links prints its version;
 * - the HEALTHCHECK command, as written (its address moved to the test daemon's port), against `proxops run` from
 *   that install, with a bearer token, with basic auth, and with both: healthy with the daemon's credentials,
 *   unhealthy with wrong ones.
 *
 * Cost (2 cores): packing about 1.5 s, the npm install about 15 s (3.5 s of CPU; the registry for third-party
 * packages, reached with the machine's CA and proxy settings, which turbo.json passes through to the tests), the
 * daemons a few seconds.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { validate } from 'dockerfile-utils'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Simulator } from '@proxops/pve-sim'
import { repoRoot } from '../support/exported-metrics.js'
import { baseEnv, freePort, httpGet, makeRepo, startLab, waitFor } from '../e2e/harness.js'

vi.setConfig({ testTimeout: 120_000, hookTimeout: 240_000 })

const ROOT = fileURLToPath(repoRoot)

/**
 * Runs a command in a process group of its own and ends the whole group when it outlasts the hook: a stalled
 * registry fetch of npm's must fail this suite, not hold the test run (a synchronous exec would also stop the
 * hook's own timeout from firing).
 */
function bounded(command: string, args: string[], ms = 120_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true })
    let stderr = ''
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL')
      reject(new Error(`${command} ${args.join(' ')}: no end after ${ms / 1000} s (stopped)`))
    }, ms)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else reject(new Error(`${command} ${args.join(' ')}: exit ${code ?? signal}\n${stderr}`))
    })
  })
}
const text = readFileSync(new URL('deploy/container/Containerfile', repoRoot), 'utf8')
/** instructions with their continuation lines joined, comments left out, numbered by stage (0 = the first FROM) */
const instructions = (() => {
  let stage = -1
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/)
      const upper = op!.toUpperCase()
      if (upper === 'FROM') stage++
      return { op: upper, args: rest.join(' '), stage }
    })
})()
const runtime = Math.max(...instructions.map((i) => i.stage))
const all = (op: string, stage = runtime) =>
  instructions.filter((i) => i.op === op && i.stage === stage).map((i) => i.args)
const one = (op: string, stage = runtime) => {
  const found = all(op, stage)
  expect(found, op).toHaveLength(1)
  return found[0]!
}
const env = Object.fromEntries(
  [
    ...all('ENV')
      .join(' ')
      .matchAll(/(\w+)=(\S+)/g),
  ].map((m) => [m[1]!, m[2]!]),
)
const cmd = JSON.parse(one('CMD')) as string[]
const healthcheck = JSON.parse(/\bCMD\s+(\[.*\])$/.exec(one('HEALTHCHECK'))![1]!) as string[]
const engines = (
  JSON.parse(readFileSync(new URL('packages/cli/package.json', repoRoot), 'utf8')) as { engines: { node: string } }
).engines.node
const header = text
  .split('\n')
  .filter((l) => /^# {3}/.test(l))
  .join('\n')

describe('the Containerfile, read', () => {
  it('has no problem a Containerfile linter sees, and the linter sees a broken one', () => {
    expect(validate(text).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([])
    expect(validate(text.replace('HEALTHCHECK --interval', 'HEALTHCHECK --intervl')).map((d) => d.message)).toEqual([
      'Unknown flag: intervl',
    ])
    expect(validate(`${text}USER\n`).map((d) => d.message)).toEqual(['Instruction has no arguments'])
  })

  it('builds in a stage of its own, from a slim Node.js image of a major the CLI supports', () => {
    expect(runtime).toBe(1)
    expect(one('FROM', 0)).toMatch(/^\S+ AS build$/)
    for (const from of [one('FROM', 0).split(' ')[0]!, one('FROM')]) {
      const m = /^(?:docker\.io\/library\/)?node:(\d+)-bookworm-slim$/.exec(from)
      expect(m, from).not.toBeNull()
      expect(Number(m![1])).toBeGreaterThanOrEqual(Number(/>=\s*(\d+)/.exec(engines)![1]))
    }
    // the build context is the repository, less what the build makes again
    // podman's default OCI format drops HEALTHCHECK (with a warning): the documented build keeps it
    expect(header).toContain('podman build --format docker -f deploy/container/Containerfile -t proxops:local .')
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n')
    for (const p of ['.git', '**/node_modules', '**/dist']) expect(ignored).toContain(p)
  })

  it("the build stage runs the README's tarball route; the runtime stage takes its tarballs and nothing else", () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8')
    const route = /^pnpm install && pnpm build && pnpm pack-tarballs\b/m
    expect(readme).toMatch(route)
    const packageManager = (
      JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { packageManager: string }
    ).packageManager
    expect(all('RUN', 0)).toEqual([
      `npm install -g ${packageManager} && pnpm install --frozen-lockfile && pnpm build && pnpm pack-tarballs /tarballs`,
    ])
    expect(all('COPY')).toEqual([
      '--from=build /tarballs /tmp/tarballs',
      'deploy/install-tarballs.sh /usr/local/sbin/proxops-install-tarballs',
    ])
    expect(all('RUN')).toContain(
      'proxops-install-tarballs /tmp/tarballs /opt/proxops /usr/local/bin && rm -rf /tmp/tarballs && npm cache clean --force',
    )
    expect(all('ADD', 0).concat(all('ADD'))).toEqual([])
    expect(JSON.parse(one('ENTRYPOINT'))).toEqual(['proxops'])
  })

  it('runs as a numeric non-root user, set after the last build step and before the entry point', () => {
    const user = one('USER')
    expect(user).toMatch(/^[1-9]\d*:[1-9]\d*$/)
    const at = (op: string) => instructions.map((i) => i.op).lastIndexOf(op)
    expect(at('USER')).toBeGreaterThan(at('RUN'))
    expect(at('USER')).toBeLessThan(at('ENTRYPOINT'))
    expect(text).toContain(`--uid ${user.split(':')[0]}`)
  })

  it('mounts what it uses: the repository and the age key read-only, the data directory as a volume', () => {
    const repo = one('WORKDIR')
    const data = cmd[cmd.indexOf('--data-dir') + 1]!
    expect(cmd.slice(0, 1)).toEqual(['run'])
    expect(cmd[cmd.indexOf('--git-path') + 1]).toBe(repo)
    expect(cmd).not.toContain('--git-url')
    expect(header).toContain(`:${repo}:ro`)
    expect(header).toContain(`:${env.SOPS_AGE_KEY_FILE}:ro`)
    expect(env.SOPS_AGE_KEY_FILE).toMatch(/^\/run\/secrets\//)
    expect(JSON.parse(one('VOLUME'))).toEqual([data])
    expect(header).toContain(`:${data} `)
    expect(env.HOME).toBe(data)
    // git refuses a repository another user owns unless told it is safe
    expect(text).toContain(`safe.directory ${repo}`)
  })

  it('publishes the HTTP port on the host loopback only in its example; the health check asks that port', () => {
    const listen = cmd[cmd.indexOf('--listen') + 1]!
    expect(one('EXPOSE')).toBe(listen.split(':')[1])
    expect(header).toContain(`-p 127.0.0.1:${one('EXPOSE')}:${one('EXPOSE')}`)
    expect(healthcheck.join(' ').split(`http://127.0.0.1:${one('EXPOSE')}/healthz`)).toHaveLength(2)
  })
})

describe('the Containerfile, its steps run as written', () => {
  let scratch: string
  let bin: string
  let sim: Simulator
  let repo: string
  const daemons: ChildProcess[] = []

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'proxops-container-'))
    // the build stage's last step (the test pipeline built the packages): pnpm pack-tarballs DIR
    execFileSync('pnpm', ['--silent', 'pack-tarballs', path.join(scratch, 'tarballs')], { cwd: ROOT, stdio: 'ignore' })
    // the runtime stage's install line, its three paths moved into the scratch directory
    const line = all('RUN').find((r) => r.startsWith('proxops-install-tarballs '))!
    const [, from, prefix, bindir] = line.split(' && ')[0]!.split(' ')
    expect([from, prefix, bindir]).toEqual(['/tmp/tarballs', '/opt/proxops', '/usr/local/bin'])
    const moved = (p: string) => path.join(scratch, p)
    await bounded('sh', [
      path.join(ROOT, 'deploy/install-tarballs.sh'),
      moved('tarballs'),
      moved(prefix!),
      moved(bindir!),
    ])
    bin = path.join(moved(bindir!), 'proxops')
    sim = await startLab()
    repo = await makeRepo(sim)
  })
  afterAll(async () => {
    for (const d of daemons) d.kill('SIGKILL')
    await sim?.close()
    rmSync(scratch, { recursive: true, force: true })
    if (repo) rmSync(repo, { recursive: true, force: true })
  })

  it('installs a proxops that runs, where the entry point and the systemd unit find it', () => {
    const version = (
      JSON.parse(readFileSync(path.join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string }
    ).version
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' })).toBe(`proxops version ${version}\n`)
    const sops = path.join(path.dirname(bin), 'proxops-sops')
    expect(spawnSync(sops, ['--version'], { encoding: 'utf8' }).stdout).toBe(`proxops-sops version ${version}\n`)
  })

  /** `proxops run` from the install with these HTTP credentials; resolves to its port once it answers */
  async function daemon(credentials: Record<string, string>): Promise<number> {
    const port = await freePort()
    const data = mkdtempSync(path.join(scratch, 'data-'))
    const child = spawn(bin, ['run', '--listen', `127.0.0.1:${port}`, '--data-dir', data, '--git-poll-sec', '3600'], {
      cwd: repo,
      env: baseEnv(repo, credentials),
      stdio: 'ignore',
    })
    daemons.push(child)
    await waitFor(() => httpGet(port, '/healthz'), 30_000)
    return port
  }

  /** the HEALTHCHECK command as written, pointed at `port`, with this environment: its exit code */
  const check = (port: number, credentials: Record<string, string>): number | null => {
    const [program, ...args] = healthcheck.map((a) => a.replace('http://127.0.0.1:9494/', `http://127.0.0.1:${port}/`))
    return spawnSync(program!, args, { env: { PATH: process.env.PATH, ...credentials }, timeout: 5_000 }).status
  }

  it('the HEALTHCHECK passes with the bearer token the daemon has, and fails without it', async () => {
    const port = await daemon({ PROXOPS_HTTP_TOKEN: 'health-bearer' })
    expect(check(port, { PROXOPS_HTTP_TOKEN: 'health-bearer' })).toBe(0)
    expect(check(port, { PROXOPS_HTTP_TOKEN: 'another' })).toBe(1)
    expect(check(port, {})).toBe(1)
  })

  it('the HEALTHCHECK passes with the basic auth the daemon has (the container of issue 45), and fails without it', async () => {
    const port = await daemon({ PROXOPS_HTTP_BASIC_AUTH: 'ops:health-basic' })
    expect(check(port, { PROXOPS_HTTP_BASIC_AUTH: 'ops:health-basic' })).toBe(0)
    expect(check(port, { PROXOPS_HTTP_BASIC_AUTH: 'ops:wrong' })).toBe(1)
    expect(check(port, {})).toBe(1)
  })

  it('with both set, as the env file gives both to the daemon and the check, it passes', async () => {
    const both = { PROXOPS_HTTP_TOKEN: 'health-bearer', PROXOPS_HTTP_BASIC_AUTH: 'ops:health-basic' }
    const port = await daemon(both)
    expect(check(port, both)).toBe(0)
    // and with none, as on the loopback-only port of the header's example
    expect(check(await daemon({}), {})).toBe(0)
  })
})
