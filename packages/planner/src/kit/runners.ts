/**
 * What every kind's requests share when they run (execute/run-action.ts dispatches them): the executor's context,
 * the task records, and `call`, which sends one writer call, waits for its task and retries PVE's lock timeouts.
 * A request that PVE refuses throws an ActionFailure with PVE's own text.
 */
import { isLockTimeoutMessage } from '@proxops/pve-client/wire'
import type { GuestType, TaskRef, TaskResult } from '@proxops/pve-client/wire'
import type { PveRequest } from '../plan-types.js'
import type { LiveReader, PveWriter, StorageLedger } from '../ports.js'
import type { SecretResolver } from './params.js'

export interface ActionContext {
  writer: PveWriter
  reader: LiveReader
  secrets: SecretResolver | undefined
  /** where a storage write records ownership and the fingerprints of the credentials it sent */
  ledger?: StorageLedger
  taskTimeoutMs: number
  downloadTimeoutMs: number
  lockRetries: number
  lockRetryDelayMs: number
  confirmAttempts: number
  confirmDelayMs: number
  progressIntervalMs: number
  taskPollIntervalMs: number
  sleep: (ms: number) => Promise<void>
  now: () => number
  onTaskStarted?: (task: TaskRef) => void
  onTaskRunning?: (task: TaskRef, elapsedMs: number) => void
  /** a request is about to be sent again after PVE's lock timeout (said before the wait, not after) */
  onRetry?: (attempt: number, delayMs: number, reason: string) => void
  /**
   * config digests a safety snapshot replaced this run (a snapshot is a section of the config file, so it changes
   * the digest): `node/type/vmid/planned digest` -> the digest read after the snapshot, shared by every action
   */
  digests?: Map<string, string>
  /**
   * Stores the secret of a token this run created (PVE shows it once): encrypted, outside the work tree; returns
   * where, for the action's note. Without it a token is not created (its secret would be lost).
   */
  tokenSecrets?: TokenSecretSink
}

/** Where a new token's secret goes (the CLI: age-encrypted to the cluster's SOPS recipients, mode 0600). */
export type TokenSecretSink = (fullTokenid: string, secret: { reveal(): string }) => Promise<string>

/** the digest a request must send: the planned one, or what a safety snapshot of this run turned it into */
export function digestOf(ctx: ActionContext, r: { node: string; guest: GuestType; vmid: number; digest?: string }) {
  if (r.digest === undefined) return undefined
  return ctx.digests?.get(`${r.node}/${r.guest}/${r.vmid}/${r.digest}`) ?? r.digest
}

export interface TaskRecord {
  upid: string
  node: string
  exitstatus: string
}

/** An action failed; the message is already free of secrets. */
export class ActionFailure extends Error {}

/**
 * One request as it runs: the executor's context, the tasks it started, the secret values it resolved, and what
 * it saw and deliberately left alone (the action's notes, e.g. a snapshot named like ProxOps' without its mark).
 */
export interface RequestRun {
  ctx: ActionContext
  tasks: TaskRecord[]
  secrets: string[]
  notes: string[]
}

/** The request shape of one call (a union member may carry several calls: `start`, `stop`, ...). */
export type RequestOf<C extends PveRequest['call']> = Matching<PveRequest, C>
type Matching<R, C> = R extends { call: infer K } ? (C extends K ? R : never) : never

/** How a kind runs one of its requests. */
export type Runners = {
  [C in PveRequest['call']]?: (request: RequestOf<C>, run: RequestRun) => Promise<void>
}

/**
 * Makes one writer call and waits for its task. `alreadyDone` matches PVE errors that mean the goal already
 * holds (start of a running guest, stop of a stopped one). A lock timeout is retried with bounded backoff:
 * PVE did not apply the change, so sending it again is safe.
 */
export async function call(
  what: string,
  ctx: ActionContext,
  tasks: TaskRecord[],
  send: () => Promise<TaskRef | null>,
  alreadyDone?: RegExp,
  timeoutMs = ctx.taskTimeoutMs,
): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    let error: string
    try {
      const task = await send()
      if (task === null) return
      const result = await waitWithProgress(task, ctx, timeoutMs)
      tasks.push({ upid: task.upid, node: task.node, exitstatus: result.exitstatus })
      if (result.ok) return
      error = result.exitstatus
    } catch (e) {
      if (e instanceof ActionFailure) throw e
      error = e instanceof Error ? e.message : String(e)
    }
    if (alreadyDone?.test(error)) return
    // `can't lock file ... got timeout` and `cfs-lock '...' error: got lock request timeout`
    if (isLockTimeoutMessage(error) && attempt < ctx.lockRetries) {
      const delayMs = ctx.lockRetryDelayMs * 2 ** attempt
      ctx.onRetry?.(attempt + 2, delayMs, `${what}: ${error}`)
      await ctx.sleep(delayMs)
      continue
    }
    throw new ActionFailure(`${what} failed: ${error}`)
  }
}

/**
 * One synchronous write (PVE answers once it is done, no task: the cluster-wide section configs, user.cfg): like
 * `call`, a lock timeout is retried with bounded backoff (PVE did not apply the change) and a refusal throws an
 * ActionFailure `<what> failed: <PVE's text>`.
 */
export function write(what: string, ctx: ActionContext, send: () => Promise<unknown>): Promise<void> {
  return call(what, ctx, [], async () => {
    await send()
    return null
  })
}

async function waitWithProgress(task: TaskRef, ctx: ActionContext, timeoutMs: number): Promise<TaskResult> {
  ctx.onTaskStarted?.(task)
  const started = ctx.now()
  const timer = ctx.onTaskRunning
    ? setInterval(() => ctx.onTaskRunning!(task, ctx.now() - started), ctx.progressIntervalMs)
    : undefined
  timer?.unref?.()
  try {
    // no abort signal here: a started action runs to its end, so a guest is never left half-way (stopped, unstarted)
    return await ctx.writer.waitTask(task, { timeoutMs, pollIntervalMs: ctx.taskPollIntervalMs })
  } finally {
    if (timer) clearInterval(timer)
  }
}
