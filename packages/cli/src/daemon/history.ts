/**
 * The daemon's short memory of recent cycles, per cluster, for the status page and /status: a summary of each
 * (outcome and counts, no objects), the newest first, bounded so that a daemon running for months holds no more
 * than `limit` per cluster.
 */
import type { ClusterCycle, CycleResult } from '../status-model.js'

/** how many cycles per cluster the daemon remembers by default */
export const HISTORY_LIMIT = 20

export interface CycleSummary {
  startedAt: string
  finishedAt: string
  commit?: string
  result: CycleResult
  abortReason?: string
  actions: ClusterCycle['actions']
  blocked: number
  anomalies: number
}

export function summarise(cycle: ClusterCycle): CycleSummary {
  return {
    startedAt: cycle.startedAt,
    finishedAt: cycle.finishedAt,
    ...(cycle.commit !== undefined ? { commit: cycle.commit } : {}),
    result: cycle.result,
    ...(cycle.abortReason !== undefined ? { abortReason: cycle.abortReason } : {}),
    actions: { ...cycle.actions },
    blocked: cycle.blocked,
    anomalies: cycle.anomalies,
  }
}

export class CycleHistory {
  readonly #limit: number
  readonly #byCluster = new Map<string, CycleSummary[]>()

  constructor(limit = HISTORY_LIMIT) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`history limit must be a whole number >= 1`)
    this.#limit = limit
  }

  record(cycle: ClusterCycle): void {
    const list = this.#byCluster.get(cycle.cluster) ?? []
    list.unshift(summarise(cycle))
    if (list.length > this.#limit) list.length = this.#limit
    this.#byCluster.set(cycle.cluster, list)
  }

  /** what an earlier run remembered (daemon/memory.ts), the newest first */
  restore(cluster: string, summaries: readonly CycleSummary[]): void {
    this.#byCluster.set(cluster, summaries.slice(0, this.#limit))
  }

  /** the cluster's recent cycles, the newest first */
  of(cluster: string): readonly CycleSummary[] {
    return this.#byCluster.get(cluster) ?? []
  }
}
