/**
 * Raw HTTP(S) requests for conformance tests: exact status line, headers and body bytes, no client library in
 * between. HTTPS verifies the simulator's certificate against its own CA PEM (SAN 127.0.0.1).
 */
import { request as httpRequest } from 'node:http'
import { expect } from 'vitest'
import { request as httpsRequest } from 'node:https'
import { gunzipSync, inflateSync } from 'node:zlib'

export interface RawResponse {
  status: number
  reason: string
  headers: Record<string, string | string[] | undefined>
  body: string
  /** the parsed body, or undefined when the body is empty or not JSON */
  json: unknown
  ms: number
}

export interface RawTarget {
  url: string
  caPem?: string | undefined
}

export function raw(
  target: RawTarget,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  const u = new URL(path, target.url)
  const t0 = Date.now()
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  if (opts.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(opts.body))
  const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)({
    method,
    hostname: u.hostname,
    port: u.port,
    path: u.pathname + u.search,
    headers,
    agent: false,
    ...(u.protocol === 'https:' ? { ca: target.caPem } : {}),
  })
  return new Promise((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        let buf = Buffer.concat(chunks)
        if (res.headers['content-encoding'] === 'gzip') buf = gunzipSync(buf)
        if (res.headers['content-encoding'] === 'deflate') buf = inflateSync(buf)
        const body = buf.toString('utf8')
        let json: unknown
        try {
          json = body ? JSON.parse(body) : undefined
        } catch {
          json = undefined
        }
        resolve({
          status: res.statusCode ?? 0,
          reason: res.statusMessage ?? '',
          headers: res.headers,
          body,
          json,
          ms: Date.now() - t0,
        })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    if (opts.body !== undefined) req.write(opts.body)
    req.end()
  })
}

export const form = (params: Record<string, string>): { headers: Record<string, string>; body: string } => ({
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(params).toString(),
})

/** polls a task until it stopped; returns its final status object */
/**
 * A request to `/api2/json<path>` as a client sends one: pveproxy takes a body only for POST and PUT, so their
 * parameters go as a form and the others' in the query string
 */
export function apiRequest(
  target: RawTarget,
  auth: Record<string, string>,
  method: string,
  path: string,
  params?: Record<string, string>,
): Promise<RawResponse> {
  const inQuery = method === 'GET' || method === 'DELETE'
  const f = params && !inQuery ? form(params) : undefined
  const q = params && inQuery ? `?${new URLSearchParams(params).toString()}` : ''
  return raw(target, method, `/api2/json${path}${q}`, {
    headers: { ...auth, ...(f?.headers ?? {}) },
    ...(f ? { body: f.body } : {}),
  })
}

/** the `data` of an answer, whatever its status */
export const dataOf = <T>(r: RawResponse): T => (r.json as { data: T }).data

/** the `data` of a 200 answer (the body is the assertion's message otherwise), from the answer itself */
export function okDataOf<T>(r: RawResponse): T {
  expect(r.status, r.body).toBe(200)
  return dataOf<T>(r)
}

/** the `data` of a 200 answer (the body is the assertion's message otherwise) */
export async function okData<T = unknown>(r: Promise<RawResponse>): Promise<T> {
  const res = await r
  expect(res.status, res.body).toBe(200)
  return (res.json as { data: T }).data
}

export async function waitTask(
  target: RawTarget,
  auth: Record<string, string>,
  node: string,
  upid: string,
  timeoutMs = 10_000,
): Promise<Record<string, unknown>> {
  const t0 = Date.now()
  for (;;) {
    const r = await raw(target, 'GET', `/api2/json/nodes/${node}/tasks/${encodeURIComponent(upid)}/status`, {
      headers: auth,
    })
    const data = (r.json as { data?: Record<string, unknown> } | undefined)?.data
    if (r.status === 200 && data?.status === 'stopped') return data
    if (Date.now() - t0 > timeoutMs)
      throw new Error(`task ${upid} still ${String(data?.status ?? r.status)} after ${timeoutMs} ms`)
    await new Promise((res) => setTimeout(res, 20))
  }
}
