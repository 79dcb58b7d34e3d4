/** The CLI's `main()` in process, for tests: what `bin.ts` runs, without a process (and its start-up CPU) per case. */
import { Writable } from 'node:stream'
import { main } from './cli.js'

export interface MainRun {
  code: number
  stdout: string
  stderr: string
}

/** Runs `main(argv)` in `cwd` with exactly `env`, collecting stdout and stderr (as a terminal when `tty`). */
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
  const code = await main([...argv], { cwd: options.cwd, env: options.env, io })
  return { code, ...out }
}
