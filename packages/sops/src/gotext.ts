// Text forms that must match Go's strconv / time packages byte for byte, because sops feeds them into
// the MAC (sops.go ToBytes) and into the plaintext of encrypted values (aes/cipher.go).

const INT64_MIN = -(2n ** 63n)
const INT64_MAX = 2n ** 63n - 1n

/** strconv.FormatFloat(f, 'f', -1, 64): shortest round-trip digits, never an exponent. */
export function formatFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN'
  if (f === Infinity) return '+Inf'
  if (f === -Infinity) return '-Inf'
  if (Object.is(f, -0)) return '-0'
  const s = f.toString() // shortest round-trip digits (same digits as Go's -1 precision)
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s)
  if (!m) return s
  const [, sign, intPart, frac = '', expText] = m
  const digits = (intPart ?? '') + frac
  const exp = Number(expText) // value = 0.digits * 10^(intPart.length + exp)
  const point = (intPart ?? '').length + exp
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`
}

/** strconv.Atoi on 64-bit: optional sign, decimal digits, int64 range. Returns undefined when Go fails. */
export function parseGoInt(s: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined
  const v = BigInt(s)
  return v < INT64_MIN || v > INT64_MAX ? undefined : v
}

export function inInt64Range(v: bigint): boolean {
  return v >= INT64_MIN && v <= INT64_MAX
}

/** A JS representation of a Go int: number when exact, bigint otherwise. */
export function intValue(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v
}

/** strconv.ParseFloat(s, 64) for decimal, inf and nan forms (hex floats and underscores are rejected). */
export function parseGoFloat(s: string): number | undefined {
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(s)
  if (special) {
    if (special[2]?.toLowerCase() === 'nan') return special[1] ? undefined : NaN
    return special[1] === '-' ? -Infinity : Infinity
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined
  const v = Number(s)
  return Number.isFinite(v) ? v : undefined // Go reports ErrRange on overflow
}

/** strconv.ParseBool. */
export function parseGoBool(s: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(s)) return true
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(s)) return false
  return undefined
}

/** bool as sops writes it (Python heritage). */
export function formatBool(b: boolean): string {
  return b ? 'True' : 'False'
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/

interface ParsedTime {
  date: string // YYYY-MM-DDTHH:MM:SS
  fraction: string // digits without the dot, may be ''
  offset: string // 'Z' or ±HH:MM (never +00:00)
}

function parseRfc3339(s: string): ParsedTime | undefined {
  const m = RFC3339.exec(s)
  if (!m) return undefined
  const [, y, mo, d, h, mi, se, frac = '', off = 'Z'] = m
  const nums = [mo, d, h, mi, se].map(Number) as [number, number, number, number, number]
  const days = new Date(Date.UTC(Number(y), nums[0], 0)).getUTCDate()
  if (nums[0] < 1 || nums[0] > 12 || nums[1] < 1 || nums[1] > days) return undefined
  if (nums[2] > 23 || nums[3] > 59 || nums[4] > 59) return undefined
  let offset = off.toUpperCase()
  if (offset !== 'Z') {
    const [oh, om] = offset.slice(1).split(':').map(Number) as [number, number]
    if (oh > 23 || om > 59) return undefined
    if (oh === 0 && om === 0) offset = 'Z' // Go prints a zero offset as Z
  }
  return { date: `${y}-${mo}-${d}T${h}:${mi}:${se}`, fraction: frac.slice(1), offset }
}

/** time.Parse(RFC3339) then Format(RFC3339): the AAD sops uses for the MAC. */
export function normalizeRfc3339(s: string): string | undefined {
  const t = parseRfc3339(s)
  return t && `${t.date}${t.offset}`
}

/** time.UnmarshalText then MarshalText (RFC3339Nano): what sops feeds into the MAC for `time` values. */
export function normalizeRfc3339Nano(s: string): string | undefined {
  const t = parseRfc3339(s)
  if (!t) return undefined
  const frac = t.fraction.slice(0, 9).replace(/0+$/, '') // Go keeps nanoseconds
  return `${t.date}${frac ? `.${frac}` : ''}${t.offset}`
}

/** `lastmodified` as sops writes it: UTC, seconds precision. */
export function formatLastModified(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z')
}
