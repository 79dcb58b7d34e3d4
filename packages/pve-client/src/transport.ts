import { EventEmitter } from 'node:events'
import { promisify } from 'node:util'
import { gunzip, gunzipSync, inflate, inflateSync } from 'node:zlib'
import type { Dispatcher } from 'undici'
import { type AuthOptions, type AuthProvider, ticketAuth, tokenAuth } from './auth.js'
import { classifyHttpFailure, classifyNetworkFailure } from './classify.js'
import { PveError, type PveErrorCode, PveParamError } from './errors.js'
import { Limiter } from './wire/limit.js'
import { type BackoffOptions, abortedError, backoffDelay, sleep } from './retry.js'
import { scrub } from './scrub.js'
import { type Logger, type TlsOptions, createDispatcher, sendRequest } from './tls.js'
import { WireError } from './wire/errors.js'
import { baseUrlProblem, normaliseBaseUrl } from './wire/url.js'
import { type ParamValue, encodeParams } from './wire/form.js'

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'
export type Params = Readonly<Record<string, ParamValue>>

/** Reported once per HTTP attempt, for metrics. `path` is the template, so label cardinality stays small. */
export interface RequestEvent {
  method: Method
  path: string
  /** HTTP status; undefined when no answer arrived (network, TLS, timeout, abort) */
  status: number | undefined
  latencyMs: number
  /** 1 for the first try, 2+ for retries of reads and the re-login retry */
  attempt: number
  /** the error class when the attempt failed */
  errorCode?: PveErrorCode
}

/**
 * What the client is doing while a caller waits, reported as it happens (a CLI shows it, a daemon logs it):
 * a read about to be retried after a transient failure (connect timeout, 5xx), or a request that has had no
 * answer for `waitNoticeMs`.
 */
export type ClientNotice =
  | {
      type: 'retry'
      method: Method
      path: string
      /** the attempt about to start (2 for the first retry) and the most there will be */
      attempt: number
      attempts: number
      delayMs: number
      /** the failure being retried, secrets scrubbed */
      reason: string
    }
  | { type: 'waiting'; method: Method; path: string; elapsedMs: number; timeoutMs: number }

export interface TransportOptions {
  /** `https://pve.example:8006` (with or without `/api2/json`) */
  baseUrl: string
  auth: AuthOptions
  tls?: TlsOptions
  /** per HTTP request, default 30 s */
  timeoutMs?: number
  /** concurrent requests per client, default 8 */
  maxInFlight?: number
  /** automatic retries of idempotent reads (GET) on transient failures; writes are never retried */
  retry?: BackoffOptions
  onRequest?: (event: RequestEvent) => void
  /** retries and long waits, as they happen */
  onNotice?: (notice: ClientNotice) => void
  /** a request without an answer after this long is reported through `onNotice` (default 5 s) */
  waitNoticeMs?: number
  logger?: Logger
  /** clock, injectable for ticket-renewal tests */
  now?: () => number
  /**
   * an undici Dispatcher to send through instead of the Agent built from `tls` (a proxy agent, a mock, the
   * simulator's in-process dispatcher); the caller closes it
   */
  dispatcher?: Dispatcher
  /**
   * largest answer accepted, in bytes, both as sent and after gzip/deflate decoding; default 64 MiB (a
   * `/cluster/resources` of 10,000 guests is about 5 MB). A larger answer fails with PVE_PROTOCOL, unretried.
   */
  maxResponseBytes?: number
}

/** See TransportOptions.maxResponseBytes. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024

export interface CallSpec {
  method: Method
  /** template such as `/nodes/{node}/qemu/{vmid}/config` */
  path: string
  pathParams?: Readonly<Record<string, string | number>>
  query?: Params
  body?: Params
  signal?: AbortSignal
  timeoutMs?: number
  /** return the whole envelope (`{data, total}`) instead of `data` */
  envelope?: boolean
}

