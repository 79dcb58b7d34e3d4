import type { Rng } from './rng.js'

/**
 * Worker tasks: UPIDs, running -> stopped after a configurable duration, exit
 * statuses and logs. Work is applied when the task finishes; the model settles due tasks lazily
 * whenever it is asked anything, so a fake clock makes tests deterministic.
 */

export interface TaskBehaviour {
  /** fail every task of this type with this message (`TASK ERROR: <message>`) */
  fail?: string
  /** override the duration of tasks of this type */
  durationMs?: number
  /** add this many `WARN:` lines, so the exit status becomes `WARNINGS: n` */
  warnings?: number
  /**
   * keep tasks of this type running (those already running too) until the behaviour is lifted: a test that
   * watches a lock or a running task releases it when it is done looking, instead of racing the clock
   */
  hold?: boolean
}

export interface TaskContext {
  log(line: string): void
  /** log_warn: counts towards `WARNINGS: n` */
  warn(line: string): void
}

export interface TaskWork {
  /** how long this particular task runs (e.g. a shutdown waiting out its timeout); per-type overrides win */
  durationMs?: number
  /** applied at the end of the task; throwing makes it fail with that message */
  run(ctx: TaskContext): void
  /** undo dispatch-time state (e.g. the `lock: create` config) when the task fails */
  onError?(message: string): void
}

export interface Task {
  upid: string
  node: string
  pid: number
  pstart: number
  starttime: number
  type: string
  id: string
  user: string
  tokenid?: string
  startMs: number
  endMs: number
  status: 'running' | 'stopped'
  exitstatus?: string
  endtime?: number
  log: string[]
  work: TaskWork
  failWith?: string
  extraWarnings: number
}

export class TaskError extends Error {}

function hex(n: number, width: number): string {
  return n.toString(16).toUpperCase().padStart(width, '0')
}

