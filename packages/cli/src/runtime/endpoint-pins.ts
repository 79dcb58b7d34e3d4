/**
 * Endpoint pinning for credentials from a SOPS file (docs/safety.md, section 8). Once a cluster's SOPS credentials
 * have been used, the endpoint they went to (the base-url's origin and the configured certificate fingerprint) is
 * recorded in the operator's data dir; later runs refuse another endpoint for the same credentials until the
 * operator accepts it with `--accept-endpoint <cluster>`. A commit alone (which needs no age key) therefore cannot
 * send the token somewhere new. The pins are keyed by a hash of the credentials (then by cluster entry), so renaming
 * or copying an entry does not start afresh; they never hold a secret.
 *
 * Only what worked is pinned: a pin is recorded after the first answer of the endpoint to an authenticated read
 * over a verified connection (`PinRecorder.answered`), never for an endpoint that did not answer (a wrong port, a
 * certificate that was not accepted) and never under `tls.insecure` (nothing was verified). A first mistake is
 * therefore never pinned: fixing it needs no `--accept-endpoint`.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { CliError, settingProblem } from '../errors.js'
import { defaultDataDir, expand } from '../config/resolve.js'
import type { Credentials } from '../config/types.js'

export const PINS_FILE = 'endpoint-pins.json'

export interface Pin {
  /** `https://host:port`, host lower-cased */
  endpoint: string
  /** the configured `tls.fingerprint`, or null when the CA validates */
  fingerprint: string | null
}

export interface PinnedCluster {
  name: string
  file: string
  baseUrl: string
  tls: { fingerprint?: string; insecure?: boolean }
  credentials: Credentials
}

/** A pin this run will record once the endpoint has answered (first use of the credentials, or accepted). */
export interface PendingPin {
  cluster: string
  /** the credentials' key in the pin file */
  key: string
  pin: Pin
  accepted: boolean
}

/** The data dir the operator chose (`--data-dir`), else the default under HOME; never the repository's setting. */
export function pinDir(flagDataDir: string | undefined, home: string, cwd: string): string {
  return flagDataDir === undefined ? defaultDataDir(home) : expand(flagDataDir, home, cwd)
}