/** Parameter names whose values are secrets; scrubbed from any message PVE echoes them in. */
const SENSITIVE_PARAM = /pass|secret|token|keyring|encryption-key|master-pubkey/i

/**
 * HTTP transport: undici's `Agent.request()` straight onto the pinned/verified TLS connections. Handles auth
 * headers, the `{data}` envelope, error classification, the in-flight limit, read retries and the request hook.
 *
 * Not WHATWG fetch (nor ky over it): fetch builds a Request, a Response, web streams and abort signals per
 * call, which cost several times the CPU of the exchange itself; a `diff` makes one request per guest.
 */
export class Transport {
  readonly #base: string
  /** `https://host:port` and `/api2/json` (or a prefix before it) of #base */
  readonly #origin: string
  readonly #prefix: string
  readonly #dispatcher: Dispatcher
  readonly #ownsDispatcher: boolean
  readonly #auth: AuthProvider
  readonly #limiter: Limiter
  readonly #timeoutMs: number
  readonly #retry: Required<Pick<BackoffOptions, 'retries'>> & BackoffOptions
  readonly #onRequest: ((event: RequestEvent) => void) | undefined
  readonly #onNotice: ((notice: ClientNotice) => void) | undefined
  readonly #waitNoticeMs: number
  readonly #logger: Logger | undefined
  readonly #maxBytes: number
  #writes = 0

