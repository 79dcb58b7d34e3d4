/**
 * The tokens of a slot's property string (a NIC, a disk's options, a mount point's options), each declared
 * once with the field of the manifest's entry it holds: the create form, the compare (a rewrite of only the
 * tokens that differ, keeping PVE's others) and adopt all read the same declaration.
 */
import { liveBool } from './fields.js'

export interface SlotToken {
  /** the PVE token */
  token: string
  /** the field of the manifest's entry, dotted when nested (`options.read-only`) */
  field: string
  /**
   * `string`, `int`; `number`: a float, compared as a number (a NIC's `rate`); `mac`: compared and written
   * upper-case; `flag`: only true is owned (`1`, PVE's default off); `bit`: both values owned (`1`/`0`);
   * `present`: `1` when true, the token removed when false; `choice`: a manifest word written as its token in
   * `choices`
   */
  codec: 'string' | 'int' | 'number' | 'mac' | 'flag' | 'bit' | 'present' | 'choice'
  /** `choice`: the token of each manifest value */
  choices?: Readonly<Record<string, string>>
  /** what PVE assumes when the token is absent (`discard` ignore, a mount point's `backup` on) */
  liveDefault?: string
  /** a declared number at or below it means "not set": neither sent nor compared (an LXC NIC's tag 0) */
  none?: number
  /** sent on create, never compared (an LXC NIC's type) */
  compare?: false
  /** PVE assigns it (a MAC): never adopted, never a gap */
  adopt?: false
  /** adopt leaves out this live value (PVE's default) */
  omit?: string
  /** sent on create when the manifest leaves the field out */
  createDefault?: (slot: string) => string
  /** adopt writes `liveDefault` when the token is absent (PVE's default is not the manifest's) */
  adoptDefault?: true
  /** PVE sets it at creation only: a difference is an anomaly naming this (`a TPM version`), never a write */
  createOnly?: string
}

export function fieldOf(entry: object, field: string): unknown {
  let v: unknown = entry
  for (const p of field.split('.'))
    v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[p] : undefined
  return v
}

function setField(entry: Record<string, unknown>, field: string, value: unknown): void {
  const path = field.split('.')
  let o = entry
  for (const p of path.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>
  o[path[path.length - 1]!] = value
}

/**
 * A declared value as its token: a string, null for "remove the token" (a `present` token declared false),
 * or undefined when the manifest does not set it.
 */
function tokenValue(t: SlotToken, v: unknown): string | null | undefined {
  if (v === undefined) return undefined
  if (typeof v === 'number' && t.none !== undefined && v <= t.none) return undefined
  switch (t.codec) {
    case 'flag':
      return v === true ? '1' : undefined
    case 'bit':
      return v === true ? '1' : '0'
    case 'present':
      return v === true ? '1' : null
    case 'mac':
      return String(v).toUpperCase()
    case 'choice':
      return t.choices?.[String(v)]
    default:
      return String(v)
  }
}

function sameToken(t: SlotToken, live: string | undefined, want: string | null): boolean {
  const value = live ?? t.liveDefault
  switch (t.codec) {
    case 'int':
    case 'number':
      return value !== undefined && Number(value) === Number(want)
    case 'flag':
    case 'bit':
    case 'present':
      return liveBool(value, false) === (want === '1')
    case 'mac':
      return (value ?? '').toUpperCase() === want
    case 'string':
    case 'choice':
      return value === want
  }
}

/** The create-form tokens of an entry, in declaration order (a removed `present` token is not written). */
export function createTokens(tokens: readonly SlotToken[], entry: object, slot: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const t of tokens) {
    const v = tokenValue(t, fieldOf(entry, t.field)) ?? t.createDefault?.(slot)
    if (typeof v === 'string') out[t.token] = v
  }
  return out
}

/** The declared tokens that differ from the live ones (undefined = remove the token). */
export function changedTokens(
  tokens: readonly SlotToken[],
  entry: object,
  live: Readonly<Record<string, string>>,
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {}
  for (const t of tokens) {
    const want = t.compare === false || t.createOnly !== undefined ? undefined : tokenValue(t, fieldOf(entry, t.field))
    if (want !== undefined && !sameToken(t, live[t.token], want)) out[t.token] = want ?? undefined
  }
  return out
}

/** Whether the entry declares the token with another value than the live one (PVE's default when absent). */
export function tokenDiffers(t: SlotToken, entry: object, live: Readonly<Record<string, string>>): boolean {
  const want = tokenValue(t, fieldOf(entry, t.field))
  return want !== undefined && !sameToken(t, live[t.token], want)
}

/**
 * adopt: the fields the declared tokens of a live property string give, written into `entry`; `skip` are the
 * tokens the family reads itself (the volume, its size); every other token is a gap `<slot>.<token>`.
 */
export function adoptTokens(
  tokens: readonly SlotToken[],
  props: Readonly<Record<string, string>>,
  entry: Record<string, unknown>,
  slot: string,
  gap: (field: string, value: string, note: string) => void,
  what: string,
  skip: readonly string[] = [],
): void {
  const declared = new Set<string>(skip)
  for (const t of tokens) {
    declared.add(t.token)
    const v = props[t.token] ?? (t.adoptDefault ? t.liveDefault : undefined)
    if (v === undefined || t.adopt === false || v === t.omit) continue
    if (t.codec === 'flag' || t.codec === 'present') {
      if (liveBool(v, false)) setField(entry, t.field, true)
    } else if (t.codec === 'bit') setField(entry, t.field, liveBool(v, false))
    else if (t.codec === 'choice') {
      const word = Object.entries(t.choices ?? {}).find(([, token]) => token === v)?.[0]
      if (word !== undefined) setField(entry, t.field, word)
      else gap(`${slot}.${t.token}`, v, 'value not modelled')
    } else if (t.codec === 'int') {
      if (Number.isInteger(Number(v))) setField(entry, t.field, Number(v))
      else gap(`${slot}.${t.token}`, v, 'not a whole number; not modelled')
    } else if (t.codec === 'number') {
      if (v.trim() !== '' && Number.isFinite(Number(v))) setField(entry, t.field, Number(v))
      else gap(`${slot}.${t.token}`, v, 'not a number; not modelled')
    } else setField(entry, t.field, v)
  }
  for (const [token, v] of Object.entries(props))
    if (!declared.has(token)) gap(`${slot}.${token}`, v, `${what} option not modelled`)
}