export function endpointOrigin(url: string): string {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.hostname.toLowerCase()}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`
  } catch {
    return `invalid:${url}`
  }
}

/** A stable, one-way key of the credentials (a SHA-256 of the identity and the secret). */
function credentialKey(c: Credentials): string {
  const parts = c.method === 'token' ? ['token', c.tokenId, c.secret] : ['ticket', c.user, c.password]
  return createHash('sha256')
    .update(`proxops-endpoint-pin\0${parts.join('\0')}`)
    .digest('hex')
}

/** Pins by credential key, then by the cluster entry that uses those credentials. */
type Pins = Record<string, Record<string, Pin>>

const isPin = (v: unknown): v is Pin =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as Pin).endpoint === 'string' &&
  ((v as Pin).fingerprint === null || typeof (v as Pin).fingerprint === 'string')

function readPins(file: string): Pins {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw new CliError('CONFIG_INVALID', `cannot read ${file}: ${(error as Error).message}`)
  }
  try {
    const parsed = JSON.parse(text) as { pins?: unknown }
    if (typeof parsed !== 'object' || parsed === null || typeof parsed.pins !== 'object' || parsed.pins === null)
      throw new Error('no "pins" object')
    for (const byCluster of Object.values(parsed.pins as Record<string, unknown>)) {
      if (typeof byCluster !== 'object' || byCluster === null || !Object.values(byCluster).every(isPin))
        throw new Error('a pin is not {endpoint, fingerprint}')
    }
    return parsed.pins as Pins
  } catch (error) {
    throw new CliError(
      'CONFIG_INVALID',
      `${file} is not a valid endpoint pin file (${(error as Error).message}); fix or remove it, then run again with --accept-endpoint`,
    )
  }
}

const byName = <T>(record: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

function writePins(file: string, pins: Pins): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const sorted = byName(Object.fromEntries(Object.entries(pins).map(([k, v]) => [k, byName(v)])))
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, `${JSON.stringify({ version: 1, pins: sorted }, null, 2)}\n`, { mode: 0o600 })
  renameSync(tmp, file)
}

const samePin = (a: Pin, b: Pin): boolean => a.endpoint === b.endpoint && a.fingerprint === b.fingerprint

/** What differs between two pins, in words (`the port changed from 8006 to 8007`). */
export function pinChange(from: Pin, to: Pin): string {
  const parts: string[] = []
  const a = new URL(from.endpoint)
  const b = new URL(to.endpoint)
  if (a.protocol !== b.protocol)
    parts.push(`the scheme changed from ${a.protocol.replace(':', '')} to ${b.protocol.replace(':', '')}`)
  if (a.hostname !== b.hostname) parts.push(`the host changed from ${a.hostname} to ${b.hostname}`)
  if (a.port !== b.port) parts.push(`the port changed from ${a.port} to ${b.port}`)
  if (from.fingerprint !== to.fingerprint)
    parts.push(
      `the certificate fingerprint changed from ${from.fingerprint ?? '(none: the CA validates)'} to ${to.fingerprint ?? '(none: the CA validates)'}`,
    )
  return parts.join(', ')
}

/** The one command that accepts a refused endpoint: read-only, and it pins only once the endpoint has answered. */
export const acceptCommand = (cluster: string): string =>
  `proxops diff --cluster ${cluster} --accept-endpoint ${cluster}`

/**
 * Why `want` is refused: the setting at fault and exactly what changed. `own`: this entry's pin; `others`: the
 * entries whose pins hold the same credentials.
 */
function refusal(
  c: PinnedCluster,
  want: Pin,
  own: Pin | undefined,
  others: ReadonlyArray<[string, Pin]>,
): { field: string; message: string } {
  if (own) {
    const field = own.endpoint === want.endpoint ? 'tls.fingerprint' : 'base-url'
    return {
      field,
      message: `${pinChange(own, want)} since its SOPS credentials were pinned to ${own.endpoint}${own.fingerprint ? ` (certificate ${own.fingerprint})` : ''}`,
    }
  }
  const sameEndpoint = others.find(([, p]) => p.endpoint === want.endpoint)
  if (sameEndpoint)
    return {
      field: 'tls.fingerprint',
      message: `this entry is new, and its SOPS credentials are pinned to ${want.endpoint} by cluster ${sameEndpoint[0]} with another certificate: ${pinChange(sameEndpoint[1], want)}`,
    }
  const where = others.map(([name, p]) => `${p.endpoint} (cluster ${name})`).join(', ')
  return {
    field: 'base-url',
    message: `this entry is new and would send SOPS credentials that are pinned to ${where} to ${want.endpoint}`,
  }
}

/**
 * Checks every cluster against the pins of its credentials, before any request; refuses a committed endpoint that
 * differs from the pinned one, saying what changed and the command that accepts it. Returns the pins to record once
 * each endpoint has answered: credentials seen for the first time (wherever this run uses them: one password for
 * two standalone nodes is common), an endpoint the operator accepts, and a new or renamed entry at an endpoint its
 * credentials are already pinned to. Writes nothing.
 */
export function checkPinnedEndpoints(
  clusters: readonly PinnedCluster[],
  options: { dir: string; accept: readonly string[] },
): PendingPin[] {
  if (clusters.length === 0) return []
  const file = path.join(options.dir, PINS_FILE)
  const pins = readPins(file)
  const pending: PendingPin[] = []
  for (const c of clusters) {
    const key = credentialKey(c.credentials)
    const want: Pin = { endpoint: endpointOrigin(c.baseUrl), fingerprint: c.tls.fingerprint ?? null }
    const entries = pins[key] ?? {}
    const own = entries[c.name]
    if (own && samePin(own, want)) continue
    const others = Object.entries(entries).filter(([name]) => name !== c.name)
    const accepted = options.accept.includes(c.name)
    const known = Object.keys(entries).length > 0
    const allowed = accepted || !known || (own === undefined && others.some(([, p]) => samePin(p, want)))
    if (!allowed) {
      const why = refusal(c, want, own, others)
      throw new CliError(
        'INSECURE_ENDPOINT',
        settingProblem(
          'endpoint-refused',
          c.file,
          `pve.clusters.${c.name}.${why.field}`,
          `${why.message} (${file}); if that is intended, accept it with: ${acceptCommand(c.name)}`,
        ),
      )
    }
    // nothing was verified under tls.insecure: there is nothing to pin
    if (!c.tls.insecure) pending.push({ cluster: c.name, key, pin: want, accepted })
  }
  return pending
}

/** Records a pending pin (read, change, write: other entries stay as they are). */
export function recordPin(dir: string, pending: PendingPin): void {
  const file = path.join(dir, PINS_FILE)
  const pins = readPins(file)
  ;(pins[pending.key] ??= {})[pending.cluster] = pending.pin
  writePins(file, pins)
}

/**
 * The pins of one run, recorded as each endpoint answers: `answered(cluster)` is called on every successful
 * authenticated read (runtime/clients.ts); the first one records that cluster's pending pin.
 */
export class PinRecorder {
  readonly #pending: Map<string, PendingPin>
  constructor(
    readonly dir: string,
    pending: readonly PendingPin[],
    readonly onPinned: (pending: PendingPin) => void = () => undefined,
  ) {
    this.#pending = new Map(pending.map((p) => [p.cluster, p]))
  }

  answered(cluster: string): void {
    const pending = this.#pending.get(cluster)
    if (!pending) return
    this.#pending.delete(cluster)
    recordPin(this.dir, pending)
    this.onPinned(pending)
  }

  /** clusters whose pin waits for an answer */
  get waiting(): string[] {
    return [...this.#pending.keys()]
  }
}
