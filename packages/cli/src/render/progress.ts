/**
 * What apply shows while it works. On a terminal: one live block, redrawn in place by log-update (running
 * actions with their elapsed time; done, failed, skipped and queued counts), with retries and long waits
 * printed above it as they happen; the block is cleared before the report, so each action appears once. A stop
 * (Ctrl-C) is said above the block too, written by log-update like every line above it: a line written past it
 * would be erased by the next redraw.
 * Without a terminal: plain one-line events on stderr (start, still running, retry, wait, finish).
 */
import { describeAction, type ProgressEvent } from '@proxops/planner'
import type { ClientNotice } from '@proxops/pve-client'
import { safeLine } from '../safe-text.js'
import type { Paint } from './color.js'
import { resultLine } from './status-text.js'

type RetryEvent = Extract<ProgressEvent, { type: 'retry' }>

function seconds(ms: number): string {
  const s = ms / 1000
  return s < 10 ? `${Number(s.toFixed(1))}s` : `${Math.round(s)}s`
}

function flat(text: string): string {
  return safeLine(text.replace(/\s*[\r\n]+\s*/g, ' '))
}

/** One line for a retry or a long wait of the PVE client. */
export function noticeLine(notice: ClientNotice): string {
  if (notice.type === 'retry') {
    // the client's message starts with the request it is about; it is said once
    const reason = flat(notice.reason).replace(`${notice.method} ${notice.path}: `, '')
    return `  retry   ${notice.method} ${notice.path} (attempt ${notice.attempt} of ${notice.attempts} in ${seconds(notice.delayMs)}): ${reason}`
  }
  return `  waiting ${notice.method} ${notice.path}: no answer for ${seconds(notice.elapsedMs)} (gives up at ${seconds(notice.timeoutMs)})`
}

/** One line for an action's request sent again after PVE's lock timeout. */
export function retryLine(event: RetryEvent): string {
  return `  retry   ${flat(event.action.address)} ${describeAction(event.action).label} (attempt ${event.attempt} of ${event.attempts} in ${seconds(event.delayMs)}): ${flat(event.reason)}`
}

export interface BlockState {
  cluster: string
  total: number
  /** by action id, in start order */
  running: Map<string, { label: string; since: number; note?: string }>
  ok: number
  failed: number
  skipped: number
  /** a stop was asked for (Ctrl-C, SIGTERM): running actions finish, queued ones never start */
  stopping?: boolean
}

/** The live block's text at `now` (pure). */
export function renderBlock(state: BlockState, now: number, p: Paint): string {
  const ended = state.ok + state.failed + state.skipped
  const queued = Math.max(0, state.total - ended - state.running.size)
  const counts = [
    `${state.ok} done`,
    state.failed > 0 ? p.red(`${state.failed} failed`) : `${state.failed} failed`,
    `${state.skipped} skipped`,
    `${state.running.size} running`,
    state.stopping ? `${queued} not started` : `${queued} queued`,
  ].join(', ')
  const head = state.stopping
    ? `Stopping on cluster ${state.cluster} after running actions finish: ${counts}`
    : `Applying to cluster ${state.cluster}: ${counts}`
  const lines = [p.bold(head)]
  for (const r of state.running.values())
    lines.push(`  ${r.label}  ${p.dim(seconds(Math.max(0, now - r.since)))}${r.note ? p.dim(`  (${r.note})`) : ''}`)
  return lines.join('\n')
}

export interface ApplyProgress {
  /** the number of actions, once the plan is made */
  setTotal(total: number): void
  onProgress(event: ProgressEvent): void
  onNotice(notice: ClientNotice): void
  /** a stop was asked for: `line` says so above the block, which from then on counts what will not start */
  stopping(line: string): void
  /** ends the live block; the report follows */
  close(): void
}

export interface ProgressOptions {
  cluster: string
  /** actions in the plan */
  total: number
  /** the terminal's stream; plain lines when it is not a TTY */
  stream: NodeJS.WritableStream & { isTTY?: boolean; rows?: number; columns?: number }
  paint: Paint
  now: () => number
  /** every text shown goes through it (the redactor) */
  clean: (text: string) => string
}

/** The progress view for one cluster's apply: live on a terminal, plain lines otherwise. */
export async function applyProgress(options: ProgressOptions): Promise<ApplyProgress> {
  const { isTTY, rows, columns } = options.stream
  // a pty without a size (rows 0) cannot show a block: plain lines then
  return isTTY && rows !== 0 && columns !== 0 ? liveProgress(options) : plainProgress(options)
}

function plainProgress(o: ProgressOptions): ApplyProgress {
  const say = (line: string): void => void o.stream.write(`${o.clean(line)}\n`)
  return {
    setTotal: () => undefined,
    onProgress: (event) => {
      switch (event.type) {
        case 'action-started':
          return say(`  start   ${flat(event.action.address)} ${describeAction(event.action).label}`)
        case 'task-running':
          return say(
            `  ...     ${flat(event.action.address)} ${describeAction(event.action).label} [${Math.round(event.elapsedMs / 1000)}s elapsed]`,
          )
        case 'retry':
          return say(retryLine(event))
        case 'action-finished':
          return say(resultLine(event.result, o.paint))
        default:
          return
      }
    },
    onNotice: (notice) => say(noticeLine(notice)),
    stopping: (line) => say(line),
    close: () => undefined,
  }
}

async function liveProgress(o: ProgressOptions): Promise<ApplyProgress> {
  const { createLogUpdate } = await import('log-update')
  const update = createLogUpdate(o.stream, { showCursor: false })
  const state: BlockState = { cluster: o.cluster, total: o.total, running: new Map(), ok: 0, failed: 0, skipped: 0 }
  let closed = false
  const draw = (): void => {
    if (!closed && state.total > 0) update(o.clean(renderBlock(state, o.now(), o.paint)))
  }
  // above the block, kept in the scrollback: what happened, not what is happening
  const persist = (line: string): void => {
    if (closed) return void o.stream.write(`${o.clean(line)}\n`)
    update.persist(o.clean(line))
    draw()
  }
  // elapsed times move on between events
  const timer = setInterval(draw, 1000)
  timer.unref()
  return {
    setTotal: (total) => {
      state.total = total
      // drawn once there is something to do: a converged cluster shows no block at all
      if (total > 0) draw()
    },
    onProgress: (event) => {
      switch (event.type) {
        case 'action-started':
          state.running.set(event.action.id, {
            label: `${flat(event.action.address)} ${describeAction(event.action).label}`,
            since: o.now(),
          })
          return draw()
        case 'retry': {
          const running = state.running.get(event.action.id)
          if (running) running.note = `retry ${event.attempt} of ${event.attempts}`
          return persist(retryLine(event))
        }
        case 'action-finished': {
          state.running.delete(event.action.id)
          const status = event.result.status
          if (status === 'ok') state.ok++
          else if (status === 'failed') state.failed++
          else state.skipped++
          return draw()
        }
        default:
          return draw()
      }
    },
    onNotice: (notice) => persist(noticeLine(notice)),
    stopping: (line) => {
      state.stopping = true
      persist(line)
    },
    close: () => {
      if (closed) return
      clearInterval(timer)
      update.clear()
      update.done()
      closed = true
    },
  }
}
