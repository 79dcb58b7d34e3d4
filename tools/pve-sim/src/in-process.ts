/**
 * The simulator without a socket: the model and the HTTP layer startSimulator serves (decoding, schema checks,
 * auth, envelopes, faults), answering requests handed to it in the same process through an undici Dispatcher.
 * A client built on undici (as @proxops/pve-client is) runs unchanged over it, without TLS, ports or threads,
 * so unit tests get PVE's behaviour at the cost of a function call.
 */
import { Dispatcher } from 'undici'
import type { ApiHandler, SimRequest } from './http/api.js'

/** undici's SocketError code: what a client sees when PVE drops the connection without an answer */
const RESET_CODE = 'UND_ERR_SOCKET'

const socketError = (message: string): Error => Object.assign(new Error(message), { code: RESET_CODE })

export class SimDispatcher extends Dispatcher {
  #closed = false
  /** the exchanges still waiting for their answer: destroy() drops them, as closing the server drops sockets */
  readonly #open = new Set<(err: Error) => void>()

  constructor(private readonly api: ApiHandler) {
    super()
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (this.#closed) {
      handler.onError?.(socketError('pve-sim: the in-process dispatcher is closed'))
      return false
    }
    void this.#answer(options, handler)
    return true
  }

  /** refuses new requests; the ones under way still get their answer */
  override close(): Promise<void>
  override close(callback: () => void): void
  override close(callback?: () => void): Promise<void> | void {
    this.#closed = true
    if (callback) return void queueMicrotask(callback)
    return Promise.resolve()
  }

  /** refuses new requests and ends the ones under way with a socket error */
  override destroy(): Promise<void>
  override destroy(err: Error | null): Promise<void>
  override destroy(callback: () => void): void
  override destroy(err: Error | null, callback: () => void): void
  override destroy(a?: Error | null | (() => void), b?: () => void): Promise<void> | void {
    this.#closed = true
    const reason = a instanceof Error ? a : socketError('other side closed')
    for (const fail of [...this.#open]) fail(reason)
    const callback = typeof a === 'function' ? a : b
    if (callback) return void queueMicrotask(callback)
    return Promise.resolve()
  }

  async #answer(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): Promise<void> {
    let settled = false
    let abandon: () => void = () => {}
    const abandoned = new Promise<void>((resolve) => (abandon = resolve))
    const fail = (err: Error): void => {
      if (settled) return
      settled = true
      this.#open.delete(fail)
      abandon()
      handler.onError?.(err)
    }
    this.#open.add(fail)
    // the request's abort (signal, timeout) ends the exchange at once, as a closed socket would
    handler.onConnect?.((reason?: Error) => fail(reason ?? new Error('aborted')))
    if (settled) return
    try {
      const req: SimRequest = {
        method: options.method,
        url: options.path,
        headers: headerRecord(options.headers),
        body: bodyBuffer(options.body),
      }
      const r = await this.api.handle(req)
      if (settled) return
      if (r.network === 'reset') return fail(socketError('other side closed'))
      if (r.network === 'hang') return await abandoned
      if (r.delayMs > 0) {
        let timer: NodeJS.Timeout | undefined
        await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, r.delayMs))), abandoned])
        clearTimeout(timer)
        if (settled) return
      }
      settled = true
      this.#open.delete(fail)
      const raw: Buffer[] = []
      for (const [k, v] of Object.entries(r.headers)) raw.push(Buffer.from(k), Buffer.from(v))
      raw.push(Buffer.from('content-length'), Buffer.from(String(r.body.length)))
      handler.onHeaders?.(r.status, raw, () => {}, r.reason)
      if (r.body.length > 0) handler.onData?.(r.body)
      handler.onComplete?.([])
    } catch (err) {
      fail(err instanceof Error ? err : new Error(String(err)))
    }
  }
}

function headerRecord(headers: Dispatcher.DispatchOptions['headers']): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {}
  if (!headers) return out
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) out[String(headers[i]).toLowerCase()] = String(headers[i + 1])
    return out
  }
  const entries: Iterable<[string, unknown]> =
    Symbol.iterator in headers
      ? (headers as Iterable<[string, unknown]>)
      : Object.entries(headers as Record<string, unknown>)
  for (const [k, v] of entries) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v)
  }
  return out
}

function bodyBuffer(body: Dispatcher.DispatchOptions['body']): Buffer {
  if (body === undefined || body === null) return Buffer.alloc(0)
  if (typeof body === 'string') return Buffer.from(body)
  if (Buffer.isBuffer(body)) return body
  if (body instanceof Uint8Array) return Buffer.from(body)
  throw new Error('pve-sim: the in-process dispatcher takes string or buffer bodies only')
}