  constructor(options: TransportOptions) {
    this.#base = apiBaseUrl(options.baseUrl)
    const base = new URL(this.#base)
    this.#origin = base.origin
    this.#prefix = base.pathname
    this.#logger = options.logger
    this.#ownsDispatcher = options.dispatcher === undefined
    const maxInFlight = options.maxInFlight ?? 8
    if (!Number.isInteger(maxInFlight) || maxInFlight < 1)
      throw new PveError('PVE_CONFIG', 'maxInFlight must be a positive integer')
    this.#limiter = new Limiter(maxInFlight)
    this.#dispatcher =
      options.dispatcher ?? createDispatcher(options.tls, options.logger, { connections: this.#limiter.limit })
    this.#timeoutMs = options.timeoutMs ?? 30_000
    this.#retry = { retries: 3, ...options.retry }
    this.#onRequest = options.onRequest
    this.#onNotice = options.onNotice
    this.#waitNoticeMs = options.waitNoticeMs ?? 5_000
    this.#maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
    this.#auth =
      options.auth.type === 'token'
        ? tokenAuth(options.auth)
        : ticketAuth(options.auth, (params, signal) => this.#login(params, signal), options.now)
  }

  /** Write requests (POST/PUT/DELETE) sent so far, logins excluded. */
  get writes(): number {
    return this.#writes
  }

  get maxInFlight(): number {
    return this.#limiter.limit
  }

  async close(): Promise<void> {
    if (this.#ownsDispatcher) await this.#dispatcher.close()
  }

  /** A GET-only view: what read-only clients hold, so they have no way to send a write. */
  readonly get = (spec: Omit<CallSpec, 'method' | 'body'>): Promise<unknown> => {
    // built field by field, so nothing a caller smuggles in (a method, a body) reaches call()
    const { path, pathParams, query, signal, timeoutMs, envelope } = spec
    return this.call({ method: 'GET', path, pathParams, query, signal, timeoutMs, envelope })
  }

  async call(spec: CallSpec): Promise<unknown> {
    let url: string
    let body: string | undefined
    try {
      url = this.#url(spec)
      body = spec.body === undefined ? undefined : encodeParams(spec.body).toString()
    } catch (err) {
      throw localRefusal(err, spec)
    }
    const secrets = () => [...this.#auth.secrets(), ...sensitiveValues(spec.body), ...sensitiveValues(spec.query)]
    let reloggedIn = false
    for (let attempt = 1; ; attempt++) {
      let headers: Record<string, string>
      try {
        // a failed login is final: it is not answered with another login
        headers = await this.#auth.headers(spec.method, spec.signal)
      } catch (raw) {
        const err = raw instanceof PveError ? raw : classifyNetworkFailure(raw, 'POST', '/access/ticket')
        scrubError(err, secrets())
        throw err
      }
      try {
        return await this.#attempt(spec, url, body, headers, attempt)
      } catch (raw) {
        const err = raw instanceof PveError ? raw : classifyNetworkFailure(raw, spec.method, spec.path)
        scrubError(err, secrets())
        if (err.code === 'PVE_AUTH' && err.status === 401 && !reloggedIn && this.#auth.invalidate()) {
          // PVE checks auth before running the handler, so repeating even a write after a 401 is safe.
          reloggedIn = true
          this.#logger?.debug?.('PVE ticket rejected; logging in again', { event: 'pve.auth.relogin', path: spec.path })
          continue
        }
        if (err.code === 'PVE_TRANSIENT' && spec.method === 'GET' && attempt <= this.#retry.retries) {
          const delay = backoffDelay(attempt, this.#retry)
          this.#logger?.debug?.(`retrying read after transient failure: ${err.message}`, {
            event: 'pve.request.retry',
            path: spec.path,
            attempt,
            delayMs: delay,
          })
          this.#notice({
            type: 'retry',
            method: spec.method,
            path: spec.path,
            attempt: attempt + 1,
            attempts: this.#retry.retries + 1,
            delayMs: delay,
            reason: err.message,
          })
          await sleep(delay, spec.signal)
          continue
        }
        throw err
      }
    }
  }

  async #attempt(
    spec: CallSpec,
    path: string,
    body: string | undefined,
    headers: Record<string, string>,
    attempt: number,
  ): Promise<unknown> {
    const release = await this.#limiter.acquire(spec.signal).catch(() => {
      throw abortedError(spec.signal, `${spec.method} ${spec.path}`)
    })
    const started = performance.now()
    let status: number | undefined
    let errorCode: PveErrorCode | undefined
    try {
      if (spec.method !== 'GET' && spec.path !== '/access/ticket') this.#writes++
      const res = await this.#exchange(spec, path, body, headers)
      status = res.status
      const json = parseJson(res.text)
      if (status >= 200 && status < 300) {
        if (json === undefined || json === null || typeof json !== 'object' || !('data' in json)) {
          throw new PveError('PVE_PROTOCOL', `${spec.method} ${spec.path}: answer is not a PVE {data} envelope`, {
            status,
            method: spec.method,
            path: spec.path,
          })
        }
        return spec.envelope ? json : json.data
      }
      throw classifyHttpFailure({
        status,
        statusText: res.statusText,
        body: json ?? null,
        method: spec.method,
        path: spec.path,
      })
    } catch (err) {
      errorCode = err instanceof PveError ? err.code : 'PVE_TRANSIENT'
      throw err
    } finally {
      release()
      this.#report({
        method: spec.method,
        path: spec.path,
        status,
        latencyMs: performance.now() - started,
        attempt,
        errorCode,
      })
    }
  }

  /**
   * One HTTP exchange: status, reason phrase and the decoded body text. The timeout covers the whole exchange
   * (headers and body); a caller's abort ends it at once.
   */
  async #exchange(
    spec: CallSpec,
    path: string,
    body: string | undefined,
    headers: Record<string, string>,
  ): Promise<{ status: number; statusText: string; text: string }> {
    const ms = spec.timeoutMs ?? this.#timeoutMs
    // undici takes an EventEmitter as its abort signal: far cheaper per request than an AbortController
    const stop = new EventEmitter()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      stop.emit('abort')
    }, ms)
    const onAbort = (): void => void stop.emit('abort')
    spec.signal?.addEventListener('abort', onAbort, { once: true })
    // said while it waits, so a slow connect or a busy PVE is not a silent pause of up to `ms`
    const waiting =
      this.#onNotice && this.#waitNoticeMs < ms
        ? setTimeout(
            () =>
              this.#notice({
                type: 'waiting',
                method: spec.method,
                path: spec.path,
                elapsedMs: this.#waitNoticeMs,
                timeoutMs: ms,
              }),
            this.#waitNoticeMs,
          )
        : undefined
    waiting?.unref()
    try {
      spec.signal?.throwIfAborted()
      const res = await sendRequest(this.#dispatcher, {
        origin: this.#origin,
        path,
        method: spec.method,
        headers: {
          accept: 'application/json',
          'accept-encoding': 'gzip',
          ...headers,
          ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        ...(body === undefined ? {} : { body }),
        signal: stop,
        // the timer above bounds the exchange; undici's own idle timers would only race it
        headersTimeout: 0,
        bodyTimeout: 0,
      })
      const tooLarge = (): PveError =>
        new PveError(
          'PVE_PROTOCOL',
          `${spec.method} ${spec.path}: answer larger than ${this.#maxBytes} bytes; refused`,
          {
            status: res.statusCode,
            method: spec.method,
            path: spec.path,
          },
        )
      const raw = await readBody(res.body, this.#maxBytes, tooLarge)
      const text = (await decompress(raw, res.headers['content-encoding'], this.#maxBytes, tooLarge)).toString('utf8')
      return { status: res.statusCode, statusText: res.statusText ?? '', text }
    } catch (err) {
      if (err instanceof PveError) throw err
      throw this.#fetchFailure(timedOut ? new TimeoutFailure() : err, spec)
    } finally {
      clearTimeout(timer)
      if (waiting) clearTimeout(waiting)
      spec.signal?.removeEventListener('abort', onAbort)
    }
  }

  #notice(notice: ClientNotice): void {
    try {
      this.#onNotice?.(notice)
    } catch {
      // a failing observer must not change what is sent to PVE
    }
  }

  #fetchFailure(err: unknown, spec: CallSpec): PveError {
    if (spec.signal?.aborted) return abortedError(spec.signal, `${spec.method} ${spec.path}`)
    if (err instanceof Error && err.name === 'TimeoutError') {
      const ms = spec.timeoutMs ?? this.#timeoutMs
      const maybe = spec.method === 'GET' ? '' : '; the change may still have been applied'
      return new PveError('PVE_TRANSIENT', `${spec.method} ${spec.path}: no answer within ${ms} ms${maybe}`, {
        method: spec.method,
        path: spec.path,
      })
    }
    // Not passing `err` on as a cause: ky/undici errors can reference the Request and its auth headers.
    const classified = classifyNetworkFailure(err, spec.method, spec.path)
    return new (classified.constructor as typeof PveError)(classified.code, classified.message, {
      method: spec.method,
      path: spec.path,
    })
  }

  #report(event: RequestEvent): void {
    if (!this.#onRequest) return
    try {
      this.#onRequest(event)
    } catch {
      // a metrics hook must never break a request
    }
  }

  async #login(params: Record<string, string>, signal?: AbortSignal): Promise<unknown> {
    try {
      const body = encodeParams(params).toString()
      return await this.#attempt(
        { method: 'POST', path: '/access/ticket', ...(signal ? { signal } : {}) },
        `${this.#prefix}/access/ticket`,
        body,
        {},
        1,
      )
    } catch (err) {
      if (err instanceof PveError) scrubError(err, [...Object.values(params)])
      throw err
    }
  }

  /** the request target: path below the origin, with the query string */
  #url(spec: CallSpec): string {
    const path = spec.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const v = spec.pathParams?.[name]
      if (v === undefined || v === '')
        throw new PveError('PVE_CONFIG', `${spec.method} ${spec.path}: missing path parameter '${name}'`)
      // encodeURIComponent leaves `.` alone: a node named `..` would climb to another route
      if (v === '.' || v === '..')
        throw new PveError(
          'PVE_CONFIG',
          `${spec.method} ${spec.path}: path parameter '${name}' is a dot segment; refused`,
        )
      return encodeURIComponent(String(v))
    })
    const query = encodeParams(spec.query).toString()
    return `${this.#prefix}${path}${query === '' ? '' : `?${query}`}`
  }
}

