/**
 * execute(): runs a Plan through the PveWriter port and returns a Report.
 *
 * Actions run in parallel across independent objects, in dependency order: an action waits for its
 * `dependsOn` actions and for every action on the resources it `requires` (and is skipped as deferred when
 * one of them failed or was skipped); actions on the same guest keep plan order; prunes (tier 9) start only
 * after every other action has ended. Limits: `nodeConcurrency` actions per node (default 2) and
 * `storageConcurrency` downloads per storage (default 1). Each action ends ok, failed (with PVE's error) or
 * skipped (with a reason); a failed action never stops unrelated work. Cancelling through `signal` stops new
 * actions from starting; those end skipped, started ones run to their end.
 */
import type { Action, Plan } from '../plan-types.js'
import type { TaskRef } from '@proxops/pve-client/wire'
import type { LiveReader, PveWriter, StorageLedger } from '../ports.js'
import type { SecretResolver } from '../kit/params.js'
import { runAction, type ActionContext, type TaskRecord } from './run-action.js'
import type { TokenSecretSink } from '../kit/runners.js'
import { schedule, type Job, type Outcome, type SkipReasonCode } from './scheduler.js'

export interface ExecuteOptions {
  /** read-back after each action (usually the same client as the writer) */
  reader: LiveReader
  /** resolves the plan's secret references at execute time */
  secrets?: SecretResolver
  /** stores the secret of each token a `createToken` request makes (kit/runners.ts TokenSecretSink) */
  tokenSecrets?: TokenSecretSink
  /** where storage writes record ownership and credential fingerprints (ports.ts StorageLedger) */
  ledger?: StorageLedger
  /** actions running at once per node (default 2) */
  nodeConcurrency?: number
  /** downloads running at once per storage (default 1) */
  storageConcurrency?: number
  signal?: AbortSignal
  onProgress?: (event: ProgressEvent) => void
  /** how often `task-running` is reported while a task runs (default 5000 ms) */
  progressIntervalMs?: number
  /** wait limit for one PVE task (default 10 min); downloads use `downloadTimeoutMs` (default 60 min) */
  taskTimeoutMs?: number
  downloadTimeoutMs?: number
  /** how often a running task is polled (default 250 ms: PVE tasks often take about a second, and a coarse
   *  interval adds up to one interval to every action) */
  taskPollIntervalMs?: number
  /**
   * retries of a request that failed on a PVE lock timeout, `can't lock file ... got timeout` or
   * `cfs-lock '...' error: got lock request timeout` (default 3, backoff from 1 s)
   */
  lockRetries?: number
  lockRetryDelayMs?: number
  /** read-back attempts (default 5, 1 s apart): an LXC template mark completes after PVE has answered */
  confirmAttempts?: number
  confirmDelayMs?: number
  /** `none` refuses restart-class actions (shutdown-then-update, restart) even if the plan has them */
  disruption?: 'allow' | 'none'
  /** injectable for tests */
  now?: () => number
  sleep?: (ms: number) => Promise<void>
}

export type ActionStatus = 'ok' | 'failed' | 'skipped'

export interface ActionResult {
  id: string
  address: string
  kind: Action['kind']
  name?: string
  type: Action['type']
  node: string
  vmid?: number
  status: ActionStatus
  /** failed: PVE's error (or the executor's refusal), secrets scrubbed */
  error?: string
  /** skipped: why */
  skip?: { code: SkipReasonCode; reason: string }
  /**
   * what the action saw on PVE and deliberately left alone, for the report (a snapshot named like a safety
   * snapshot without this entry's mark, which the rotation never deletes); absent when there is nothing
   */
  notes?: readonly string[]
  tasks: readonly TaskRecord[]
  durationMs: number
}

export interface Report {
  cluster: string
  commit?: string
  /** in plan order */
  results: readonly ActionResult[]
  summary: { actions: number; ok: number; failed: number; skipped: number }
  /** cancelled through the signal before every action had started */
  cancelled: boolean
  /** every action ended ok (a cycle with a failed or skipped action is incomplete) */
  complete: boolean
}

export type ProgressEvent =
  | { type: 'action-started'; action: Action }
  | { type: 'task-started'; action: Action; task: TaskRef }
  | { type: 'task-running'; action: Action; task: TaskRef; elapsedMs: number }
  /** the action's request is sent again after `delayMs` (PVE's lock timeout); `attempt` is the one to come */
  | { type: 'retry'; action: Action; attempt: number; attempts: number; delayMs: number; reason: string }
  | { type: 'action-finished'; action: Action; result: ActionResult }

export const DEFAULT_NODE_CONCURRENCY = 2
export const DEFAULT_STORAGE_CONCURRENCY = 1
const RESTART_TYPES: ReadonlySet<Action['type']> = new Set(['shutdown-then-update', 'restart'])

