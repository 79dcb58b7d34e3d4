/**
 * Redaction: the last line of defence that keeps credentials out of every byte the CLI emits (stdout,
 * stderr, log lines, /status, /metrics, files). Known secret values are registered as soon as they are
 * resolved; well-known credential shapes are masked even when nobody registered them.
 */
import { SENSITIVE } from '@proxops/pve-client/wire'

/** Keys whose values are always secret, whatever they hold. */
const SECRET_KEY =
  /^(password|passwd|token|token-value|tokenvalue|secret|cipassword|sshkey|keyfile|authorization|cookie|git-token|pve-token|api-token)$/i

/** Credential shapes masked by pattern (value part only, so the message stays readable). */
const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  // PVEAPIToken=user@realm!tokenid=SECRET
  [/(PVEAPIToken=[^\s=!]+![^\s=]+=)[^\s"',;]+/gi, `$1${SENSITIVE}`],
  // PVEAuthCookie=TICKET
  [/(PVEAuthCookie=)[^\s"',;]+/gi, `$1${SENSITIVE}`],
  // CSRFPreventionToken: VALUE
  [/(CSRFPreventionToken["']?\s*[:=]\s*["']?)[^\s"',;]+/gi, `$1${SENSITIVE}`],
  // Authorization: Bearer xyz / Basic xyz
  [/(Authorization["']?\s*[:=]\s*["']?(?:Bearer|Basic|token)\s+)[^\s"',;]+/gi, `$1${SENSITIVE}`],
  // https://user:password@host
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:)[^\s/@]+@/gi, `$1${SENSITIVE}@`],
  // age private keys
  [/AGE-SECRET-KEY-(?:PQ-)?1[0-9A-Z]+/g, SENSITIVE],
]

/** Secrets shorter than this are not searched for as substrings (they would shred ordinary text). */
export const MIN_SECRET_LENGTH = 4

/**
 * The base64 text that any string containing `secret` carries, whatever comes before or after it: for each
 * of the three byte alignments, the characters determined by the secret's bytes alone. Cores shorter than
 * 8 characters are left out (they would match ordinary base64 by chance).
 */
export function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8')
  const cores = new Set<string>()
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64')
    const core = encoded.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + bytes.length)) / 6))
    if (core.length >= 8) {
      cores.add(core)
      cores.add(core.replace(/\+/g, '-').replace(/\//g, '_'))
    }
  }
  return [...cores]
}

/** The spellings a secret takes in URLs, form bodies and JSON text. */
function spellings(secret: string): string[] {
  return [
    secret,
    encodeURIComponent(secret),
    new URLSearchParams({ x: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
  ]
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

export class Redactor {
  readonly #secrets = new Set<string>()
  readonly #cores = new Set<string>()
  /** every spelling of every secret, matched ignoring case; longest first */
  #plain: RegExp | undefined
  /** base64 cores, matched exactly */
  #base64: RegExp | undefined
  /** one cheap test: could this string need masking at all? (most strings of a plan do not) */
  #trigger: RegExp = triggerOf([])

  /** Registers secret values; empty and very short values are ignored (see MIN_SECRET_LENGTH). */
  add(...values: ReadonlyArray<string | undefined | null>): this {
    for (const value of values) {
      if (typeof value !== 'string') continue
      const trimmed = value.trim()
      if (trimmed.length < MIN_SECRET_LENGTH) continue
      for (const spelling of spellings(trimmed)) this.#secrets.add(spelling)
      for (const core of base64Cores(trimmed)) this.#cores.add(core)
    }
    this.#plain = alternation(this.#secrets, 'gi')
    this.#base64 = alternation(this.#cores, 'g')
    this.#trigger = triggerOf([this.#plain, this.#base64])
    return this
  }

  get size(): number {
    return this.#secrets.size
  }

  /** Masks registered secrets and known credential shapes in a string. */
  text(input: string): string {
    if (!this.#trigger.test(input)) return input
    let out = input
    if (this.#plain) out = out.replace(this.#plain, SENSITIVE)
    if (this.#base64) out = out.replace(this.#base64, SENSITIVE)
    for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement)
    return out
  }

  /** Deep copy of a JSON-like value with secret-named keys masked and every string redacted. */
  value<T>(input: T): T {
    return this.#walk(input, new WeakSet()) as T
  }

  /**
   * Deep copy of a JSON-like value with every string redacted and the keys left alone: what goes into a
   * file or a JSON document is redacted before it is serialised, so escaping cannot hide a secret.
   */
  strings<T>(input: T): T {
    return this.#strings(input) as T
  }

  #strings(input: unknown): unknown {
    if (typeof input === 'string') return this.text(input)
    if (Array.isArray(input)) return input.map((item) => this.#strings(item))
    if (input === null || typeof input !== 'object') return input
    return Object.fromEntries(Object.entries(input).map(([key, item]) => [key, this.#strings(item)]))
  }

  #walk(input: unknown, seen: WeakSet<object>): unknown {
    if (typeof input === 'string') return this.text(input)
    if (input === null || typeof input !== 'object') return input
    // `seen` holds the objects on the path from the root: a value shared by two branches is not a cycle
    if (seen.has(input)) return '[circular]'
    if (input instanceof Error) {
      return { name: input.name, message: this.text(input.message), ...(hasCode(input) ? { code: input.code } : {}) }
    }
    seen.add(input)
    try {
      if (Array.isArray(input)) return input.map((item) => this.#walk(item, seen))
      const out: Record<string, unknown> = {}
      for (const [key, item] of Object.entries(input)) {
        out[key] =
          SECRET_KEY.test(key) && item !== undefined && item !== null && item !== ''
            ? SENSITIVE
            : this.#walk(item, seen)
      }
      return out
    } finally {
      seen.delete(input)
    }
  }
}

function hasCode(err: Error): err is Error & { code: string } {
  return typeof (err as { code?: unknown }).code === 'string'
}

/** What every credential shape of PATTERNS starts with (kept beside PATTERNS: a new shape needs its trigger). */
const SHAPE_TRIGGERS = /PVEAPIToken=|PVEAuthCookie=|CSRFPreventionToken|Authorization|:\/\/|AGE-SECRET-KEY-/i

/** A non-global test that is true for every string `text()` could change (it may be true for more). */
function triggerOf(parts: ReadonlyArray<RegExp | undefined>): RegExp {
  const sources = [SHAPE_TRIGGERS.source, ...parts.filter((p): p is RegExp => p !== undefined).map((p) => p.source)]
  return new RegExp(sources.join('|'), 'i')
}

/** One regular expression for a set of literals, longest first so a secret that contains another goes whole. */
function alternation(values: ReadonlySet<string>, flags: string): RegExp | undefined {
  if (values.size === 0) return undefined
  const sorted = [...values].sort((a, b) => b.length - a.length || (a < b ? -1 : 1))
  return new RegExp(sorted.map(escapeRegExp).join('|'), flags)
}
