import { execFileSync } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer } from 'node:https'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * A small local HTTPS server for transport/auth tests: a self-signed certificate made with the openssl CLI,
 * a route function per test, and a log of every request as received (method, URL, headers, raw body).
 */

export interface SeenRequest {
  method: string
  url: string
  path: string
  query: URLSearchParams
  headers: IncomingMessage['headers']
  body: string
}

export interface Reply {
  status?: number
  /** HTTP reason phrase (PVE puts its message here) */
  statusText?: string
  /** JSON-encoded unless a string */
  body?: unknown
  delayMs?: number
  /** destroy the socket without answering */
  hangUp?: boolean
  /** raw bytes sent as the body instead of `body` (e.g. a gzip stream), with these headers */
  raw?: Buffer
  headers?: Record<string, string>
}

export type Handler = (req: SeenRequest) => Reply | Promise<Reply>

export interface LocalPve {
  url: string
  caPem: string
  caPath: string
  fingerprint: string
  requests: SeenRequest[]
  handle(handler: Handler): void
  close(): Promise<void>
}

let cached: { key: string; cert: string; dir: string } | undefined

function certificate(): { key: string; cert: string; dir: string } {
  if (cached) return cached
  const dir = mkdtempSync(join(tmpdir(), 'pve-client-test-'))
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
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-days',
      '2',
      '-subj',
      '/CN=pve-test.local',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  )
  cached = { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), dir }
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  return cached
}

export const ok = (data: unknown, extra: Record<string, unknown> = {}): Reply => ({
  status: 200,
  body: { data, ...extra },
})
export const pveError = (status: number, message: string, errors?: Record<string, string>): Reply => ({
  status,
  statusText: message.split('\n')[0],
  body: { data: null, message: `${message}\n`, ...(errors ? { errors } : {}) },
})

export async function startLocalPve(initial: Handler = () => ok(null)): Promise<LocalPve> {
  const { key, cert, dir } = certificate()
  let handler = initial
  const requests: SeenRequest[] = []
  const server = createServer({ key, cert }, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'https://x')
      const seen: SeenRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        path: decodeURIComponent(u.pathname.replace(/^\/api2\/json/, '')),
        query: u.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      requests.push(seen)
      void Promise.resolve(handler(seen)).then(async (reply) => {
        if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs))
        if (reply.hangUp) return req.socket.destroy()
        const body =
          reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)
        res.statusCode = reply.status ?? 200
        if (reply.statusText) res.statusMessage = reply.statusText
        if (body !== '' || reply.raw) res.setHeader('Content-Type', 'application/json;charset=UTF-8')
        for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value)
        res.end(reply.raw ?? body)
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `https://127.0.0.1:${port}`,
    caPem: cert,
    caPath: join(dir, 'cert.pem'),
    fingerprint: new X509Certificate(cert).fingerprint256,
    requests,
    handle(h) {
      handler = h
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Collects log lines from the client's logger hook. */
export function captureLogger(): {
  lines: string[]
  warn: (m: string, meta?: object) => void
  debug: (m: string, meta?: object) => void
} {
  const lines: string[] = []
  const push = (m: string, meta?: object) => lines.push(`${m} ${meta ? JSON.stringify(meta) : ''}`)
  return { lines, warn: push, debug: push }
}
