/** The CLI's `main()` in process, for tests: what `bin.ts` runs, without a process (and its start-up CPU) per case. */
import { Writable } from 'node:stream'
import { main } from './cli.js'

export interface MainRun {
  code: number
  stdout: string
  stderr: string
}

/**
 * Runs `main(argv)` in `cwd` with exactly `env`, collecting stdout and stderr (as a terminal when `tty`). Throws
 * when the run wrote to the process's own stdout, stderr or console: everything `main()` says must go to the
 * streams it is given, or an embedder (and these tests' secret scans) would miss it.
 */
export async function runMain(
  argv: readonly string[],
  options: { cwd: string; env: Readonly<Record<string, string | undefined>>; tty?: boolean },
): Promise<MainRun> {
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
