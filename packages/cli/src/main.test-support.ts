/** The CLI's `main()` in process, for tests: what `bin.ts` runs, without a process (and its start-up CPU) per case. */
import { mkdirSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { main } from './cli.js'

/**
 * The variables through which a run reads the operator's own files: HOME (endpoint pins, `~` in paths, sops'
 * default keys.txt, git's config), the XDG base directories (sops and git read XDG_CONFIG_HOME) and sops' key
 * sources. A test's run sets its own or none, never the runner's: a developer's age key at
 * ~/.config/sops/age/keys.txt must not change a test's outcome.
 */
export const OPERATOR_ENV = [
  'HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_STATE_HOME',
  'XDG_CACHE_HOME',
  'SOPS_AGE_KEY',
  'SOPS_AGE_KEY_FILE',
  'SOPS_AGE_KEY_CMD',
] as const

/** A home of its own at `home` (created), with its XDG base directories: what a test's runs get as HOME. */
export function ownHome(home: string): Record<'HOME' | `XDG_${'CONFIG' | 'DATA' | 'STATE' | 'CACHE'}_HOME`, string> {
  const dirs = {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
  }
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true })
  return dirs
}

/** Throws when `env` lets a run read the runner's own home, XDG directories or age keys (see OPERATOR_ENV). */
export function assertHermetic(env: Readonly<Record<string, string | undefined>>): void {
  if (env.HOME === undefined)
    throw new Error("a test run needs a HOME of its own (ownHome()): without one the CLI falls back to the runner's")
  const runner: Record<string, string | undefined> = { ...process.env, HOME: os.homedir() }
  const leaked = OPERATOR_ENV.filter((name) => env[name] !== undefined && env[name] === runner[name])
  if (leaked.length > 0)
    throw new Error(`a test run inherits the runner's ${leaked.join(', ')}: give it its own (ownHome())`)
}

export interface MainRun {
  code: number
  stdout: string
  stderr: string
}

/**
 * Runs `main(argv)` in `cwd` with exactly `env` (which must be hermetic: assertHermetic), collecting stdout and stderr (as a terminal when `tty`). Throws
 * when the run wrote to the process's own stdout, stderr or console: everything `main()` says must go to the
 * streams it is given, or an embedder (and these tests' secret scans) would miss it.
 */
export async function runMain(
  argv: readonly string[],
  options: { cwd: string; env: Readonly<Record<string, string | undefined>>; tty?: boolean },
): Promise<MainRun> {
  assertHermetic(options.env)
  const out = { stdout: '', stderr: '' }
  const sink = (to: keyof typeof out): Writable & { isTTY: boolean } =>
    Object.assign(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          out[to] += chunk.toString()
          done()
        },
      }),
      { isTTY: options.tty ?? false },
    )
  const io = { stdout: sink('stdout'), stderr: sink('stderr'), stdinIsTty: false }
  const stray = watchStrayOutput()
  let code: number
  try {
    code = await main([...argv], { cwd: options.cwd, env: options.env, io })
  } finally {
    stray.stop()
  }
  if (stray.text() !== '') throw new Error(`main(${argv.join(' ')}) wrote outside its streams: ${stray.text()}`)
  return { code, ...out }
}

/** Writes to process.stdout, process.stderr and console while runs are in flight (runs may overlap). */
let watching: { count: number; text: string; restore: () => void } | undefined

function watchStrayOutput(): { stop: () => void; text: () => string } {
  if (watching === undefined) {
    const saved = {
      stdout: process.stdout.write,
      stderr: process.stderr.write,
      log: console.log,
      error: console.error,
      warn: console.warn,
      info: console.info,
    }
    const state = { count: 0, text: '', restore: () => {} }
    const record = (...parts: unknown[]): boolean => {
      // a write's callback is called, as the stream would
      for (const p of parts) {
        if (typeof p === 'function') (p as () => void)()
        else if (typeof p === 'string' || p instanceof Uint8Array) state.text += `${Buffer.from(p).toString()} `
      }
      return true
    }
    process.stdout.write = record
    process.stderr.write = record
    console.log = console.error = console.warn = console.info = record
    state.restore = () => {
      Object.assign(process.stdout, { write: saved.stdout })
      Object.assign(process.stderr, { write: saved.stderr })
      Object.assign(console, { log: saved.log, error: saved.error, warn: saved.warn, info: saved.info })
    }
    watching = state
  }
  const state = watching
  state.count += 1
  const seen = state.text.length
  return {
    text: () => state.text.slice(seen),
    stop: () => {
      state.count -= 1
      if (state.count === 0) {
        state.restore()
        watching = undefined
      }
    },
  }
}
