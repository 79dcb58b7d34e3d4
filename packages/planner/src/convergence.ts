/**
 * Whether a cluster matches git: the one definition behind `diff`'s last line and exit code, `status`, `apply`'s
 * report, the daemon's /status, /readyz and metrics. Converged means nothing is to be done and nothing is blocked;
 * "no actions" alone is not converged when an object could not be planned (unknown, offline node, locked, a
 * deferred prune, an anomaly, a change held pending by `disruption: none`). Pure.
 */
import type { Plan } from './plan-types.js'
import type { Report } from './execute/execute.js'

/** Why an object does not match git and this cycle cannot make it so. */
export type BlockReason =
  | 'unknown'
  | 'node-offline'
  | 'locked'
  | 'paused'
  | 'storage-unreadable'
  | 'prune-deferred'
  | 'prune-guard'
  | 'unmarked'
  | 'disruption'
  | 'invalid-desired'
  | 'pending-restart'
  | 'anomaly'
  | 'missing-privilege'
  | 'suspended'
  | 'sync-window'
  | 'failed'
  | 'not-run'

export interface Blocked {
  /** the object's address, or the cluster for a cluster-level guard */
  address: string
  reason: BlockReason
  message: string
}

export interface Convergence {
  /** nothing to do and nothing blocked */
  converged: boolean
  /** actions planned (dry run) or not carried out (after execute: none when everything ran) */
  toDo: number
  /** sorted by address, then reason */
  blocked: readonly Blocked[]
  /** blocked objects per reason, reasons in alphabetical order */
  byReason: Readonly<Partial<Record<BlockReason, number>>>
}

/**
 * Skips that are not a mismatch: a live object without the ownership tag, or marked for another cluster entry,
 * is simply not this entry's to manage; one kept by its `prune: never` policy is where its owner wants it.
 */
const NOT_BLOCKING: ReadonlySet<string> = new Set(['untagged', 'owned-elsewhere', 'prune-never'])

function skipReason(code: string): BlockReason {
  if (code === 'prune-budget') return 'prune-deferred'
  return code as BlockReason
}

function anomalyReason(code: string): BlockReason {
  return code.includes('privilege') ? 'missing-privilege' : 'anomaly'
}

/** The convergence of one cluster from its plan and, after execute, its report. */
export function convergence(plan: Plan, report?: Report): Convergence {
  const blocked: Blocked[] = []
  for (const s of plan.skips) {
    if (!NOT_BLOCKING.has(s.code)) blocked.push({ address: s.address, reason: skipReason(s.code), message: s.message })
  }
  for (const a of plan.anomalies) {
    blocked.push({ address: a.address ?? plan.cluster, reason: anomalyReason(a.code), message: a.message })
  }
  for (const p of plan.pending) blocked.push({ address: p.address, reason: 'pending-restart', message: p.message })
  let toDo = plan.actions.length
  if (report) {
    toDo = 0
    for (const r of report.results) {
      if (r.status === 'failed') blocked.push({ address: r.address, reason: 'failed', message: r.error ?? 'failed' })
      else if (r.status !== 'ok')
        blocked.push({ address: r.address, reason: 'not-run', message: r.skip?.reason ?? 'not run' })
    }
    // an action the report does not mention (a cancelled run) was not carried out either
    const reported = new Set(report.results.map((r) => r.id))
    for (const a of plan.actions) {
      if (!reported.has(a.id)) blocked.push({ address: a.address, reason: 'not-run', message: 'not run' })
    }
  }
  const order = (b: Blocked): string => `${b.address}\0${b.reason}\0${b.message}`
  blocked.sort((x, y) => (order(x) < order(y) ? -1 : order(x) > order(y) ? 1 : 0))
  // one object blocked for several reasons counts once, under its first reason
  const counted = new Set<string>()
  const counts = new Map<BlockReason, number>()
  for (const b of blocked) {
    if (counted.has(b.address)) continue
    counted.add(b.address)
    counts.set(b.reason, (counts.get(b.reason) ?? 0) + 1)
  }
  const byReason = Object.fromEntries([...counts].sort(([a], [b]) => (a < b ? -1 : 1)))
  return { converged: toDo === 0 && blocked.length === 0, toDo, blocked, byReason }
}

/** `node-offline 2, prune-deferred 1` */
export function describeBlocked(c: Pick<Convergence, 'byReason'>): string {
  return Object.entries(c.byReason)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ')
}

/** How many distinct objects are blocked. */
export function blockedCount(c: Pick<Convergence, 'byReason'>): number {
  return Object.values(c.byReason).reduce((sum, n) => sum + (n ?? 0), 0)
}