/** The request prefix: the normalised base URL plus `/api2/json`; PVE_CONFIG for a URL baseUrlProblem refuses. */
export function apiBaseUrl(input: string): string {
  const problem = baseUrlProblem(input)
  if (problem !== undefined) throw new PveError('PVE_CONFIG', `baseUrl ${problem}`)
  return `${normaliseBaseUrl(input)}/api2/json`
}

/** A request refused before sending (a parameter our codecs reject): PVE_PARAM naming the parameter. */
function localRefusal(err: unknown, spec: CallSpec): PveError {
  if (err instanceof PveError) return err
  if (err instanceof WireError) {
    const e = new PveParamError('PVE_PARAM', `${spec.method} ${spec.path}: refused before sending: ${err.message}`, {
      method: spec.method,
      path: spec.path,
    })
    e.params = { [err.field ?? 'request']: err.message }
    return e
  }
  throw err
}

class TimeoutFailure extends Error {
  override readonly name = 'TimeoutError'
}

/** The body as sent, refused (and the connection dropped) as soon as it passes `max` bytes. */
async function readBody(body: Dispatcher.ResponseData['body'], max: number, tooLarge: () => PveError): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > max) {
      body.destroy()
      throw tooLarge()
    }
    chunks.push(chunk)
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)
}

