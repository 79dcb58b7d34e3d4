import { WireError, excerpt } from './errors.js'

/**
 * Disk sizes. `disk-size` is `^\d+(\.\d+)?([KMGT](iB)?)?$` with binary units (K = 1024); a plain number is bytes.
 * PVE prints sizes with `format_size`: the largest unit that divides the byte count exactly (`32G`, `528K`, `4M`),
 * raw bytes when not KiB-aligned. Resize accepts `\+?\d+(\.\d+)?[KMGT]?`: `+2G` grows by, `50G` grows to.
 */

const UNITS = { K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 } as const
type Unit = keyof typeof UNITS

const DISK_SIZE = /^(\d+(?:\.\d+)?)(?:([KMGT])(?:iB)?)?$/
const RESIZE = /^(\+)?(\d+(?:\.\d+)?)([KMGT])?$/

/** `32G` -> 34359738368. Fractions are floored to whole bytes, as PVE does. */
export function parseSize(input: string, field?: string): number {
  const m = matchSize(DISK_SIZE, input, 'disk size', field)
  return toBytes(m[1] as string, m[2] as Unit | undefined, input, field)
}

/** 34359738368 -> `32G`; 540672 -> `528K`; 1000 -> `1000`. */
export function formatSize(bytes: number, field?: string): string {
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    throw new WireError('WIRE_SIZE', 'size must be a non-negative safe integer of bytes', field)
  }
  if (bytes === 0) return '0'
  for (const unit of ['T', 'G', 'M', 'K'] as const) {
    if (bytes % UNITS[unit] === 0) return `${bytes / UNITS[unit]}${unit}`
  }
  return String(bytes)
}

export interface ResizeSpec {
  /** `true` for `+N` (grow by), `false` for `N` (grow to). */
  relative: boolean
  bytes: number
}

export function parseResize(input: string, field?: string): ResizeSpec {
  const m = matchSize(RESIZE, input, 'resize size', field)
  return { relative: m[1] === '+', bytes: toBytes(m[2] as string, m[3] as Unit | undefined, input, field) }
}

export function formatResize(spec: ResizeSpec, field?: string): string {
  if (spec === null || typeof spec !== 'object') throw new WireError('WIRE_SIZE', 'expected { relative, bytes }', field)
  return `${spec.relative ? '+' : ''}${formatSize(spec.bytes, field)}`
}

/** `input` matched against a size syntax, or a WIRE_SIZE error naming `what` */
function matchSize(syntax: RegExp, input: string, what: string, field: string | undefined): RegExpExecArray {
  const m = typeof input === 'string' ? syntax.exec(input) : null
  if (!m)
    throw new WireError('WIRE_SIZE', `invalid ${what} ${typeof input === 'string' ? excerpt(input) : ''}`.trim(), field)
  return m
}

function toBytes(num: string, unit: Unit | undefined, input: string, field: string | undefined): number {
  const bytes = Math.floor(Number(num) * (unit ? UNITS[unit] : 1))
  if (!Number.isSafeInteger(bytes)) throw new WireError('WIRE_SIZE', `size too large ${excerpt(input)}`, field)
  return bytes
}
