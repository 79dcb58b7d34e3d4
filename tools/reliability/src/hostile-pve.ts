/**
 * A hostile PVE for the CLI: an HTTPS proxy in front of the simulator that forwards every request and lets a
 * test replace or rewrite chosen answers (a gzip bomb, an implausible `/pending`, a config without the keys
 * every guest has, extra live keys). The simulator stays truthful; only this proxy misbehaves.
 */
import { execFileSync } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer, request } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Simulator } from '@proxops/pve-sim'

export interface Seen {
  method: string
  /** path below /api2/json, without the query, as sent (not decoded) */
  path: string
}

/** What to do with one request: forward it, answer it here, or forward it and rewrite PVE's `data`. */
export type Tamper =
  | { kind: 'forward' }
  | { kind: 'answer'; status?: number; headers?: Record<string, string>; body: Buffer | string }
  | { kind: 'rewrite'; data: (data: unknown) => unknown }

export interface HostilePve {
  url: string
  fingerprint: string
  nodes: string[]
  token: Simulator['token']
  seen: Seen[]
  tamper(fn: (req: Seen) => Tamper): void
  close(): Promise<void>
}

function certificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'proxops-hostile-'))
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'k.pem'),
        '-out',
        join(dir, 'c.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=hostile-pve',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    )
    return { key: readFileSync(join(dir, 'k.pem'), 'utf8'), cert: readFileSync(join(dir, 'c.pem'), 'utf8') }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

export async function startHostilePve(sim: Simulator): Promise<HostilePve> {
  const { key, cert } = certificate()
  const target = new URL(sim.url)
  let decide: (req: Seen) => Tamper = () => ({ kind: 'forward' })
  const seen: Seen[] = []
  const server = createServer({ key, cert }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!.replace(/^\/api2\/json/, '')
      const s: Seen = { method: req.method ?? 'GET', path }
      seen.push(s)
      const action = decide(s)
      if (action.kind === 'answer') {
        res.writeHead(action.status ?? 200, { 'content-type': 'application/json;charset=UTF-8', ...action.headers })
        res.end(action.body)
        return
      }
      const headers = { ...req.headers, host: target.host }
      delete headers['accept-encoding'] // plain answers from the simulator, so a rewrite can read them
      const upstream = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers,
          ca: sim.caPem,
          checkServerIdentity: () => undefined,
        },
        (up) => {
          const body: Buffer[] = []
          up.on('data', (c: Buffer) => body.push(c))
          up.on('end', () => {
            let out = Buffer.concat(body)
            if (action.kind === 'rewrite' && (up.statusCode ?? 500) < 300) {
              const doc = JSON.parse(out.toString('utf8')) as { data: unknown }
              out = Buffer.from(JSON.stringify({ ...doc, data: action.data(doc.data) }))
            }
            const h = { ...up.headers }
            delete h['content-length']
            delete h['transfer-encoding']
            res.writeHead(up.statusCode ?? 502, up.statusMessage, h)
            res.end(out)
          })
        },
      )
      upstream.on('error', () => {
        res.writeHead(502)
        res.end()
      })
      upstream.end(Buffer.concat(chunks))
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  return {
    url: `https://127.0.0.1:${port}`,
    fingerprint: new X509Certificate(cert).fingerprint256,
    nodes: sim.nodes,
    token: sim.token,
    seen,
    tamper(fn) {
      decide = fn
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}
