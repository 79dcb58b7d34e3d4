import { inspect } from 'node:util'

export const SENSITIVE = '(sensitive)'

/** sops value types that a leaf can carry (the `type:` of an `ENC[...]` value). */
export type LeafType = 'str' | 'int' | 'float' | 'bool' | 'bytes' | 'time'
export type LeafValue = string | number | bigint | boolean

/**
 * A decrypted value that cannot be printed by accident: `String(x)`, template literals, `JSON.stringify`
 * and `util.inspect` / `console.log` all show `(sensitive)`. Read it with `reveal()`.
 */
export class Secret<T extends LeafValue = LeafValue> {
  readonly #value: T
  /** The sops type of the value: `time` and `bytes` reveal as strings. */
  readonly type: LeafType
  /** False for values the file keeps in clear text (e.g. `_unencrypted` keys). */
  readonly encrypted: boolean

  constructor(value: T, type: LeafType, encrypted = true) {
    this.#value = value
    this.type = type
    this.encrypted = encrypted
    Object.freeze(this)
  }

  reveal(): T {
    return this.#value
  }

  /** The value as a string (numbers and booleans in their usual text form), e.g. for a header. */
  revealString(): string {
    return String(this.#value)
  }

  toString(): string {
    return SENSITIVE
  }
  toJSON(): string {
    return SENSITIVE
  }
  [Symbol.toPrimitive](): string {
    return SENSITIVE
  }
  [inspect.custom](): string {
    return SENSITIVE
  }
}
