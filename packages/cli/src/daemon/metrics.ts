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
  readonly #cycles = new Counter({
    name: 'proxops_cycles_total',
    help: 'Reconcile cycles by result',
    labelNames: ['cluster', 'result'],
    registers: [this.registry],
  })
  readonly #actions = new Counter({
    name: 'proxops_actions_total',
    help: 'Actions carried out, by kind, action type and result',
    labelNames: ['cluster', 'kind', 'action', 'result'],
    registers: [this.registry],
  })
  readonly #anomalies = new Counter({
    name: 'proxops_anomalies_total',
    help: 'Anomalies reported, by code',
    labelNames: ['cluster', 'code'],
    registers: [this.registry],
  })
  readonly #deferred = new Counter({
    name: 'proxops_prune_deferred_total',
    help: 'Prunes deferred by the per-cycle budget, the window or a guard',
    labelNames: ['cluster'],
    registers: [this.registry],
  })
  readonly #lastCycle = new Gauge({
    name: 'proxops_last_cycle_timestamp_seconds',
    help: 'End of the last cycle (any result)',
    labelNames: ['cluster'],
    registers: [this.registry],
  })
  readonly #lastSuccess = new Gauge({
    name: 'proxops_last_success_timestamp_seconds',
    help: 'End of the last cycle that was not aborted',
    labelNames: ['cluster'],
    registers: [this.registry],
  })
  readonly #pending = new Gauge({
    name: 'proxops_planned_actions',
    help: 'Actions the last plan held',
    labelNames: ['cluster'],
    registers: [this.registry],
  })
  readonly #blocked = new Gauge({
    name: 'proxops_blocked_objects',
    help: 'Objects that do not match git and could not be converged in the last cycle, by reason',
    labelNames: ['cluster', 'reason'],
    registers: [this.registry],
  })
  readonly #converged = new Gauge({
    name: 'proxops_converged',
    help: '1 when the last cycle of the cluster found PVE matching git (nothing to do, nothing blocked)',
    labelNames: ['cluster'],
    registers: [this.registry],
  })
  readonly #unconverged = new Gauge({
    name: 'proxops_consecutive_unconverged_cycles',
    help: 'Cycles in a row, up to the last one, that did not end converged (0 after a converged cycle)',
    labelNames: ['cluster'],
    registers: [this.registry],
  })
  readonly #cycleDuration = new Histogram({
    name: 'proxops_cycle_duration_seconds',
    help: 'Duration of a reconcile cycle (read, plan, execute), any result',
    labelNames: ['cluster'],
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
    registers: [this.registry],
  })
  readonly #stale = new Gauge({
    name: 'proxops_desired_stale',
    help: '1 while git fetches fail and the last good tree is used',
    registers: [this.registry],
  })
  readonly #gitFetch = new Gauge({
    name: 'proxops_git_last_fetch_timestamp_seconds',
    help: 'Last successful git fetch (URL mode)',
    registers: [this.registry],
  })
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
