/**
 * What a command needs from the outside world, gathered once in main(): streams, environment, paths, the
 * clock and the redactor. Commands take it as an argument, so tests can run them in process.
 */
import type { Writable } from 'node:stream'
import type { Logger } from '../log.js'
import type { Redactor } from '../redact.js'
import { safeOutput } from '../safe-text.js'
import type { PinRecorder } from './endpoint-pins.js'

export interface CliIo {
  stdout: Writable & { isTTY?: boolean }
  stderr: Writable & { isTTY?: boolean }
  stdinIsTty: boolean
  /** asks a yes/no question on the terminal; absent when there is no terminal */
  confirm?: (question: string) => Promise<boolean>
}

export interface CliContext {
  io: CliIo
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  home: string
  redactor: Redactor
  /** set once the config says how to log; a stderr fallback before */
  log: Logger
  now: () => number
  /** aborted on SIGINT/SIGTERM */
  signal: AbortSignal
  /** the endpoint pins waiting for their endpoint's first answer (set once the configuration is read) */
  pins?: PinRecorder
  /**
   * Says at once that a stop was asked for (Ctrl-C, SIGTERM), so nobody presses again thinking it hangs: a line on
   * stderr; apply's live block shows it above itself while it is drawn, the daemon logs it.
   */
  announceStop: (line: string) => void
}

/** Writes product output (plans, reports) to stdout, always through the redactor and the sanitiser (safe-text.ts). */
export function out(ctx: CliContext, text: string): void {
  ctx.io.stdout.write(terminalText(ctx, text))
}

/** Writes a human line to stderr (progress, prompts), through the redactor and the sanitiser. */
export function err(ctx: CliContext, text: string): void {
  ctx.io.stderr.write(terminalText(ctx, text))
}

/** What any text becomes before stdout or stderr: no secret, no terminal control but ProxOps' own colours. */
export function terminalText(ctx: Pick<CliContext, 'redactor'>, text: string): string {
  return safeOutput(ctx.redactor.text(text))
}
