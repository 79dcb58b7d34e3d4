import { WireError } from './errors.js'

/**
 * PVE types JSON scalars by Perl history, not by schema (`memory:"2048"`, `template:1`, nextid `"100"`).
 * These decoders accept string, number or boolean and return the typed value, or throw a coded WireError.
 */

const INT = /^[+-]?\d+$/
const NUM = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/

export function toInt(value: unknown, field?: string): number {
  return toNumeric(value, INT, Number.isSafeInteger, 'an integer', field)
}

export function toNumber(value: unknown, field?: string): number {
  return toNumeric(value, NUM, Number.isFinite, 'a number', field)
}

/** a number that passes `valid`, a boolean as 1/0, or a string of that form (`syntax`), trimmed */
function toNumeric(
  value: unknown,
  syntax: RegExp,
  valid: (n: number) => boolean,
  what: string,
  field: string | undefined,
): number {
  if (typeof value === 'number' && valid(value)) return value
  if (typeof value === 'boolean') return value ? 1 : 0
  if (typeof value === 'string' && syntax.test(value.trim())) {
    const n = Number(value.trim())
    if (valid(n)) return n
  }
  throw new WireError('WIRE_SCALAR', `expected ${what}, got ${describe(value)}`, field)
}

const TRUE = new Set(['1', 'on', 'yes', 'true'])
const FALSE = new Set(['0', 'off', 'no', 'false', ''])

/** PVE booleans: 1/0 numbers, "1"/"0" strings, and the property-string spellings on/off, yes/no, true/false. */
export function toBool(value: unknown, field?: string): boolean {
  const b = readBool(value)
  if (b === undefined) throw new WireError('WIRE_SCALAR', `expected a boolean, got ${describe(value)}`, field)
  return b
}

/** A PVE boolean read leniently (a flag PVE may leave out): true where toBool reads true, false otherwise. */
export function isTrue(value: unknown): boolean {
  return readBool(value) === true
}

function readBool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value
  if (value === 1 || value === 0) return value === 1
  if (typeof value !== 'string') return undefined
  const v = value.trim().toLowerCase()
  return TRUE.has(v) ? true : FALSE.has(v) ? false : undefined
}

/** A scalar as PVE's string form: numbers printed plainly, booleans as 1/0. */
export function toStr(value: unknown, field?: string): string {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value === 'boolean') return value ? '1' : '0'
  throw new WireError('WIRE_SCALAR', `expected a string, got ${describe(value)}`, field)
}

/**
 * The id of an item of a list (a node, a pool, a storage, a volume, an HA sid): a non-empty string, or a number
 * (Perl may print a numeric-looking id as one). A boolean, an empty string or anything else is not an id: the
 * list is malformed, and reading it as if the item were absent could plan a create PVE refuses.
 */
export function toKey(value: unknown, field?: string): string {
  if (typeof value === 'string' && value !== '') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  throw new WireError('WIRE_SCALAR', `expected an id, got ${describe(value)}`, field)
}

/** A guest id as PVE's `pve-vmid` format has it: an integer from 100 to 999999999 (as a number or a string). */
export function toVmid(value: unknown, field?: string): number {
  const n = typeof value === 'boolean' ? NaN : toIntOrNaN(value)
  if (n >= 100 && n <= 999_999_999) return n
  throw new WireError('WIRE_SCALAR', `expected a vmid (100 to 999999999), got ${describe(value)}`, field)
}

/** A position in a list (a firewall rule's `pos`): a non-negative integer, as a number or a string. */
export function toPosition(value: unknown, field?: string): number {
  const n = typeof value === 'boolean' ? NaN : toIntOrNaN(value)
  if (n >= 0) return n
  throw new WireError('WIRE_SCALAR', `expected a position, got ${describe(value)}`, field)
}

function toIntOrNaN(value: unknown): number {
  try {
    return toInt(value)
  } catch {
    return NaN
  }
}

/** Optional variants: `undefined` and `null` (absent in PVE terms) give `undefined`. */
export const optInt = (v: unknown, field?: string): number | undefined => (v == null ? undefined : toInt(v, field))
export const optNumber = (v: unknown, field?: string): number | undefined =>
  v == null ? undefined : toNumber(v, field)
export const optBool = (v: unknown, field?: string): boolean | undefined => (v == null ? undefined : toBool(v, field))
export const optStr = (v: unknown, field?: string): string | undefined => (v == null ? undefined : toStr(v, field))
export const optVmid = (v: unknown, field?: string): number | undefined => (v == null ? undefined : toVmid(v, field))

/** Describes a value's type without echoing it (it may be a secret). */
function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `a string of length ${value.length}`
  if (typeof value === 'number')
    return Number.isFinite(value)
      ? Number.isInteger(value)
        ? `the integer ${value}`
        : 'a non-integer number'
      : 'a non-finite number'
  return `a value of type ${typeof value}`
}
