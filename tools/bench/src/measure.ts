/** Small measuring helpers: run the real CLI as a subprocess, take medians, read peak RSS. */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const cliBin = fileURLToPath(new URL('../../../packages/cli/dist/bin.js', import.meta.url))

export interface CliRun {
  code: number
  stdout: string
  stderr: string
  wallMs: number
  /** peak resident set size of the CLI process, in MB */
  maxRssMb: number
  /** CPU time (user + system, every thread) of the CLI process, in ms; NaN when it died before its exit hook */
  cpuMs: number
}

// Loaded into the CLI process with --import: writes its peak RSS (KiB) and its CPU time (µs) to a file as it exits.
const RSS_PROBE =
  'data:text/javascript,import{writeFileSync}from"node:fs";process.on("exit",()=>{if(process.env.BENCH_RSS_FILE){const u=process.resourceUsage();writeFileSync(process.env.BENCH_RSS_FILE,`${u.maxRSS} ${u.userCPUTime+u.systemCPUTime}`)}})'

let home: string | undefined

/** The runs' HOME: one for the whole bench (endpoint pins persist between runs, as on a real machine), never the runner's. */
function benchHome(): string {
  if (home === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'proxops-bench-home-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    home = dir
  }
  return home
}

/** The runner's environment without what leads to its own files (HOME, the XDG directories, sops' key sources). */
function runnerEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name !== 'HOME' && !/^(XDG_\w+_HOME|SOPS_AGE_\w+)$/.test(name)),
  )
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CliRun> {
  return runNode([cliBin, ...args], env, cwd)
}

/** `node <args>` with the probe: the CLI, or `-e 0` for the runtime's own start-up */
export async function runNode(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CliRun> {
  const dir = mkdtempSync(join(tmpdir(), 'proxops-bench-rss-'))
  const rssFile = join(dir, 'rss')
  const start = performance.now()
  const child = spawn(process.execPath, ['--import', RSS_PROBE, ...args], {
    cwd,
    env: { ...runnerEnv(), HOME: benchHome(), ...env, BENCH_RSS_FILE: rssFile, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()))
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)))
  const wallMs = performance.now() - start
  let maxRssMb = 0
  let cpuMs = NaN
  try {
    const [rss, cpu] = readFileSync(rssFile, 'utf8').split(' ').map(Number)
    maxRssMb = (rss ?? 0) / 1024
    cpuMs = (cpu ?? NaN) / 1000
  } catch {
    // the process died before its exit hook: no figure
  }
  rmSync(dir, { recursive: true, force: true })
  return { code, stdout, stderr, wallMs, maxRssMb, cpuMs }
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2
}
