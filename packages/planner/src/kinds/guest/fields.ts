/**
 * The per-key building block of planning: each owned PVE config key knows its create form and how to
 * reconcile a live value (the pending-merged view) with the desired one. Everything here is pure.
 */
import { formatPropertyString, isTrue, parsePropertyString, SENSITIVE } from '@proxops/pve-client/wire'
import type { AnomalyCode, PlanParamValue } from '../../plan-types.js'

export { SENSITIVE }

export type Outcome =
  /** write this value; `newSlot` = the key was empty on PVE (a create form is allowed only then) */
  | { t: 'write'; value: PlanParamValue; after: string; newSlot?: boolean }
  /** grow the volume in this slot to `size` (PVE resize syntax, absolute) */
  | { t: 'resize'; size: string; after: string }
  /** move the volume in this slot from storage `from` to `storage` (a disk move; PVE frees the source after) */
  | { t: 'move'; volume: string; from: string; storage: string }
  | { t: 'anomaly'; code: AnomalyCode; message: string }
  | { t: 'gap'; note: string }

export interface Owned {
  /** the PVE config key */
  key: string
  /** the manifest path, for diffs and messages */
  field: string
  /** the create-form value; undefined = not sent on create */
  create?: PlanParamValue
  /** how the create value is shown in a diff (defaults to the value when it is a string or number) */
  show?: string
  sensitive?: boolean
  /** a volume-bearing slot: never part of a clone's post-clone write */
  volume?: boolean
  /** PVE applies a write at once even on a running guest (as a field table row's `running`) */
  running?: 'none'
  /** reconcile with the live value (undefined = not set on PVE); empty = converged */
  compare(live: string | undefined): readonly Outcome[]
}

/** The converged result, shared: most keys of most guests compare equal, so no array is allocated for them. */
export const NONE: readonly Outcome[] = Object.freeze([])

/**
 * A live property string through pve-client's parser (the one reading of PVE's grammar). Undefined when it is
 * not one (a bare value without a default key, a duplicate key, `key=` without a value), which callers report
 * as `invalid-live`.
 */
export function parsePS(value: string, defaultKey?: string): Record<string, string> | undefined {
  try {
    return parsePropertyString(value, defaultKey === undefined ? {} : { defaultKey })
  } catch {
    return undefined
  }
}

/** Prints a live-form rewrite: the live tokens with the owned ones replaced (undefined removes a token). */
export function rewrite(
  live: Record<string, string>,
  changes: Readonly<Record<string, string | undefined>>,
  defaultKey: string | undefined,
  order?: readonly string[],
): string {
  return formatPropertyString(
    { ...live, ...changes },
    { ...(defaultKey === undefined ? {} : { defaultKey }), ...(order ? { order } : {}) },
  )
}

/** `head,k=v,...` for the tokens that are set, in insertion order (a create form). */
export function withTokens(head: string, tokens: Readonly<Record<string, string | undefined>>): string {
  let out = head
  for (const k in tokens) {
    const v = tokens[k]
    if (v !== undefined) out += `,${k}=${v}`
  }
  return out
}

export const write = (value: PlanParamValue, after?: string, newSlot?: boolean): Outcome => {
  const o: Outcome = { t: 'write', value, after: after ?? String(typeof value === 'object' ? SENSITIVE : value) }
  if (newSlot) o.newSlot = true
  return o
}

export const anomaly = (code: AnomalyCode, message: string): Outcome => ({ t: 'anomaly', code, message })

/** A plain scalar compared as a string (after `norm` on both sides). */
export function scalar(key: string, field: string, desired: string, norm: (s: string) => string = (s) => s): Owned {
  return {
    key,
    field,
    create: desired,
    compare: (live) => (live !== undefined && norm(live) === norm(desired) ? NONE : [write(desired)]),
  }
}

/** An integer scalar (`cores`, `memory`); PVE may return `2048` or `current=2048` for memory. */
export function integer(key: string, field: string, desired: number, defaultKey?: string): Owned {
  return {
    key,
    field,
    create: desired,
    compare: (live) => {
      let v = live
      if (v !== undefined && defaultKey !== undefined && /[=,]/.test(v)) v = parsePS(v, defaultKey)?.[defaultKey]
      return v !== undefined && Number(v) === desired ? NONE : [write(desired)]
    },
  }
}

/** A live boolean key; `dflt` is what PVE assumes when the key is absent. */
export const liveBool = (v: string | undefined, dflt: boolean): boolean => (v === undefined ? dflt : isTrue(v))

/** A boolean written as 1/0; `liveDefault` is what PVE assumes when the key is absent. */
export function flag(key: string, field: string, desired: boolean, liveDefault: boolean): Owned {
  const value = desired ? 1 : 0
  return {
    key,
    field,
    create: value,
    compare: (live) => (liveBool(live, liveDefault) === desired ? NONE : [write(value)]),
  }
}

/** A list compared as a set; written joined by `sep`; `read` reads a live value that has aliases. */
export function stringSet(
  key: string,
  field: string,
  desired: readonly string[],
  sep: string,
  read: (live: string | undefined) => Iterable<string> = (live) => (live ?? '').split(/[\s,;]+/),
): Owned {
  const want = [...new Set(desired)].sort().join(' ')
  const value = desired.join(sep)
  return {
    key,
    field,
    create: value,
    compare: (live) => {
      const got = [...new Set(read(live))]
        .filter((s) => s !== '')
        .sort()
        .join(' ')
      return got === want ? NONE : [write(value)]
    },
  }
}
