/**
 * Endpoint pinning for credentials from a SOPS file (docs/safety.md, section 8). The first time a cluster's
 * SOPS credentials are used, the endpoint they go to (the base-url's origin and the configured certificate
 * fingerprint) is recorded in the operator's data dir; later runs refuse another endpoint for the same
 * credentials until the operator accepts it with `--accept-endpoint <cluster>`. A commit alone (which needs no
 * age key) therefore cannot send the token somewhere new. The pins are keyed by a hash of the credentials, not
 * by the cluster's name, so renaming or copying an entry does not start afresh; they never hold a secret.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { CliError } from '../errors.js'
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
  if (flagDataDir === undefined) return path.join(home, '.local', 'share', 'proxops')
  const tilde =
    flagDataDir === '~' ? home : flagDataDir.startsWith('~/') ? path.join(home, flagDataDir.slice(2)) : flagDataDir
  return path.resolve(cwd, tilde)
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

function readPins(file: string): Record<string, Pin> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw new CliError('CONFIG_INVALID', `cannot read ${file}: ${(error as Error).message}`)
  }
  try {
    const parsed = JSON.parse(text) as { pins?: Record<string, Pin> }
    if (typeof parsed !== 'object' || parsed === null || typeof parsed.pins !== 'object' || parsed.pins === null)
      throw new Error('no "pins" object')
    return parsed.pins
  } catch (error) {
    throw new CliError(
      'CONFIG_INVALID',
      `${file} is not a valid endpoint pin file (${(error as Error).message}); fix or remove it, then run again with --accept-endpoint`,
    )
  }
}

function writePins(file: string, pins: Record<string, Pin>): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const sorted = Object.fromEntries(Object.entries(pins).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, `${JSON.stringify({ version: 1, pins: sorted }, null, 2)}\n`, { mode: 0o600 })
  renameSync(tmp, file)
}

/**
 * Checks every cluster against its pin, pinning first uses and the clusters named by `accept`; refuses before
 * any request when a committed endpoint differs from the pinned one.
 */
export function checkPinnedEndpoints(
  clusters: readonly PinnedCluster[],
  options: { dir: string; accept: readonly string[] },
): PinOutcome[] {
  if (clusters.length === 0) return []
  const file = path.join(options.dir, PINS_FILE)
  const pins = readPins(file)
  const outcomes: PinOutcome[] = []
  let changed = false
  for (const c of clusters) {
    const key = credentialKey(c.credentials)
    const want: Pin = { endpoint: endpointOrigin(c.baseUrl), fingerprint: c.tls.fingerprint ?? null }
    const have = pins[key]
    if (have && have.endpoint === want.endpoint && have.fingerprint === want.fingerprint) {
      outcomes.push({ cluster: c.name, result: 'matched', pin: want })
      continue
    }
    if (have && !options.accept.includes(c.name)) {
      const what =
        have.endpoint !== want.endpoint
          ? `base-url: ${c.baseUrl} is not the endpoint its SOPS credentials were pinned to (${have.endpoint})`
          : `tls.fingerprint: ${want.fingerprint ?? '(none)'} is not the certificate its SOPS credentials were pinned to (${have.fingerprint ?? '(none)'})`
      throw new CliError(
        'INSECURE_ENDPOINT',
        `${c.file}: pve.clusters.${c.name}.${what} in ${file}; if the cluster really moved, run once with --accept-endpoint ${c.name}`,
      )
    }
    pins[key] = want
    changed = true
    outcomes.push({ cluster: c.name, result: 'pinned', pin: want })
  }
  if (changed) writePins(file, pins)
  return outcomes
}
