/**
 * The place where the docs' runnable blocks run: a temporary git copy of examples/repository/ whose clusters point at
 * simulators (homelab: pve1..pve3, edge: edge1), a private HOME holding the examples' test-only age key where sops
 * looks for keys by default, and `proxops` / `proxops-sops` on PATH (the built CLIs of this checkout).
 */
import { execFileSync, spawn } from 'node:child_process'
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { DEMO_TOKEN_ID, DEMO_TOKEN_SECRET, startSimulator, type Simulator } from '@proxops/pve-sim'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
export const BINARIES = {
  proxops: path.join(repoRoot, 'packages/cli/dist/bin.js'),
  'proxops-sops': path.join(repoRoot, 'packages/sops/dist/bin.js'),
} as const
const CLUSTERS: Readonly<Record<string, string[]>> = { homelab: ['pve1', 'pve2', 'pve3'], edge: ['edge1'] }

/** Points a cluster config at a simulator: its URL, and its certificate pinned by fingerprint. */
export function pointAt(configText: string, url: string, fingerprint: string): string {
  if (!/^\s*base-url:/m.test(configText)) throw new Error('cluster config has no base-url line')
  return configText.replace(
    /^(\s*)base-url:.*$/m,
    (_, indent: string) => `${indent}base-url: ${url}\n${indent}tls:\n${indent}  fingerprint: "${fingerprint}"`,
  )
}

export interface Sandbox {
  /** the repository root (a git work tree); commands run here */
  repo: string
  env: NodeJS.ProcessEnv
  sims: Simulator[]
  /** every secret the commands could leak: none may appear in their output */
  secrets: string[]
  close(): Promise<void>
}

export interface RunResult {
  code: number | null
  output: string
}

/** Missing builds, as messages; the runnable check needs the built CLIs (pnpm test builds them first). */
export function missingBuilds(): string[] {
  return Object.entries(BINARIES)
    .filter(([, file]) => !existsSync(file))
    .map(
      ([name, file]) =>
        `${name}: ${path.relative(repoRoot, file)} is missing (run pnpm build, or pnpm test which builds first)`,
    )
}

export interface SandboxOptions {
  /** clusters of examples/repository/ to point at simulators (default: all); the others keep their example endpoints */
  clusters?: readonly string[]
}

/** Built packages older than their newest source file (the checks would run old code): a warning, not a failure. */
export function staleBuilds(): string[] {
  const newest = (dir: string): number => {
    let max = 0
    for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        max = Math.max(max, statSync(path.join(entry.parentPath, entry.name)).mtimeMs)
      }
    }
    return max
  }
  // the CLIs run the built libraries too
  return ['schema', 'pve-client', 'planner', 'sops', 'cli']
    .map((name) => path.join(repoRoot, 'packages', name))
    .filter((dir) => existsSync(path.join(dir, 'dist/index.js')))
    .filter((dir) => statSync(path.join(dir, 'dist/index.js')).mtimeMs < newest(path.join(dir, 'src')))
    .map((dir) => `${path.relative(repoRoot, dir)}: dist/ is older than src/; run pnpm build to check the current code`)
}

export async function createSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const tmp = mkdtempSync(path.join(tmpdir(), 'proxops-docs-'))
  const sims: Simulator[] = []
  try {
    const repo = path.join(tmp, 'repo')
    const home = path.join(tmp, 'home')
    const bin = path.join(tmp, 'bin')
    cpSync(path.join(repoRoot, 'examples', 'repository'), repo, {
      recursive: true,
      // the key goes where getting started puts yours (HOME), not into the repository
      filter: (src) => !src.includes(`${path.sep}keys`),
    })
    for (const [cluster, nodes] of Object.entries(CLUSTERS).filter(
      ([name]) => !options.clusters || options.clusters.includes(name),
    )) {
      const sim = await startSimulator({
        nodes,
        taskDurationMs: 20,
        tokens: [{ id: DEMO_TOKEN_ID, secret: DEMO_TOKEN_SECRET }],
      })
      sims.push(sim)
      const file = path.join(repo, 'clusters', cluster, 'config.yaml')
      if (!sim.fingerprint) throw new Error('the simulator runs without TLS; the docs pin a certificate')
      writeFileSync(file, pointAt(readFileSync(file, 'utf8'), sim.url, sim.fingerprint))
    }
    // the daemon's HTTP port: any free one, so parallel test runs never collide
    const processFile = path.join(repo, 'proxops.yaml')
    if (existsSync(processFile))
      writeFileSync(processFile, readFileSync(processFile, 'utf8').replace(/^listen:.*$/m, 'listen: 127.0.0.1:0'))
    gitCommit(repo, 'examples, pointed at the simulator', true)

    // sops' default key location, as getting-started sets it up
    const keyDir = path.join(home, '.config/sops/age')
    mkdirSync(keyDir, { recursive: true })
    const key = readFileSync(path.join(repoRoot, 'examples/repository/keys/test-only.agekey'), 'utf8')
    writeFileSync(path.join(keyDir, 'keys.txt'), key, { mode: 0o600 })

    mkdirSync(bin)
    for (const [name, file] of Object.entries(BINARIES)) {
      const shim = path.join(bin, name)
      writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${file}" "$@"\n`)
      chmodSync(shim, 0o755)
    }
    const env: NodeJS.ProcessEnv = {
      PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`,
      HOME: home,
      LANG: 'C.UTF-8',
      NO_COLOR: '1',
      TMPDIR: tmp,
    }
    const ageSecrets = key.split('\n').filter((l) => l.startsWith('AGE-SECRET-KEY-'))
    return {
      repo,
      env,
      sims,
      secrets: [DEMO_TOKEN_SECRET, ...ageSecrets],
      async close() {
        await Promise.all(sims.map((s) => s.close()))
        rmSync(tmp, { recursive: true, force: true })
      },
    }
  } catch (error) {
    await Promise.all(sims.map((s) => s.close()))
    rmSync(tmp, { recursive: true, force: true })
    throw error
  }
}

/** Commits every change of the work tree (after `git init` when `init`). */
export function gitCommit(repo: string, message: string, init = false): void {
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'user.name=docs', '-c', 'user.email=docs@proxops.invalid', ...args], {
      cwd: repo,
      stdio: 'ignore',
    })
  }
  if (init) git('init', '-q', '-b', 'main')
  git('add', '-A')
  git('commit', '-q', '-m', message)
}

/** Runs one command of a doc block through bash in the sandbox; stdout and stderr are captured together. */
export function runInSandbox(sandbox: Sandbox, command: string, timeoutMs = 120_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], {
      cwd: sandbox.repo,
      env: sandbox.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    const append = (b: Buffer): void => {
      output += b.toString()
    }
    child.stdout.on('data', append)
    child.stderr.on('data', append)
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })
}
