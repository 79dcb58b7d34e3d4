import { classifyMessage } from './classify.js'
import { decodeTaskLog, decodeTaskStatus, decodeWith, obj } from './decode.js'
import { PveError, PveTaskFailedError, PveTaskTimeoutError } from './errors.js'
import { abortedError, sleep } from './retry.js'
import type { CallSpec } from './transport.js'
import type { TaskLogLine, TaskRef, TaskResult, TaskStatus, WaitOptions } from './wire/types.js'
import { isUpid, parseUpid } from './wire/upid.js'

export type GetFn = (spec: Omit<CallSpec, 'method' | 'body'>) => Promise<unknown>

const SUCCESS = /^(OK|WARNINGS: \d+)$/

/** `OK` and `WARNINGS: n` are success. */
export function isTaskSuccess(exitstatus: string): boolean {
  return SUCCESS.test(exitstatus.trim())
}

/** The task must be asked on the node that runs it: the UPID's node when it parses. */
function taskNode(task: TaskRef): string {
  return isUpid(task.upid) ? parseUpid(task.upid).node : task.node
}

export async function taskStatus(get: GetFn, task: TaskRef, signal?: AbortSignal): Promise<TaskStatus> {
  const node = taskNode(task)
  const data = await get({
    path: '/nodes/{node}/tasks/{upid}/status',
    pathParams: { node, upid: task.upid },
    ...(signal ? { signal } : {}),
  })
  return decodeWith('task status', () => decodeTaskStatus(data, node))
}

export interface TaskLogPage {
  lines: TaskLogLine[]
  total: number
}

export async function taskLog(
  get: GetFn,
  task: TaskRef,
  options: { start?: number; limit?: number; signal?: AbortSignal } = {},
): Promise<TaskLogPage> {
  const env = await get({
    path: '/nodes/{node}/tasks/{upid}/log',
    pathParams: { node: taskNode(task), upid: task.upid },
    query: { start: options.start ?? 0, limit: options.limit ?? 50 },
    envelope: true,
    ...(options.signal ? { signal: options.signal } : {}),
  })
  return decodeWith('task log', () => {
    const o = obj(env, 'envelope')
    const lines = decodeTaskLog(o.data)
    const total = typeof o.total === 'number' ? o.total : Number(o.total ?? lines.length)
    return { lines, total: Number.isFinite(total) ? total : lines.length }
  })
}

/** The last `n` log lines (two requests at most). */
export async function taskLogTail(get: GetFn, task: TaskRef, n: number, signal?: AbortSignal): Promise<string[]> {
  const first = await taskLog(get, task, { start: 0, limit: n, ...(signal ? { signal } : {}) })
  if (first.total <= n) return first.lines.map((l) => l.t)
  const last = await taskLog(get, task, { start: first.total - n, limit: n, ...(signal ? { signal } : {}) })
  return last.lines.map((l) => l.t)
}

/**
 * Polls the task until it stops. Resolves `{ok}` for `OK` / `WARNINGS: n`, `{ok: false, log}` otherwise; rejects
 * with PVE_TASK_TIMEOUT after `timeoutMs` (the task may still finish on PVE). A `400 no such task` within
 * `startGraceMs` of the first poll is expected right after dispatch and is waited out.
 */
export async function waitTask(get: GetFn, task: TaskRef, options: WaitOptions = {}): Promise<TaskResult> {
  const {
    timeoutMs = 30 * 60_000,
    pollIntervalMs = 1_000,
    startGraceMs = 10_000,
    logLines = 20,
    unreachableTimeoutMs = 30_000,
    signal,
  } = options
  const started = Date.now()
  let last: TaskStatus | undefined
  /** when the current run of transient poll failures began */
  let unreachableSince: number | undefined
  for (;;) {
    if (signal?.aborted) throw abortedError(signal, `waiting for task ${task.upid}`)
    try {
      last = await taskStatus(get, task, signal)
      unreachableSince = undefined
      if (last.status === 'stopped') {
        const exitstatus = last.exitstatus ?? 'unexpected status'
        if (isTaskSuccess(exitstatus)) return { upid: task.upid, ok: true, exitstatus, log: [] }
        const log = await taskLogTail(get, task, logLines, signal).catch(() => [])
        return { upid: task.upid, ok: false, exitstatus, log }
      }
    } catch (err) {
      const early = Date.now() - started < startGraceMs
      // PVE answers 400 `no such task` until the worker has written its log
      const notYet = early && err instanceof PveError && err.code === 'PVE_NOT_FOUND'
      const transient = err instanceof PveError && err.code === 'PVE_TRANSIENT'
      if (!notYet && !transient) throw err
      // transient errors already went through the read retries; keep polling, but not for a node that stays away
      // (an offline node would otherwise hold the cycle until the task timeout)
      if (transient) {
        unreachableSince ??= Date.now()
        if (Date.now() - unreachableSince >= unreachableTimeoutMs) throw err
      }
    }
    const left = timeoutMs - (Date.now() - started)
    if (left <= 0) {
      const err = new PveTaskTimeoutError(
        'PVE_TASK_TIMEOUT',
        `task ${task.upid} still ${last?.status ?? 'unknown'} after ${timeoutMs} ms (it may still finish on PVE)`,
      )
      err.upid = task.upid
      err.lastStatus = last?.status
      throw err
    }
    await sleep(Math.min(pollIntervalMs, left), signal)
  }
}

/** Turns a failed TaskResult into a PVE_TASK_FAILED error (with `reason` from the exit status); passes OK through. */
export function assertTaskOk(result: TaskResult, what = 'task'): TaskResult {
  if (result.ok) return result
  const tail = result.log.slice(-5).join(' | ')
  const err = new PveTaskFailedError(
    'PVE_TASK_FAILED',
    `${what} ${result.upid} failed: ${result.exitstatus}${tail === '' ? '' : ` (log: ${tail})`}`,
    { pveMessage: result.exitstatus },
  )
  err.upid = result.upid
  err.exitstatus = result.exitstatus
  err.log = result.log
  err.reason = classifyMessage(result.exitstatus) ?? 'PVE_FAILED'
  throw err
}
