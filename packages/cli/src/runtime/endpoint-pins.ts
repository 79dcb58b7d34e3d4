/**
 * Endpoint pinning for credentials from a SOPS file (docs/safety.md, section 8). The first time a cluster's
 * SOPS credentials are used, the endpoint they go to (the base-url's origin and the configured certificate
 * fingerprint) is recorded in the operator's data dir; later runs refuse another endpoint for the same
 * credentials until the operator accepts it with `--accept-endpoint <cluster>`. A commit alone (which needs no
 * age key) therefore cannot send the token somewhere new. The pins are keyed by a hash of the credentials (then
 * by cluster entry), so renaming or copying an entry does not start afresh; they never hold a secret.
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
  tls: { fingerprint?: string }
  credentials: Credentials
}

export interface PinOutcome {
  cluster: string
  /** `pinned`: first use (or accepted by the operator); `matched`: as pinned */
  result: 'pinned' | 'matched'
  pin: Pin
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

/** Why `want` is refused, given the pins of its credentials (those of this entry first): the setting and why. */
function mismatch(c: PinnedCluster, want: Pin, pinned: readonly Pin[]): { field: string; message: string } {
  const sameEndpoint = pinned.find((p) => p.endpoint === want.endpoint)
  if (sameEndpoint)
    return {
      field: 'tls.fingerprint',
      message: `${want.fingerprint ?? '(none)'} is not the certificate its SOPS credentials were pinned to (${sameEndpoint.fingerprint ?? '(none)'})`,
    }
  const endpoints = [...new Set(pinned.map((p) => p.endpoint))].join(', ')
  return {
    field: 'base-url',
    message: `${c.baseUrl} is not the endpoint its SOPS credentials were pinned to (${endpoints})`,
  }
}

/**
 * Checks every cluster against the pins of its credentials, pinning first uses and the clusters named by
 * `accept`; refuses before any request when a committed endpoint differs from the pinned one. Credentials seen
 * for the first time are pinned wherever this run uses them (one password for two standalone nodes is common);
 * once pinned, an entry keeps its endpoint, and a new or renamed entry may only use an endpoint those
 * credentials are already pinned to.
 */
export function checkPinnedEndpoints(
  clusters: readonly PinnedCluster[],
  options: { dir: string; accept: readonly string[] },
): PinOutcome[] {
  if (clusters.length === 0) return []
  const file = path.join(options.dir, PINS_FILE)
  const pins = readPins(file)
  const known = new Set(Object.keys(pins).filter((k) => Object.keys(pins[k] ?? {}).length > 0))
  const outcomes: PinOutcome[] = []
  let changed = false
  for (const c of clusters) {
    const key = credentialKey(c.credentials)
    const want: Pin = { endpoint: endpointOrigin(c.baseUrl), fingerprint: c.tls.fingerprint ?? null }
    const entries = (pins[key] ??= {})
    const own = entries[c.name]
    if (own && samePin(own, want)) {
      outcomes.push({ cluster: c.name, result: 'matched', pin: want })
      continue
    }
    const pinned = Object.values(entries)
    const allowed =
      options.accept.includes(c.name) || !known.has(key) || (own === undefined && pinned.some((p) => samePin(p, want)))
    if (!allowed) {
      const why = mismatch(c, want, own ? [own] : pinned)
      throw new CliError(
        'INSECURE_ENDPOINT',
        settingProblem(
          'endpoint-refused',
          c.file,
          `pve.clusters.${c.name}.${why.field}`,
          `${why.message} in ${file}; if the cluster really moved, run once with --accept-endpoint ${c.name}`,
        ),
      )
    }
    entries[c.name] = want
    changed = true
    outcomes.push({ cluster: c.name, result: 'pinned', pin: want })
  }
  if (changed) writePins(file, pins)
  return outcomes
}
