import { inspect } from 'node:util'

import { SENSITIVE } from './wire/sensitive.js'

/**
 * Holds a credential so it cannot leak by accident: `String()`, template literals, `JSON.stringify`,
 * `util.inspect` / `console.log` and structured logging all print `(sensitive)`. Only `reveal()` returns it,
 * and only the auth code calls that when building a request header or body.
 */
export class Secret {
  readonly #value: string

  constructor(value: string) {
    this.#value = value
  }

  reveal(): string {
    return this.#value
  }

  get empty(): boolean {
    return this.#value === ''
  }

  toString(): string {
    return SENSITIVE
  }

  toJSON(): string {
    return SENSITIVE
  }

  [inspect.custom](): string {
    return SENSITIVE
  }

  [Symbol.toPrimitive](): string {
    return SENSITIVE
  }
}

/** Accepts a plain string or a Secret (callers may wrap early). */
export function asSecret(value: string | Secret): Secret {
  return value instanceof Secret ? value : new Secret(value)
}