export const UPID_RE =
  /^UPID:([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?):([0-9A-Fa-f]{8}):([0-9A-Fa-f]{8,9}):([0-9A-Fa-f]{8}):([^:\s/]+):([^:\s/]*):([^:\s/]+):$/

export class TaskManager {
  private tasks = new Map<string, Task>()
  private order: Task[] = []
  private nextPid: number
  private behaviours = new Map<string, TaskBehaviour>()
  /** while a fresh task's log does not exist yet, status/log answer 400 `no such task` */
  noSuchTaskWindowMs = 0

  constructor(
    rng: Rng,
    private now: () => number,
    public defaultDurationMs: number,
  ) {
    this.nextPid = 100000 + rng.int(800000)
  }

  setBehaviour(type: string, b: TaskBehaviour | undefined): void {
    if (b) this.behaviours.set(type, b)
    else this.behaviours.delete(type)
  }

  dispatch(node: string, type: string, id: string, actor: string, work: TaskWork, pstart: number): string {
    const now = this.now()
    const pid = this.nextPid++
    const starttime = Math.floor(now / 1000)
    const upid = `UPID:${node}:${hex(pid, 8)}:${hex(pstart, 8)}:${hex(starttime, 8)}:${type}:${id}:${actor}:`
    const [user, tokenid] = actor.split('!') as [string, string | undefined]
    const b = this.behaviours.get(type)
    const task: Task = {
      upid,
      node,
      pid,
      pstart,
      starttime,
      type,
      id,
      user,
      startMs: now,
      endMs: now + (b?.durationMs ?? work.durationMs ?? this.defaultDurationMs),
      status: 'running',
      log: [],
      work,
      extraWarnings: b?.warnings ?? 0,
    }
    if (tokenid !== undefined) task.tokenid = tokenid
    if (b?.fail !== undefined) task.failWith = b.fail
    // finish what was due before this task exists: its own work never runs inside dispatch(), where the
    // caller has not yet got its UPID (a zero-length task ends at the next settle, as PVE's fork returns first)
    this.settle()
    this.tasks.set(upid, task)
    this.order.push(task)
    return upid
  }

  private settling = false

  /**
   * Finish every task whose time has come, in the order they end. Not re-entrant: work that runs
   * while settling (and asks about other tasks) sees the state as of its own end time.
   */
  settle(): void {
    if (this.settling) return
    this.settling = true
    try {
      const now = this.now()
      const due = this.order
        .filter((t) => t.status === 'running' && t.endMs <= now && this.behaviours.get(t.type)?.hold !== true)
        .sort((a, b) => a.endMs - b.endMs)
      for (const t of due) if (t.status === 'running') this.finish(t)
    } finally {
      this.settling = false
    }
  }

  /** a task as it stands, without settling (for checks made by running work) */
  peek(upid: string): Task | undefined {
    return this.tasks.get(upid)
  }

  /** finish a task right away (background_delay: the caller waited for it), unless a test holds its type */
  finishNow(t: Task): void {
    if (t.status === 'running' && this.behaviours.get(t.type)?.hold !== true) this.finish(t)
  }

  private finish(t: Task): void {
    let warnings = 0
    const ctx: TaskContext = {
      log: (line) => t.log.push(line),
      warn: (line) => {
        warnings++
        t.log.push(`WARN: ${line}`)
      },
    }
    let error: string | undefined
    try {
      if (t.failWith !== undefined) throw new TaskError(t.failWith)
      t.work.run(ctx)
      for (let i = 0; i < t.extraWarnings; i++) ctx.warn('simulated warning')
    } catch (e) {
      error = (e instanceof Error ? e.message : String(e)).replace(/\n+$/, '')
      t.work.onError?.(error)
    }
    t.status = 'stopped'
    t.endtime = Math.floor(this.now() / 1000)
    if (error !== undefined) {
      t.log.push(`TASK ERROR: ${error}`)
      t.exitstatus = error
    } else if (warnings > 0) {
      t.log.push(`TASK WARNINGS: ${warnings}`)
      t.exitstatus = `WARNINGS: ${warnings}`
    } else {
      t.log.push('TASK OK')
      t.exitstatus = 'OK'
    }
  }

  get(upid: string): Task | undefined {
    this.settle()
    return this.tasks.get(upid)
  }

  /** true while the task's log file would not exist yet */
  inNoSuchWindow(t: Task): boolean {
    return this.noSuchTaskWindowMs > 0 && this.now() - t.startMs < this.noSuchTaskWindowMs
  }

  /** DELETE /tasks/{upid}: the worker is killed; PVE records `unexpected status` */
  stop(t: Task): void {
    if (t.status !== 'running') return
    t.status = 'stopped'
    t.endtime = Math.floor(this.now() / 1000)
    t.work.onError?.('interrupted by signal')
    t.log.push('TASK ERROR: interrupted by signal')
    t.exitstatus = 'interrupted by signal'
  }

  all(): Task[] {
    this.settle()
    return [...this.order]
  }

  running(): Task[] {
    return this.all().filter((t) => t.status === 'running')
  }
}

/**
 * pve-common `PVE::Tools::dump_logfile` over a task's lines: lines numbered from 1, those before `start` skipped,
 * `limit` lines after them (`limit` 0 reads to the end), and the count of every line as the total. An empty log
 * reads as one `no content` line (and a total of 1) wherever `start` points: the ExtJS store needs a row.
 */
export function dumpLogfile(
  lines: readonly string[],
  start: number,
  limit: number,
): { total: number; page: { n: number; t: string }[] } {
  if (lines.length === 0) return { total: 1, page: [{ n: 1, t: 'no content' }] }
  const end = limit === 0 ? lines.length : start + limit
  return { total: lines.length, page: lines.slice(start, end).map((t, i) => ({ n: start + i + 1, t })) }
}

/** upid_decode's fields, with which every task listing and status begins an entry */
export function upidFields(t: Task): Record<string, unknown> {
  return { upid: t.upid, node: t.node, pid: t.pid, pstart: t.pstart, starttime: t.starttime, type: t.type, id: t.id }
}

export function taskStatus(t: Task): Record<string, unknown> {
  const out: Record<string, unknown> = {
    ...upidFields(t),
    user: t.user,
    status: t.status,
  }
  if (t.tokenid !== undefined) out.tokenid = t.tokenid
  if (t.status === 'stopped') out.exitstatus = t.exitstatus
  return out
}