export async function execute(plan: Plan, writer: PveWriter, options: ExecuteOptions): Promise<Report> {
  const now = options.now ?? (() => Date.now())
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const emit = (event: ProgressEvent): void => {
    try {
      options.onProgress?.(event)
    } catch {
      // a failing progress callback must not change what happens to PVE
    }
  }
  const byId = new Map(plan.actions.map((a) => [a.id, a]))
  const jobs = toJobs(
    plan.actions,
    options.nodeConcurrency ?? DEFAULT_NODE_CONCURRENCY,
    options.storageConcurrency ?? DEFAULT_STORAGE_CONCURRENCY,
  )
  const details = new Map<string, { tasks: TaskRecord[]; durationMs: number; notes?: string[] }>()
  const results = new Map<string, ActionResult>()

  const finish = (action: Action, outcome: Outcome): void => {
    const detail = details.get(action.id) ?? { tasks: [], durationMs: 0 }
    const result: ActionResult = {
      id: action.id,
      address: action.address,
      kind: action.kind,
      ...(action.name !== undefined ? { name: action.name } : {}),
      type: action.type,
      node: action.node,
      ...(action.vmid !== undefined ? { vmid: action.vmid } : {}),
      status: outcome.status,
      ...(outcome.status === 'failed' ? { error: outcome.error } : {}),
      ...(outcome.status === 'skipped' ? { skip: { code: outcome.code, reason: outcome.reason } } : {}),
      ...(detail.notes !== undefined && detail.notes.length > 0 ? { notes: detail.notes } : {}),
      tasks: detail.tasks,
      durationMs: detail.durationMs,
    }
    results.set(action.id, result)
    emit({ type: 'action-finished', action, result })
  }

  const digests = new Map<string, string>()
  const run = async (job: Job): Promise<Outcome> => {
    const action = byId.get(job.id)!
    if (options.disruption === 'none' && RESTART_TYPES.has(action.type)) {
      const skipped: Outcome = {
        status: 'skipped',
        code: 'disruption',
        reason: 'disruption: none; the change needs a guest restart and stays pending',
      }
      finish(action, skipped)
      return skipped
    }
    emit({ type: 'action-started', action })
    const started = now()
    const ctx: ActionContext = {
      writer,
      reader: options.reader,
      secrets: options.secrets,
      ...(options.tokenSecrets ? { tokenSecrets: options.tokenSecrets } : {}),
      ...(options.ledger ? { ledger: options.ledger } : {}),
      taskTimeoutMs: options.taskTimeoutMs ?? 600_000,
      downloadTimeoutMs: options.downloadTimeoutMs ?? 3_600_000,
      lockRetries: options.lockRetries ?? 3,
      lockRetryDelayMs: options.lockRetryDelayMs ?? 1000,
      confirmAttempts: options.confirmAttempts ?? 5,
      confirmDelayMs: options.confirmDelayMs ?? 1000,
      progressIntervalMs: options.progressIntervalMs ?? 5000,
      taskPollIntervalMs: options.taskPollIntervalMs ?? 250,
      sleep,
      now,
      digests,
      onTaskStarted: (task) => emit({ type: 'task-started', action, task }),
      onTaskRunning: (task, elapsedMs) => emit({ type: 'task-running', action, task, elapsedMs }),
      onRetry: (attempt, delayMs, reason) =>
        emit({ type: 'retry', action, attempt, attempts: ctx.lockRetries + 1, delayMs, reason }),
    }
    const outcome = await runAction(action, ctx)
    details.set(action.id, { tasks: outcome.tasks, durationMs: now() - started, notes: outcome.notes })
    const result: Outcome = outcome.status === 'ok' ? { status: 'ok' } : { status: 'failed', error: outcome.error }
    finish(action, result)
    return result
  }

  const outcomes = await schedule(jobs, run, {
    ...(options.signal ? { signal: options.signal } : {}),
    onSkip: (job, outcome) => finish(byId.get(job.id)!, outcome),
  })
  for (const action of plan.actions) if (!results.has(action.id)) finish(action, outcomes.get(action.id)!)

  const ordered = plan.actions.map((a) => results.get(a.id)!)
  const count = (status: ActionStatus): number => ordered.filter((r) => r.status === status).length
  const summary = { actions: ordered.length, ok: count('ok'), failed: count('failed'), skipped: count('skipped') }
  return {
    cluster: plan.cluster,
    ...(plan.commit !== undefined ? { commit: plan.commit } : {}),
    results: ordered,
    summary,
    cancelled: ordered.some((r) => r.skip?.code === 'cancelled'),
    complete: summary.ok === summary.actions,
  }
}

/** Maps plan actions onto scheduler jobs (exported for tests and for custom executors). */
export function toJobs(actions: readonly Action[], nodeConcurrency: number, storageConcurrency: number): Job[] {
  const byAddress = new Map<string, string[]>()
  for (const a of actions) byAddress.set(a.address, [...(byAddress.get(a.address) ?? []), a.id])
  const lastOnObject = new Map<string, string>()
  const tier0 = actions.filter((a) => a.tier === 0).map((a) => a.id)
  return actions.map((a) => {
    const deps = new Set(a.dependsOn)
    for (const address of a.requires) for (const id of byAddress.get(address) ?? []) if (id !== a.id) deps.add(id)
    const after = new Set<string>()
    // one guest (or one artifact file) is changed by one action at a time, in plan order
    const object = a.vmid !== undefined ? `vmid:${a.vmid}` : `address:${a.address}`
    const previous = lastOnObject.get(object)
    if (previous !== undefined) after.add(previous)
    lastOnObject.set(object, a.id)
    if (a.tier === 9) for (const id of tier0) after.add(id)
    const slots = [{ key: `node:${a.node}`, limit: nodeConcurrency }]
    // a migration works on both nodes (the source sends, the target receives): it counts against each
    for (const r of a.requests)
      if (r.call === 'migrate')
        for (const node of [r.node, r.target])
          if (!slots.some((s) => s.key === `node:${node}`)) slots.push({ key: `node:${node}`, limit: nodeConcurrency })
    if (a.type === 'download' && a.storage !== undefined)
      slots.push({ key: `storage:${a.node}/${a.storage}`, limit: storageConcurrency })
    return { id: a.id, deps: [...deps].sort(), after: [...after].filter((id) => !deps.has(id)).sort(), slots }
  })
}
