// Leaf values: from decrypted plaintext, from YAML scalars, to plaintext for encryption, and the exact
// bytes sops feeds into the MAC for each (sops.go ToBytes).
import type { EncType } from './cipher.js'
import {
  formatBool,
  formatFloat,
  inInt64Range,
  intValue,
  normalizeRfc3339Nano,
  parseGoBool,
  parseGoFloat,
  parseGoInt,
} from './gotext.js'
import type { LeafType, LeafValue } from './secret.js'

export interface Leaf {
  type: LeafType
  value: LeafValue
  /** What this leaf contributes to the MAC. */
  macBytes: Uint8Array
}

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'))

/** A decrypted value of the given sops type; undefined when Go would fail to parse it. */
export function leafFromPlaintext(bytes: Uint8Array, type: Exclude<EncType, 'comment'>): Leaf | undefined {
  const text = Buffer.from(bytes).toString('utf8')
  switch (type) {
    case 'str':
      return { type, value: text, macBytes: bytes }
    case 'bytes':
      return { type, value: text, macBytes: bytes }
    case 'int': {
      const v = parseGoInt(text)
      return v === undefined ? undefined : { type, value: intValue(v), macBytes: utf8(v.toString()) }
    }
    case 'float': {
      const v = parseGoFloat(text)
      return v === undefined ? undefined : { type, value: v, macBytes: utf8(formatFloat(v)) }
    }
    case 'bool': {
      const v = parseGoBool(text)
      return v === undefined ? undefined : { type, value: v, macBytes: utf8(formatBool(v)) }
    }
    case 'time': {
      const v = normalizeRfc3339Nano(text)
      return v === undefined ? undefined : { type, value: v, macBytes: utf8(v) }
    }
  }
}

const TIMESTAMP_TAG = 'tag:yaml.org,2002:timestamp'

/**
 * A leaf read from a YAML scalar (clear-text leaves, and plaintext to encrypt). Ints arrive as bigint
 * (the parser runs with intAsBigInt), floats as number. Undefined for ints outside int64 and for
 * `!!timestamp` scalars that are not RFC 3339.
 */
export function leafFromScalar(value: unknown, tag?: string): Leaf | undefined {
  if (typeof value === 'string') {
    if (tag === TIMESTAMP_TAG) {
      const t = normalizeRfc3339Nano(value)
      return t === undefined ? undefined : { type: 'time', value: t, macBytes: utf8(t) }
    }
    return { type: 'str', value, macBytes: utf8(value) }
  }
  if (typeof value === 'bigint')
    return inInt64Range(value) ? { type: 'int', value: intValue(value), macBytes: utf8(value.toString()) } : undefined
  if (typeof value === 'number') return { type: 'float', value, macBytes: utf8(formatFloat(value)) }
  if (typeof value === 'boolean') return { type: 'bool', value, macBytes: utf8(formatBool(value)) }
  return undefined
}

/** The plaintext sops encrypts for a leaf (aes/cipher.go Encrypt): the same text as its MAC bytes. */
export function plaintextOf(leaf: Leaf): Uint8Array {
  return leaf.macBytes
}
