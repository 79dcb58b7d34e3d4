/**
 * What the daemon knows, as one document: /status serialises it, the status page at / renders it, /readyz and
 * /convergedz answer from parts of it. Pure functions of the daemon's view and the time.
 */
import type { ClusterCycle, ObjectStatus } from '../status-model.js'
import type { CycleSummary } from './history.js'
import type { Suspension } from '../runtime/suspensions.js'
import type { Delivery } from './webhooks.js'

export interface DaemonView {
  clusters: readonly string[]
  pollIntervalMs: number
  startedAt: number
  commit?: string
  desiredStale: boolean
  /** local mode: the work tree's uncommitted paths, which the daemon does not reconcile (it reconciles `commit`) */
  uncommitted?: readonly string[]
  /** the data dir's suspensions (`proxops suspend`), as the last tick read them */
  suspensions?: readonly Suspension[]
  /** the push webhook receivers and their last deliveries, the newest first */
  receivers?: readonly Receivers[]
  /** last cycle of each cluster */
  cycles: ReadonlyMap<string, ClusterCycle>
  /** end of the last non-aborted cycle per cluster (ms) */
  lastSuccess: ReadonlyMap<string, number>
  /** the last cycle of each cluster that read PVE (not aborted): what an aborted cycle's cluster last showed */
  lastRead?: ReadonlyMap<string, ClusterCycle>
  /** recent cycles per cluster, the newest first (history.ts) */
  history?: (cluster: string) => readonly CycleSummary[]
  stopping: boolean
  /** another daemon leads on this data dir (its pid): this one waits as a standby and writes nothing */
  standbyFor?: number
}

export interface Receivers {
  path: string
  cluster: string
  provider: string
  deliveries: readonly Delivery[]
}

export interface Readiness {
  ready: boolean
  /** `standby`: another daemon (`leader`, its pid) holds the data dir's leader lock; this one takes over when it stops */
  role: 'leader' | 'standby'
  leader?: number
  clusters: Record<string, { ready: boolean; reason?: string; lastSuccessAgeSeconds?: number }>
}

/** Pure: ready when every cluster has a non-aborted cycle within 3 intervals of `now`. */
export function readiness(view: DaemonView, now: number): Readiness {
  const clusters: Readiness['clusters'] = {}
  if (view.standbyFor !== undefined) {
    const reason = `standby: the proxops daemon with pid ${view.standbyFor} leads on this data dir`
    for (const cluster of view.clusters) clusters[cluster] = { ready: false, reason }
    return { ready: false, role: 'standby', leader: view.standbyFor, clusters }
  }
  for (const cluster of view.clusters) {
    const last = view.lastSuccess.get(cluster)
    if (last === undefined) {
      const cycle = view.cycles.get(cluster)
      clusters[cluster] = {
        ready: false,
        reason: cycle ? `last cycle aborted: ${cycle.abortReason ?? 'unknown'}` : 'no cycle has completed yet',
      }
      continue
    }
    const age = now - last
    const ok = age < 3 * view.pollIntervalMs
    clusters[cluster] = {
      ready: ok,
      lastSuccessAgeSeconds: Math.round(age / 1000),
      ...(ok ? {} : { reason: 'no successful cycle within 3 poll intervals' }),
    }
  }
  return { ready: !view.stopping && Object.values(clusters).every((c) => c.ready), role: 'leader', clusters }
}

export interface Converged {
  converged: boolean
  clusters: Record<
    string,
    { converged: boolean; result: string | null; blocked?: Record<string, number>; planned?: number }
  >
}

/** Pure: converged when every cluster's last cycle ended `converged` (see convergence() in the planner). */
export function convergedView(view: DaemonView): Converged {
  const clusters: Converged['clusters'] = {}
  for (const cluster of view.clusters) {
    const cycle = view.cycles.get(cluster)
    clusters[cluster] = cycle
      ? {
          converged: cycle.result === 'converged',
          result: cycle.result,
          ...(cycle.blocked > 0 ? { blocked: cycle.blockedByReason } : {}),
          ...(cycle.actions.planned > 0 ? { planned: cycle.actions.planned } : {}),
        }
      : { converged: false, result: null }
  }
  return { converged: Object.values(clusters).every((c) => c.converged), clusters }
}

/**
 * The objects as an earlier cycle read them, for a cluster whose last cycle aborted before reading PVE: stale,
 * shown as what was last known, never as this cycle's state.
 */
export interface LastKnown {
  /** when that cycle finished reading and planning */
  readAt: string
  commit?: string
  objects: ObjectStatus[]
}

/**
 * A cluster in /status: its last cycle (or `result: null` before the first one) and its recent cycles; after an
 * aborted cycle, the last known objects (`lastKnown`) when an earlier cycle read them.
 */
export type ClusterStatus = (ClusterCycle | { cluster: string; result: null }) & {
  history: CycleSummary[]
  lastKnown?: LastKnown
}

function lastKnown(view: DaemonView, cluster: string): Pick<ClusterStatus, 'lastKnown'> {
  const read = view.lastRead?.get(cluster)
  if (view.cycles.get(cluster)?.result !== 'aborted' || read === undefined) return {}
  return {
    lastKnown: {
      readAt: read.finishedAt,
      ...(read.commit !== undefined ? { commit: read.commit } : {}),
      objects: read.objects,
    },
  }
}

export interface StatusDocument {
  process_start: string
  now: string
  poll_interval_seconds: number
  commit: string | null
  desired_stale: boolean
  /** local mode: whether the checkout holds uncommitted changes; they are never applied (`applied: false`) */
  work_tree: WorkTree | null
  /** clusters and objects suspended in the data dir: since when, why, by whom (annotations show on their objects) */
  suspensions: Suspension[]
  /** the push webhook receivers, each with its last deliveries (newest first) */
  webhooks: Receivers[]
  ready: Readiness
  converged: Converged
  clusters: ClusterStatus[]
}

export interface WorkTree {
  dirty: boolean
  applied: false
  /** the uncommitted paths, relative to the checkout's git root, at most 20 */
  paths: string[]
  more: number
}

function workTree(view: DaemonView): WorkTree | null {
  if (view.uncommitted === undefined) return null
  const paths = view.uncommitted.slice(0, 20)
  return { dirty: view.uncommitted.length > 0, applied: false, paths, more: view.uncommitted.length - paths.length }
}

export function statusDocument(view: DaemonView, now: number): StatusDocument {
  return {
    process_start: new Date(view.startedAt).toISOString(),
    now: new Date(now).toISOString(),
    poll_interval_seconds: view.pollIntervalMs / 1000,
    commit: view.commit ?? null,
    desired_stale: view.desiredStale,
    work_tree: workTree(view),
    suspensions: [...(view.suspensions ?? [])],
    webhooks: [...(view.receivers ?? [])],
    ready: readiness(view, now),
    converged: convergedView(view),
    clusters: view.clusters.map((cluster) => ({
      ...(view.cycles.get(cluster) ?? { cluster, result: null }),
      history: [...(view.history?.(cluster) ?? [])],
      ...lastKnown(view, cluster),
    })),
  }
}
