/**
 * Redaction: the last line of defence that keeps credentials out of every byte the CLI emits (stdout,
 * stderr, log lines, /status, /metrics, files). Known secret values are registered as soon as they are
 * resolved; well-known credential shapes are masked even when nobody registered them.
 */

export const REDACTED = '(sensitive)'

/** Keys whose values are always secret, whatever they hold. */
const SECRET_KEY =
  /^(password|passwd|token|token-value|tokenvalue|secret|cipassword|sshkey|keyfile|authorization|cookie|git-token|pve-token|api-token)$/i

/** Credential shapes masked by pattern (value part only, so the message stays readable). */
const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  // PVEAPIToken=user@realm!tokenid=SECRET
  [/(PVEAPIToken=[^\s=!]+![^\s=]+=)[^\s"',;]+/gi, `$1${REDACTED}`],
  // PVEAuthCookie=TICKET
  [/(PVEAuthCookie=)[^\s"',;]+/gi, `$1${REDACTED}`],
  // CSRFPreventionToken: VALUE
  [/(CSRFPreventionToken["']?\s*[:=]\s*["']?)[^\s"',;]+/gi, `$1${REDACTED}`],
  // Authorization: Bearer xyz / Basic xyz
  [/(Authorization["']?\s*[:=]\s*["']?(?:Bearer|Basic|token)\s+)[^\s"',;]+/gi, `$1${REDACTED}`],
  // https://user:password@host
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:)[^\s/@]+@/gi, `$1${REDACTED}@`],
  // age private keys
  [/AGE-SECRET-KEY-(?:PQ-)?1[0-9A-Z]+/g, REDACTED],
]

/** Secrets shorter than this are not searched for as substrings (they would shred ordinary text). */
export const MIN_SECRET_LENGTH = 4

export class Redactor {
  readonly #secrets = new Set<string>()
  #sorted: string[] = []

  /** Registers secret values; empty and very short values are ignored (see MIN_SECRET_LENGTH). */
  add(...values: ReadonlyArray<string | undefined | null>): this {
    for (const value of values) {
      if (typeof value !== 'string') continue
      const trimmed = value.trim()
      if (trimmed.length < MIN_SECRET_LENGTH) continue
      this.#secrets.add(trimmed)
      // the percent-encoded form appears in URLs and form bodies
      const encoded = encodeURIComponent(trimmed)
      if (encoded !== trimmed) this.#secrets.add(encoded)
    }
    // longest first, so a secret that contains another is replaced whole
    this.#sorted = [...this.#secrets].sort((a, b) => b.length - a.length || (a < b ? -1 : 1))
    return this
  }

  get size(): number {
    return this.#secrets.size
  }

  /** Masks registered secrets and known credential shapes in a string. */
  text(input: string): string {
    let out = input
    for (const secret of this.#sorted) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED)
    }
    for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement)
    return out
  }

  /** Deep copy of a JSON-like value with secret-named keys masked and every string redacted. */
  value<T>(input: T): T {
    return this.#walk(input, new WeakSet()) as T
  }

  #walk(input: unknown, seen: WeakSet<object>): unknown {
    if (typeof input === 'string') return this.text(input)
    if (input === null || typeof input !== 'object') return input
    if (seen.has(input)) return '[circular]'
    seen.add(input)
    if (input instanceof Error) {
      return { name: input.name, message: this.text(input.message), ...(hasCode(input) ? { code: input.code } : {}) }
    }
    if (Array.isArray(input)) return input.map((item) => this.#walk(item, seen))
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(input)) {
      out[key] =
        SECRET_KEY.test(key) && item !== undefined && item !== null && item !== '' ? REDACTED : this.#walk(item, seen)
    }
    return out
  }
}

function hasCode(err: Error): err is Error & { code: string } {
  return typeof (err as { code?: unknown }).code === 'string'
}
