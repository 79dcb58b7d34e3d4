import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createSecureContext, type TLSSocket } from 'node:tls'
import type * as Undici from 'undici'

// undici's index loads its whole fetch/WebSocket/cookie stack (~100-150 ms of a CLI start); the client needs
// only the Agent and the TLS connector, so it loads those two modules (the same objects the index exports).
const require = createRequire(import.meta.url)
const Agent = require('undici/lib/dispatcher/agent.js') as typeof Undici.Agent
type Agent = Undici.Agent
const buildConnector = require('undici/lib/core/connect.js') as typeof Undici.buildConnector
// the index mixes `request()` into Dispatcher.prototype; without the index it is called with the agent as `this`
const requestApi = require('undici/lib/api/api-request.js') as (
  this: Undici.Dispatcher,
  options: Undici.Dispatcher.RequestOptions,
) => Promise<Undici.Dispatcher.ResponseData>

/** `dispatcher.request(options)`, for any undici dispatcher (ours or a caller's). */
export function sendRequest(
  dispatcher: Undici.Dispatcher,
  options: Undici.Dispatcher.RequestOptions,
): Promise<Undici.Dispatcher.ResponseData> {
  return requestApi.call(dispatcher, options)
}
import { PveError } from './errors.js'

export interface TlsOptions {
  /** A CA certificate: PEM text, or the path of a PEM file (e.g. `/etc/pve/pve-root-ca.pem`). */
  ca?: string
  /** The server certificate's SHA-256 fingerprint as PVE shows it (`AA:BB:...`); colons and case are optional. */
  fingerprint?: string
  /** Skip all certificate checks. Only when asked for; the client logs a warning. */
  insecure?: boolean
}

export interface Logger {
  warn(message: string, meta?: Readonly<Record<string, unknown>>): void
  debug?(message: string, meta?: Readonly<Record<string, unknown>>): void
}

/** `aa:bb..` / `AABB..` -> `AA:BB:..` (64 hex digits), or a PVE_CONFIG error. */
export function normaliseFingerprint(input: string): string {
  const hex = input.replace(/[:\s]/g, '').toUpperCase()
  if (!/^[0-9A-F]{64}$/.test(hex)) {
    throw new PveError('PVE_CONFIG', 'tls.fingerprint must be a SHA-256 fingerprint (64 hex digits, e.g. AA:BB:...)')
  }
  return hex.match(/../g)!.join(':')
}

/** PEM text as is; anything else is read as a file path. */
export function loadCa(ca: string): string {
  if (ca.includes('-----BEGIN')) return ca
  try {
    return readFileSync(ca, 'utf8')
  } catch (err) {
    throw new PveError(
      'PVE_CONFIG',
      `tls.ca: cannot read CA file ${JSON.stringify(ca)}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    )
  }
}

/**
 * The undici Agent the transport sends every request through. Verification is on unless `insecure` (which
 * warns). A fingerprint pin wraps undici's connector and compares the peer certificate after the handshake
 * (Node's `checkServerIdentity` runs only after chain validation, so it cannot pin a self-signed certificate).
 * With a CA as well, both must hold.
 */
export function createDispatcher(tls: TlsOptions = {}, logger?: Logger, pool: { connections?: number } = {}): Agent {
  const ca = tls.ca === undefined ? undefined : loadCa(tls.ca)
  const pin = tls.fingerprint === undefined ? undefined : normaliseFingerprint(tls.fingerprint)
  if (tls.insecure && pin === undefined) {
    logger?.warn(
      'TLS certificate verification is disabled (insecure); anyone on the network path can impersonate PVE',
      {
        event: 'pve.tls.insecure',
      },
    )
  }
  // A pin replaces chain validation unless a CA was given too.
  const verify = !tls.insecure && (pin === undefined || ca !== undefined)
  const base = buildConnector({
    rejectUnauthorized: verify,
    // one context (the CA store) for every socket: Node builds one per connection otherwise, ~5 ms of CPU each
    secureContext: createSecureContext(ca === undefined ? {} : { ca }),
    // resumed sessions must still expose the peer certificate to the pin check
    ...(pin === undefined ? {} : { maxCachedSessions: 0 }),
  })
  // at most `connections` sockets per origin: with one request per socket, more would only add TLS handshakes
  const limit = pool.connections === undefined ? {} : { connections: pool.connections }
  if (pin === undefined) return new Agent({ ...limit, connect: base })
  return new Agent({
    ...limit,
    connect(opts, cb) {
      base(opts, (err, socket) => {
        if (err) return cb(err, null)
        const got = (socket as TLSSocket).getPeerCertificate?.()?.fingerprint256
        if (got !== pin) {
          socket.destroy()
          const error = Object.assign(
            new Error(`PVE certificate fingerprint mismatch: expected ${pin}, got ${got ?? 'none'}`),
            {
              code: 'ERR_PVE_FINGERPRINT',
            },
          )
          return cb(error, null)
        }
        cb(null, socket)
      })
    },
  })
}