const gunzipAsync = promisify(gunzip)
const inflateAsync = promisify(inflate)
/** Bodies above this are inflated on the thread pool rather than on the event loop. */
const INFLATE_SYNC_MAX = 64 * 1024

/** pveproxy gzips answers over 1 KiB when asked to (smaller on the wire; the CLI may be far from PVE). */
async function decompress(
  raw: Buffer,
  encoding: string | string[] | undefined,
  max: number,
  tooLarge: () => PveError,
): Promise<Buffer> {
  const enc = (Array.isArray(encoding) ? encoding.join(',') : (encoding ?? '')).trim().toLowerCase()
  if (enc === '' || enc === 'identity' || raw.length === 0) return raw
  // zlib stops inflating at maxOutputLength (a small gzip body can inflate a thousandfold)
  const options = { maxOutputLength: max }
  try {
    if (enc === 'gzip' || enc === 'x-gzip')
      return raw.length > INFLATE_SYNC_MAX ? await gunzipAsync(raw, options) : gunzipSync(raw, options)
    if (enc === 'deflate')
      return raw.length > INFLATE_SYNC_MAX ? await inflateAsync(raw, options) : inflateSync(raw, options)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge()
    throw new PveError('PVE_PROTOCOL', `answer is not valid ${enc}: ${(err as Error).message}`)
  }
  throw new PveError('PVE_PROTOCOL', `unsupported Content-Encoding ${JSON.stringify(enc)}`)
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

function sensitiveValues(params: Params | undefined): string[] {
  if (!params) return []
  return Object.entries(params)
    .filter(([k, v]) => SENSITIVE_PARAM.test(k) && typeof v === 'string')
    .map(([, v]) => v as string)
}

function scrubError(err: PveError, secrets: string[]): void {
  err.message = scrub(err.message, secrets)
  // the stack was rendered with the original message
  if (err.stack !== undefined) err.stack = scrub(err.stack, secrets)
  if (err.pveMessage !== undefined) (err as { pveMessage: string }).pveMessage = scrub(err.pveMessage, secrets)
  const params = (err as { params?: Record<string, string> }).params
  if (params) {
    ;(err as unknown as { params: Record<string, string> }).params = Object.fromEntries(
      Object.entries(params).map(([k, v]) => [k, scrub(v, secrets)]),
    )
  }
}
