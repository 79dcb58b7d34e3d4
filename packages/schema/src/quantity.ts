/**
 * Quantities: an integer with an optional, case-insensitive unit. Decimal units (`K`, `KB`, `M`, `MB`,
 * `G`, `GB`, `T`, `TB`, `P`, `PB`) are powers of 1000; binary units (`Ki`, `KiB`, ... `Pi`, `PiB`) are powers
 * of 1024; no unit or `B` means bytes. A YAML number is a count of bytes. No decimals.
 *
 * Normalised forms used across ProxOps:
 * - memory and swap: whole MiB (a number); a value that is not a whole number of MiB is rejected (`8G` is
 *   8,000,000,000 bytes and fails; write `8GiB` or `8192MiB`).
 * - disk, root filesystem, mount point and EFI disk sizes: bytes (a number, always a whole number of MiB);
 *   {@link formatGiB} prints the `<storage>:<GiB>` create-form token.
 */

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  p: 1e15,
  pb: 1e15,
  ki: 1024,
  kib: 1024,
  mi: 1024 ** 2,
  mib: 1024 ** 2,
  gi: 1024 ** 3,
  gib: 1024 ** 3,
  ti: 1024 ** 4,
  tib: 1024 ** 4,
  pi: 1024 ** 5,
  pib: 1024 ** 5,
}

export const MiB = 1024 ** 2
export const GiB = 1024 ** 3

const QUANTITY = /^\s*(\d+)\s*([A-Za-z]{0,3})\s*$/

export type QuantityResult =
  { ok: true; bytes: number } | { ok: false; code: 'quantity-invalid' | 'quantity-range'; message: string }

/** Parses a quantity into bytes. Accepts a string (`8GiB`, `512`, `4 M`) or a non-negative integer number. */
export function parseQuantity(input: unknown): QuantityResult {
  if (typeof input === 'number') {
    if (!Number.isInteger(input) || input < 0) {
      return { ok: false, code: 'quantity-invalid', message: `${input} is not a whole, non-negative number of bytes` }
    }
    if (!Number.isSafeInteger(input)) return { ok: false, code: 'quantity-range', message: `${input} is too large` }
    return { ok: true, bytes: input }
  }
  if (typeof input !== 'string') {
    return { ok: false, code: 'quantity-invalid', message: 'a size must be a string like "8GiB" or a number of bytes' }
  }
  const m = QUANTITY.exec(input)
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined
  if (!m || unit === undefined) {
    return {
      ok: false,
      code: 'quantity-invalid',
      message: `"${input}" is not a size: write an integer with an optional unit (B, K/KB, M/MB, G/GB, T/TB, P/PB decimal; Ki/KiB, Mi/MiB, Gi/GiB, Ti/TiB, Pi/PiB binary), e.g. "8GiB"`,
    }
  }
  const bytes = Number(m[1]) * unit
  if (!Number.isSafeInteger(bytes)) return { ok: false, code: 'quantity-range', message: `"${input}" is too large` }
  return { ok: true, bytes }
}

const BINARY: ReadonlyArray<[string, number]> = [
  ['PiB', 1024 ** 5],
  ['TiB', 1024 ** 4],
  ['GiB', 1024 ** 3],
  ['MiB', 1024 ** 2],
  ['KiB', 1024],
]
const DECIMAL: ReadonlyArray<[string, number]> = [
  ['PB', 1e15],
  ['TB', 1e12],
  ['GB', 1e9],
  ['MB', 1e6],
  ['KB', 1e3],
]

/**
 * Formats bytes as the largest exact unit (`8589934592` -> `8GiB`; `1500` -> `1500`). Binary units by default;
 * `parseQuantity(formatQuantity(n))` gives back `n` for every safe non-negative integer.
 */
export function formatQuantity(bytes: number, system: 'binary' | 'decimal' = 'binary'): string {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`not a byte count: ${bytes}`)
  if (bytes === 0) return '0'
  for (const [unit, size] of system === 'binary' ? BINARY : DECIMAL) {
    if (bytes % size === 0) return `${bytes / size}${unit}`
  }
  return String(bytes)
}

/** Bytes as whole MiB, or undefined when not a whole number of MiB. */
export function bytesToWholeMiB(bytes: number): number | undefined {
  return bytes % MiB === 0 ? bytes / MiB : undefined
}

/**
 * The GiB number of PVE's `<storage>:<GiB>` create form: an integer when exact, else the shortest decimal that
 * reads back to the same number (512MiB -> `0.5`, 4MiB -> `0.00390625`).
 */
export function formatGiB(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) throw new RangeError(`not a byte count: ${bytes}`)
  return String(bytes / GiB)
}
