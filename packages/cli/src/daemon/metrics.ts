/**
 * Prometheus metrics for the daemon (prom-client, a private registry). Every series carries a `cluster`
 * label. Label values are cluster names, kinds, action types and result words: never free text, so no
 * secret can reach /metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { ClusterCycle } from '../status-model.js'

export interface RequestSample {
  cluster: string
  method: string
  /** HTTP status, or 0 when no response arrived */
  status: number
  durationMs: number
}

export class Metrics {
  readonly registry = new Registry()
  readonly #cycles = this.#counter('proxops_cycles_total', 'Reconcile cycles by result', ['cluster', 'result'])
  readonly #actions = this.#counter('proxops_actions_total', 'Actions carried out, by kind, action type and result', [
    'cluster',
    'kind',
    'action',
    'result',
  ])
  readonly #anomalies = this.#counter('proxops_anomalies_total', 'Anomalies reported, by code', ['cluster', 'code'])
  readonly #deferred = this.#counter(
    'proxops_prune_deferred_total',
    'Prunes deferred by the per-cycle budget, the window or a guard',
    ['cluster'],
  )
  readonly #lastCycle = this.#gauge('proxops_last_cycle_timestamp_seconds', 'End of the last cycle (any result)', [
    'cluster',
  ])
  readonly #lastSuccess = this.#gauge(
    'proxops_last_success_timestamp_seconds',
    'End of the last cycle that was not aborted',
    ['cluster'],
  )
  readonly #pending = this.#gauge('proxops_planned_actions', 'Actions the last plan held', ['cluster'])
  readonly #blocked = this.#gauge(
    'proxops_blocked_objects',
    'Objects that do not match git and could not be converged in the last cycle, by reason',
    ['cluster', 'reason'],
  )
  readonly #converged = this.#gauge(
    'proxops_converged',
    '1 when the last cycle of the cluster found PVE matching git (nothing to do, nothing blocked)',
    ['cluster'],
  )
  readonly #unconverged = this.#gauge(
    'proxops_consecutive_unconverged_cycles',
    'Cycles in a row, up to the last one, that did not end converged (0 after a converged cycle)',
    ['cluster'],
  )
  readonly #cycleDuration = new Histogram({
    name: 'proxops_cycle_duration_seconds',
    help: 'Duration of a reconcile cycle (read, plan, execute), any result',
    labelNames: ['cluster'],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
    registers: [this.registry],
  })
  readonly #stale = this.#gauge('proxops_desired_stale', '1 while git fetches fail and the last good tree is used')
  readonly #gitFetch = this.#gauge('proxops_git_last_fetch_timestamp_seconds', 'Last successful git fetch (URL mode)')
  readonly #latency = new Histogram({
    name: 'proxops_pve_request_duration_seconds',
    help: 'PVE API request latency',
    labelNames: ['cluster', 'method', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  })

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics !== false) collectDefaultMetrics({ register: this.registry, prefix: 'proxops_' })
  }

  /** a counter of this registry: its name, help and labels say all there is (private methods exist before fields) */
  #counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter({ name, help, labelNames, registers: [this.registry] })
  }

  /** a gauge of this registry, as #counter */
  #gauge<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> {
    return new Gauge({ name, help, labelNames, registers: [this.registry] })
  }

  recordCycle(
    cycle: ClusterCycle,
    finishedAtMs: number,
    results: readonly { kind: string; type: string; status: string }[],
    anomalyCodes: readonly string[],
  ): void {
    const cluster = cycle.cluster
    this.#cycles.inc({ cluster, result: cycle.result })
    for (const r of results) this.#actions.inc({ cluster, kind: r.kind, action: r.type, result: r.status })
    for (const code of anomalyCodes) this.#anomalies.inc({ cluster, code })
    if (cycle.pruneDeferred > 0) this.#deferred.inc({ cluster }, cycle.pruneDeferred)
    this.#lastCycle.set({ cluster }, finishedAtMs / 1000)
    if (cycle.result !== 'aborted') this.#lastSuccess.set({ cluster }, finishedAtMs / 1000)
    this.#pending.set({ cluster }, cycle.actions.planned)
    this.#converged.set({ cluster }, cycle.result === 'converged' ? 1 : 0)
    if (cycle.result === 'converged') this.#unconverged.set({ cluster }, 0)
    else this.#unconverged.inc({ cluster })
    const seconds = (Date.parse(cycle.finishedAt) - Date.parse(cycle.startedAt)) / 1000
    if (Number.isFinite(seconds) && seconds >= 0) this.#cycleDuration.observe({ cluster }, seconds)
    // a reason that cleared goes back to 0 rather than keeping its last value
    for (const reason of this.#blockedReasons.get(cluster) ?? []) this.#blocked.set({ cluster, reason }, 0)
    const reasons = Object.entries(cycle.blockedByReason)
    for (const [reason, n] of reasons) this.#blocked.set({ cluster, reason }, n ?? 0)
    this.#blockedReasons.set(
      cluster,
      new Set([...(this.#blockedReasons.get(cluster) ?? []), ...reasons.map(([r]) => r)]),
    )
  }

  readonly #blockedReasons = new Map<string, Set<string>>()

  /** Counts a cluster even before its first cycle so that dashboards see it. */
  registerCluster(cluster: string): void {
    this.#cycles.inc({ cluster, result: 'converged' }, 0)
    this.#deferred.inc({ cluster }, 0)
    this.#converged.set({ cluster }, 0)
    this.#unconverged.set({ cluster }, 0)
  }

  recordRequest(sample: RequestSample): void {
    this.#latency.observe(
      { cluster: sample.cluster, method: sample.method.toUpperCase(), status: String(sample.status) },
      sample.durationMs / 1000,
    )
  }

  setDesiredStale(stale: boolean): void {
    this.#stale.set(stale ? 1 : 0)
  }

  recordGitFetch(atMs: number): void {
    this.#gitFetch.set(atMs / 1000)
  }

  async text(): Promise<string> {
    return this.registry.metrics()
  }

  get contentType(): string {
    return this.registry.contentType
  }
}
