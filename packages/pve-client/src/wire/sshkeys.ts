import { WireError } from './errors.js'

/**
 * qemu `sshkeys` is in PVE's `urlencoded` format, `^[-%a-zA-Z0-9_.!~*'()]*$`: exactly `encodeURIComponent`
 * of the newline-joined keys (spaces as `%20`, never `+`). A form body then encodes it once more (`%` -> `%25`).
 */

const URLENCODED = /^[-%a-zA-Z0-9_.!~*'()]*$/

/** Keys (one string with newlines, or a list) -> the value to send as `sshkeys`. */
export function encodeSshKeys(keys: string | readonly string[], field = 'sshkeys'): string {
  const list: unknown[] = typeof keys === 'string' ? [keys] : Array.isArray(keys) ? keys : [undefined]
  if (!list.every((k) => typeof k === 'string'))
    throw new WireError('WIRE_SSHKEYS', 'expected a string or a list of strings', field)
  const text = list.join('\n')
  try {
    return encodeURIComponent(text)
  } catch {
    // encodeURIComponent throws URIError on lone surrogates
    throw new WireError('WIRE_SSHKEYS', 'keys contain invalid unicode (lone surrogate)', field)
  }
}

/** The `sshkeys` value as PVE returns it -> the newline-joined keys. */
export function decodeSshKeys(value: string, field = 'sshkeys'): string {
  if (typeof value !== 'string' || !isUrlEncoded(value)) {
    throw new WireError('WIRE_SSHKEYS', 'not in PVE urlencoded format (use encodeURIComponent)', field)
  }
  try {
    return decodeURIComponent(value)
  } catch {
    throw new WireError('WIRE_SSHKEYS', 'malformed percent-encoding', field)
  }
}

/** Whether a value is acceptable to PVE's `urlencoded` format check. */
export function isUrlEncoded(value: string): boolean {
  return URLENCODED.test(value)
}

/** The key lines of a `sshkeys` block: trimmed, non-empty, de-duplicated, in order. */
export function sshKeyLines(keys: string): string[] {
  const lines = keys
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '')
  return [...new Set(lines)]
}

/** The set of keys (the key lines, sorted) for drift comparison. */
export function sshKeySet(keys: string): string[] {
  return sshKeyLines(keys).sort()
}
