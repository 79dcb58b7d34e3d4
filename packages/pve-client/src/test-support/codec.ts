import { expect } from 'vitest'
import { WireError } from '../wire/errors.js'

/** Runs `fn`; it may return or throw a coded WireError, nothing else. */
export function returnsOrWireError(fn: () => unknown): void {
  try {
    fn()
  } catch (err) {
    expect(err).toBeInstanceOf(WireError)
    expect((err as WireError).code).toMatch(/^WIRE_/)
  }
}
