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

/**
 * A leaf read from a YAML scalar (clear-text leaves, and plaintext to encrypt). Ints arrive as bigint
 * (the parser runs with intAsBigInt), floats as number, explicit `!!timestamp` as Date (its source text
 * is used when it is RFC 3339, to keep the offset as Go does), `!!binary` as bytes. Undefined for ints
 * outside int64 and for other node values.
 */
export function leafFromScalar(value: unknown, source?: string): Leaf | undefined {
  if (typeof value === 'string') return { type: 'str', value, macBytes: utf8(value) }
  if (typeof value === 'bigint')
    return inInt64Range(value) ? { type: 'int', value: intValue(value), macBytes: utf8(value.toString()) } : undefined
  if (typeof value === 'number') return { type: 'float', value, macBytes: utf8(formatFloat(value)) }
  if (typeof value === 'boolean') return { type: 'bool', value, macBytes: utf8(formatBool(value)) }
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return undefined
    const text = (source && normalizeRfc3339Nano(source.trim())) ?? normalizeRfc3339Nano(value.toISOString())
    return text === undefined ? undefined : { type: 'time', value: text, macBytes: utf8(text) }
  }
  if (value instanceof Uint8Array) {
    // Go's YAML decoder turns !!binary into a string of the decoded bytes.
    return { type: 'str', value: Buffer.from(value).toString('utf8'), macBytes: new Uint8Array(value) }
  }
  return undefined
}

/** The plaintext sops encrypts for a leaf (aes/cipher.go Encrypt): the same text as its MAC bytes. */
export function plaintextOf(leaf: Leaf): Uint8Array {
  return leaf.macBytes
}
