/**
 * The daemon's HTTP endpoints: / (the status page, HTML), /healthz (the process is alive), /readyz (the daemon
 * is doing its job: every cluster's last cycle that was not aborted is younger than 3 poll intervals; it says
 * nothing about drift), /convergedz (every cluster's last cycle found PVE matching git), /metrics (Prometheus),
 * /status (JSON). Read-only; bound to 127.0.0.1 by default, with opt-in bearer or basic auth (auth.ts).
 * Everything served passes the redactor and the sanitiser. A `Host` that does not name the daemon gets 421 (DNS rebinding, host.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http'
import type { Redactor } from '../redact.js'
import { safeOutput } from '../safe-text.js'
import { authorized, challenges, type HttpAuth } from './auth.js'
import { knownHost } from './host.js'
import type { Metrics } from './metrics.js'
import { STATUS_PAGE_HEADERS, renderStatusPage } from './status-page.js'
import { convergedView, readiness, statusDocument, type DaemonView } from './status-document.js'

export {
  convergedView,
  readiness,
  statusDocument,
  type ClusterStatus,
  type Converged,
  type DaemonView,
  type Readiness,
  type StatusDocument,
} from './status-document.js'

export interface HttpOptions {
  host: string
  port: number
  /** names a `Host` header may carry besides the listen address and localhost (`allowed-hosts`) */
  allowedHosts?: readonly string[]
  view: () => DaemonView
  metrics: Metrics
  redactor: Redactor
  /** credentials every request must carry; absent = none (the default, for 127.0.0.1) */
  auth?: HttpAuth
  now?: () => number
  /**
   * `POST /reconcile[?cluster=a&cluster=b]`: a tick now. Always authenticated: by the HTTP credentials when set, else
   * by the bearer token the daemon keeps in its data dir (`reconcileToken`, which `proxops reconcile` reads).
   */
  reconcile?: { token: string; request(clusters: readonly string[] | undefined): { status: number; body: unknown } }
  /** further POST routes (the push webhooks: daemon/webhooks.ts), by path; they authenticate themselves */
  posts?: ReadonlyMap<string, (req: IncomingMessage) => Promise<{ status: number; body: unknown }>>
}

export async function startHttp(
  options: HttpOptions,
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const now = options.now ?? Date.now
  const send = (
    res: ServerResponse,
    status: number,
    type: string,
    body: string,
    headers: Record<string, string> = {},
  ): void => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', ...headers })
    // JSON keeps its value, HTML and metrics their lines; no terminal control reaches a `curl` (safe-text.ts)
    res.end(safeOutput(options.redactor.text(body)))
  }
  const json = (value: unknown): string => `${JSON.stringify(options.redactor.value(value), null, 2)}\n`
  const server = createServer((req, res) => {
    // before anything else, with no body: a page rebound to this address learns nothing (host.ts)
    if (!knownHost(req.headers.host, options.host, options.allowedHosts ?? [])) {
      res.writeHead(421, { 'content-length': '0', 'cache-control': 'no-store' })
      return void res.end()
    }
    const [url = '/', query = ''] = (req.url ?? '/').split('?')
    if (req.method === 'POST') {
      const hook = options.posts?.get(url)
      if (hook) {
        hook(req)
          .then((r) => send(res, r.status, 'application/json', json(r.body)))
          .catch(() => send(res, 500, 'application/json', json({ error: 'internal error' })))
        return
      }
      if (url === '/reconcile' && options.reconcile) {
        req.resume()
        const ok = options.auth
          ? authorized(options.auth, req.headers.authorization)
          : authorized({ bearer: options.reconcile.token }, req.headers.authorization)
        if (!ok)
          return send(res, 401, 'application/json', json({ error: 'authentication required' }), {
            'www-authenticate': options.auth ? challenges(options.auth) : 'Bearer realm="proxops"',
          })
        const clusters = new URLSearchParams(query).getAll('cluster')
        const r = options.reconcile.request(clusters.length > 0 ? clusters : undefined)
        return send(res, r.status, 'application/json', json(r.body))
      }
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'method not allowed\n')
    if (options.auth && !authorized(options.auth, req.headers.authorization))
      return send(res, 401, 'text/plain', 'authentication required\n', {
        'www-authenticate': challenges(options.auth),
      })
    const view = options.view()
    switch (url) {
      case '/':
        return send(
          res,
          200,
          'text/html; charset=utf-8',
          renderStatusPage(statusDocument(view, now()), options.redactor),
          STATUS_PAGE_HEADERS,
        )
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
        return send(res, 404, 'text/plain', 'not found: try /, /healthz, /readyz, /convergedz, /metrics, /status\n')
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
