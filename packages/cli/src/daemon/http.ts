/**
 * The daemon's HTTP endpoints: /healthz (the process is alive), /readyz (the daemon is doing its job: every
 * cluster's last cycle that was not aborted is younger than 3 poll intervals; it says nothing about drift),
 * /convergedz (every cluster's last cycle found PVE matching git), /metrics (Prometheus), /status (JSON).
 * Read-only; bound to 127.0.0.1 by default. Everything served passes the redactor.
 */
import { createServer, type Server } from 'node:http'
import type { Redactor } from '../redact.js'
import type { Metrics } from './metrics.js'
import type { ClusterCycle } from '../status-model.js'

export interface DaemonView {
  clusters: readonly string[]
  pollIntervalMs: number
  startedAt: number
  commit?: string
  desiredStale: boolean
  /** last cycle of each cluster */
  cycles: ReadonlyMap<string, ClusterCycle>
  /** end of the last non-aborted cycle per cluster (ms) */
  lastSuccess: ReadonlyMap<string, number>
  stopping: boolean
}

export interface Readiness {
  ready: boolean
  clusters: Record<string, { ready: boolean; reason?: string; lastSuccessAgeSeconds?: number }>
}

/** Pure: ready when every cluster has a non-aborted cycle within 3 intervals of `now`. */
export function readiness(view: DaemonView, now: number): Readiness {
  const clusters: Readiness['clusters'] = {}
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
  return { ready: !view.stopping && Object.values(clusters).every((c) => c.ready), clusters }
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

export function statusDocument(view: DaemonView, now: number): unknown {
  return {
    process_start: new Date(view.startedAt).toISOString(),
    now: new Date(now).toISOString(),
    commit: view.commit ?? null,
    desired_stale: view.desiredStale,
    ready: readiness(view, now),
    converged: convergedView(view),
    clusters: view.clusters.map((cluster) => view.cycles.get(cluster) ?? { cluster, result: null }),
  }
}

export interface HttpOptions {
  host: string
  port: number
  view: () => DaemonView
  metrics: Metrics
  redactor: Redactor
  now?: () => number
}

export async function startHttp(
  options: HttpOptions,
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const now = options.now ?? Date.now
  const send = (res: import('node:http').ServerResponse, status: number, type: string, body: string): void => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' })
    res.end(options.redactor.text(body))
  }
  const json = (value: unknown): string => `${JSON.stringify(options.redactor.value(value), null, 2)}\n`
  const server = createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0]
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'method not allowed\n')
    const view = options.view()
    switch (url) {
      case '/healthz':
        return send(
          res,
          view.stopping ? 503 : 200,
          'application/json',
          json({ ok: !view.stopping, since: new Date(view.startedAt).toISOString() }),
        )
      case '/readyz': {
        const r = readiness(view, now())
        return send(res, r.ready ? 200 : 503, 'application/json', json(r))
      }
      case '/convergedz': {
        const c = convergedView(view)
        return send(res, c.converged ? 200 : 503, 'application/json', json(c))
      }
      case '/metrics':
        options.metrics
          .text()
          .then((text) => send(res, 200, options.metrics.contentType, text))
          .catch(() => send(res, 500, 'text/plain', 'metrics unavailable\n'))
        return
      case '/status':
        return send(res, 200, 'application/json', json(statusDocument(view, now())))
      default:
        return send(res, 404, 'text/plain', 'not found: try /healthz, /readyz, /convergedz, /metrics, /status\n')
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : options.port
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections?.()
      }),
  }
}
