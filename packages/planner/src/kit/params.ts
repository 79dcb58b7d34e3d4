/**
 * Turns a plan's parameters into what the writer sends: secret references are resolved here, at execute
 * time, through the caller's secrets port, and every resolved value is remembered so that error texts can
 * be scrubbed before they reach a report or a log.
 */
import type { PlanParams, SecretParam } from '../plan-types.js'
import { SENSITIVE, type PveParams } from '@proxops/pve-client/wire'

/** Resolves a SOPS document path (e.g. `cloud-init.ssh-keys.alice`) to its value. */
export type SecretResolver = (ref: string) => string | Promise<string>

export class SecretResolutionError extends Error {
  readonly code = 'SECRET_UNRESOLVED'
  constructor(
    readonly ref: string,
    readonly param: string,
    detail: string,
  ) {
    // names the reference and the parameter, never a value
    super(`secret reference ${ref} for parameter ${param} cannot be resolved: ${detail}`)
    this.name = 'SecretResolutionError'
  }
}

export { SENSITIVE }

export function isSecretParam(value: unknown): value is SecretParam {
  return typeof value === 'object' && value !== null && 'secret' in value
}

export interface ResolvedParams {
  params: Record<string, string | number>
  /** every secret value (and encoded form) that went into `params`, for redaction */
  secrets: string[]
}

export async function resolveParams(params: PlanParams, resolver: SecretResolver | undefined): Promise<ResolvedParams> {
  const out: Record<string, string | number> = {}
  const secrets: string[] = []
  for (const [key, value] of Object.entries(params)) {
    if (!isSecretParam(value)) {
      out[key] = value
      continue
    }
    const { refs, encoding, inline = [] } = value.secret
    const values: string[] = []
    for (const ref of refs) {
      if (!resolver) throw new SecretResolutionError(ref, key, 'no secrets port was given to execute()')
      let resolved: string
      try {
        resolved = await resolver(ref)
      } catch (error) {
        const detail =
          error instanceof SecretResolutionError
            ? error.message
            : error instanceof Error
              ? error.name
              : 'resolver failed'
        throw new SecretResolutionError(ref, key, detail)
      }
      if (typeof resolved !== 'string' || resolved === '')
        throw new SecretResolutionError(ref, key, 'empty or not a string')
      values.push(resolved)
    }
    if (encoding === 'plain') {
      if (values.length !== 1 || inline.length > 0)
        throw new SecretResolutionError(refs.join(','), key, 'plain encoding takes exactly one reference')
      out[key] = values[0]!
      secrets.push(values[0]!)
    } else {
      const keys = sshKeyLines([...values, ...inline])
      const encoded = encodeURIComponent(keys.join('\n'))
      out[key] = encoded
      secrets.push(...values, ...keys, ...keys.map((k) => encodeURIComponent(k)), encoded)
    }
  }
  return { params: out, secrets }
}

/** Key lines in order of first appearance: trimmed, non-empty, de-duplicated. */
function sshKeyLines(blocks: readonly string[]): string[] {
  const seen = new Set<string>()
  for (const block of blocks) {
    for (const line of block.split(/\r?\n/)) {
      const key = line.trim()
      if (key) seen.add(key)
    }
  }
  return [...seen]
}

/** Replaces every occurrence of a secret value (and its form-encoded form) in `text`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text
  // longest first, so a value containing another is replaced whole
  for (const secret of [...new Set(secrets)].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length)) {
    for (const form of new Set([secret, encodeURIComponent(secret)])) out = out.split(form).join(SENSITIVE)
  }
  return out
}

/** Parameter values for a log or an error: secrets shown as `(sensitive)`. */
export function describeParams(params: PlanParams): PveParams {
  const out: Record<string, string | number> = {}
  for (const [key, value] of Object.entries(params)) out[key] = isSecretParam(value) ? SENSITIVE : value
  return out
}
