/**
 * Response rendering as pve-http-server does it: the `{"data": ...}` envelope, error
 * bodies with `errors` and `message`, the reason phrase = first line of the message, PVE's headers, gzip for
 * bodies over 1 KiB when the client accepts it, `Connection: close` on errors.
 */
import { deflateSync, gzipSync } from 'node:zlib'

export interface SimResponse {
  status: number
  reason: string
  headers: Record<string, string>
  body: Buffer
  /** PVE delays every 401 by ~3 s */
  delayMs: number
  /** injected network failure: close the connection without an answer, or never answer */
  network?: 'reset' | 'hang'
}

export interface RenderOptions {
  acceptGzip: boolean
  /** zlib-wrapped deflate when the client accepts deflate but not gzip (Compress::Zlib::compress) */
  acceptDeflate?: boolean
  /** PVE >= 8.4 adds `message` to error bodies; <= 8.3 does not */
  messageInBody: boolean
}

const JSON_CT = 'application/json;charset=UTF-8'

/** the reason phrase: first line of the message; node refuses control characters in it */
export function reasonPhrase(message: string): string {
  const first = /^(.*)$/m.exec(message)?.[1] ?? ''
  return first.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?')
}

function baseHeaders(status: number): Record<string, string> {
  const date = new Date().toUTCString()
  return {
    'Cache-Control': 'max-age=0',
    Connection: status >= 400 ? 'close' : 'Keep-Alive',
    Date: date,
    Pragma: 'no-cache',
    Server: 'pve-api-daemon/3.0',
    Expires: date,
  }
}

function finish(
  status: number,
  reason: string,
  content: string,
  opts: RenderOptions,
  contentType?: string,
  delayMs = 0,
): SimResponse {
  const headers = baseHeaders(status)
  let body = Buffer.from(content, 'utf8')
  if (contentType) headers['Content-Type'] = contentType
  if (opts.acceptGzip && body.length > 1024) {
    body = gzipSync(body)
    headers['Content-Encoding'] = 'gzip'
  } else if (opts.acceptDeflate && body.length > 1024) {
    body = deflateSync(body)
    headers['Content-Encoding'] = 'deflate'
  }
  // PVE sends no Content-Length for an empty body and closes; 0 keeps node from switching to chunked encoding
  headers['Content-Length'] = String(body.length)
  // a reason phrase with a CR after the first line makes pve-http-server answer a plain 400
  if (/[\r\n]/.test(reason))
    return { status: 400, reason: 'Bad Request', headers: baseHeaders(400), body: Buffer.alloc(0), delayMs }
  return { status, reason, headers, body, delayMs }
}

/** 200 with `{"data": ...}` plus `total` when the handler reported one > 0 */
export function renderData(data: unknown, total: number | undefined, opts: RenderOptions): SimResponse {
  const env: Record<string, unknown> = { data: data === undefined ? null : data }
  if (total) env.total = total
  return finish(200, 'OK', JSON.stringify(env), opts, JSON_CT)
}

/**
 * An error from the API (rest_handler result): `{"data":null,"errors"?,"message"?}`. `message` is used
 * verbatim, so callers pass PVE's text including a trailing newline where Perl's `die "...\n"` has one.
 */
export function renderApiError(
  status: number,
  message: string,
  errors: Record<string, string> | undefined,
  opts: RenderOptions,
): SimResponse {
  const env: Record<string, unknown> = { data: null }
  if (errors && Object.keys(errors).length) env.errors = errors
  if (opts.messageInBody) env.message = message
  return finish(status, reasonPhrase(message), JSON.stringify(env), opts, JSON_CT)
}

/** `$self->error(...)` in AnyEvent.pm and proxied 59x codes: a status line, no body */
export function renderBare(status: number, message: string, opts: RenderOptions, delayMs = 0): SimResponse {
  return finish(status, reasonPhrase(message), '', opts, undefined, delayMs)
}
