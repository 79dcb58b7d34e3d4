import { WireError } from './errors.js'

/**
 * PVE property strings (`JSONSchema.pm::parse_property_string`): `key=value,key2=value2`, split on `,` only,
 * at most one bare value (assigned to the format's default key), the value is everything after the first `=`.
 * PVE's Perl parser has no quoting: a value can never contain `,` (lists inside use `;`), so the formatter
 * refuses such values with a coded error instead of producing a string PVE would split.
 */

export interface PropertyStringOptions {
  /** The format's default key (`file` for drives, `model` for qemu net, `volume` for lxc rootfs/mp, ...). */
  defaultKey?: string
  /** Field name used in error messages (e.g. `scsi0`). */
  field?: string
}

const KEY = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/

/** Parses into an object whose key order is the order in the string. */
export function parsePropertyString(input: string, options: PropertyStringOptions = {}): Record<string, string> {
  const { defaultKey, field } = options
  if (typeof input !== 'string') throw new WireError('WIRE_PROPERTY_STRING', 'expected a string', field)
  const out: Record<string, string> = Object.create(null) as Record<string, string>
  for (const part of input.split(',')) {
    if (/^\s*$/.test(part)) continue
    const eq = part.indexOf('=')
    let key: string
    let value: string
    if (eq === -1) {
      if (defaultKey === undefined) {
        throw new WireError('WIRE_PROPERTY_STRING', 'value without a key and the format has no default key', field)
      }
      key = defaultKey
      value = part
    } else {
      key = part.slice(0, eq)
      value = part.slice(eq + 1)
      if (!KEY.test(key))
        throw new WireError('WIRE_PROPERTY_STRING', `invalid key ${JSON.stringify(key.slice(0, 40))}`, field)
      if (value === '') throw new WireError('WIRE_PROPERTY_STRING', `missing value for key '${key}'`, field)
    }
    if (Object.prototype.hasOwnProperty.call(out, key)) {
      throw new WireError('WIRE_PROPERTY_STRING', `duplicate key '${key}'`, field)
    }
    out[key] = value
  }
  return { ...out }
}

export interface FormatPropertyStringOptions extends PropertyStringOptions {
  /** Keys printed (in this order) right after the default key; the rest follow alphabetically, as PVE prints. */
  order?: readonly string[]
}

/** Prints like PVE: the default key's value bare and first, then `order`, then the other keys alphabetically. */
export function formatPropertyString(
  values: Readonly<Record<string, string | number | boolean | undefined>>,
  options: FormatPropertyStringOptions = {},
): string {
  const { defaultKey, field, order = [] } = options
  if (values === null || typeof values !== 'object' || Array.isArray(values)) {
    throw new WireError('WIRE_PROPERTY_STRING', 'expected an object of values', field)
  }
  const keys = Object.keys(values).filter((k) => values[k] !== undefined)
  const first = order.filter((k) => keys.includes(k) && k !== defaultKey)
  const rest = keys.filter((k) => k !== defaultKey && !first.includes(k)).sort()
  const parts: string[] = []
  if (defaultKey !== undefined && keys.includes(defaultKey)) {
    const v = printValue(values[defaultKey], defaultKey, field)
    // A bare default value containing `=` would be read back as key=value, a blank one would be skipped.
    if (v.includes('=') || /^\s+$/.test(v)) parts.push(`${defaultKey}=${v}`)
    else parts.push(v)
  }
  for (const key of [...first, ...rest]) {
    if (!KEY.test(key))
      throw new WireError('WIRE_PROPERTY_STRING', `invalid key ${JSON.stringify(key.slice(0, 40))}`, field)
    parts.push(`${key}=${printValue(values[key], key, field)}`)
  }
  return parts.join(',')
}

function printValue(value: string | number | boolean | undefined, key: string, field: string | undefined): string {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') {
    throw new WireError('WIRE_PROPERTY_STRING', `value of key '${key}' must be a string, number or boolean`, field)
  }
  const v = typeof value === 'boolean' ? (value ? '1' : '0') : String(value)
  // `key=` is no value to PVE's parser (`(.+)`); a blank one is, and prints (bare default values aside: above)
  if (v === '') throw new WireError('WIRE_PROPERTY_STRING', `empty value for key '${key}'`, field)
  if (v.includes(',')) {
    throw new WireError(
      'WIRE_PROPERTY_STRING',
      `value of key '${key}' contains ',' (PVE cannot quote it; use ';' for lists)`,
      field,
    )
  }
  return v
}
