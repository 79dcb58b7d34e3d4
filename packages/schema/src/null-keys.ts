/**
 * Keys left empty. A mapping or list key whose children are all commented out is YAML null (`hardware:` with only
 * comment lines under it). The reference reads such a key as if it were not written, and so does ProxOps, for
 * every mapping and list field of every kind and config file (docs/repository.md#keys-left-empty):
 *   - an optional mapping or list is left out: its default applies (empty for lists and maps), or the block is not
 *     there (an optional block such as `hardware.tpm` or `firewall` is then not managed, as when it is absent);
 *   - a required mapping or list reads as empty (`cpu:` then reports the fields it misses), and so does an entry of
 *     a map (`pve.clusters.lab:` with nothing under it is an entry without settings).
 * Scalars are not touched (`memory:` with no value is still an error), and neither are list items.
 *
 * `emptyKeysRead` applies this to a document before the valibot schemas validate it; `nullableEmptyKeys` says the
 * same in a JSON Schema generated from those schemas, so editors accept exactly the nulls validate accepts.
 */
import type * as v from 'valibot'

type Node = Record<string, unknown>

/** The schema under pipes and optional/nullable wrappers, and whether a wrapper makes it optional. */
function unwrap(schema: unknown): { inner: Node | undefined; optional: boolean } {
  let s = schema as Node | undefined
  let optional = false
  for (;;) {
    if (!s) return { inner: undefined, optional }
    if (Array.isArray(s.pipe)) s = s.pipe[0] as Node
    else if (s.type === 'optional' || s.type === 'nullish' || s.type === 'exact_optional') {
      optional = true
      s = s.wrapped as Node
    } else if (s.type === 'nullable') s = s.wrapped as Node
    else return { inner: s, optional }
  }
}

const MAPPINGS = new Set(['strict_object', 'object', 'loose_object', 'object_with_rest', 'record'])

/** What an empty key of this schema reads as when it is required: `{}`, `[]`, or undefined (not a container). */
function emptyOf(inner: Node | undefined): object | undefined {
  if (!inner) return undefined
  if (MAPPINGS.has(inner.type as string)) return {}
  if (inner.type === 'array') return []
  return undefined
}

const isMapping = (x: unknown): x is Node => typeof x === 'object' && x !== null && !Array.isArray(x)

/**
 * The document as validate reads it: every mapping or list key written as null is left out (optional) or empty
 * (required). Returns the input itself when nothing changes; never modifies it.
 */
export function emptyKeysRead(schema: v.GenericSchema, doc: unknown): unknown {
  return walk(unwrap(schema).inner, doc)
}

function walk(schema: Node | undefined, value: unknown): unknown {
  if (!schema || value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    if (schema.type !== 'array') return value
    const item = unwrap(schema.item).inner
    return same(
      value,
      value.map((x) => walk(item, x)),
    )
  }
  if (schema.type === 'record') {
    const item = unwrap(schema.value).inner
    // a map's entries are required where they are written: an empty one reads as empty
    return rebuild(value, (x) => (x === null ? (emptyOf(item) ?? null) : walk(item, x)))
  }
  const entries = schema.entries as Record<string, unknown> | undefined
  if (!entries || !MAPPINGS.has(schema.type as string)) return value
  const out: Node = {}
  let changed = false
  for (const [key, item] of Object.entries(value as Node)) {
    const field = Object.hasOwn(entries, key) ? unwrap(entries[key]) : undefined
    const empty = field && item === null ? emptyOf(field.inner) : undefined
    if (field && empty !== undefined) {
      changed = true
      if (!field.optional) out[key] = empty
      continue
    }
    const next = walk(field?.inner, item)
    if (next !== item) changed = true
    out[key] = next
  }
  return changed ? out : value
}

function rebuild(value: object, map: (x: unknown) => unknown): unknown {
  const entries = Object.entries(value)
  const next = entries.map(([k, x]) => [k, map(x)] as const)
  return next.some(([, x], i) => x !== entries[i]![1]) ? Object.fromEntries(next) : value
}

function same<T>(before: readonly T[], after: T[]): T[] | readonly T[] {
  return after.some((x, i) => x !== before[i]) ? after : before
}

type Json = Record<string, unknown>

/** Whether the empty mapping or list satisfies a JSON Schema of one (no required keys, no minimum size). */
function acceptsEmpty(s: Json): boolean {
  if (s.type === 'object') return (!Array.isArray(s.required) || s.required.length === 0) && !s.minProperties
  if (s.type === 'array') return !s.minItems
  return false
}

/**
 * A JSON Schema generated from the schemas validate uses, with `null` allowed wherever validate reads it as a key
 * left empty and accepts it: every optional mapping or list property, and every required one that may be empty.
 * Modifies and returns `schema`.
 */
export function nullableEmptyKeys<T>(schema: T): T {
  const visit = (s: unknown): void => {
    if (!isMapping(s)) return
    const props = isMapping(s.properties) ? s.properties : undefined
    const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : [])
    for (const [key, p] of Object.entries(props ?? {})) {
      visit(p)
      if (!isMapping(p) || (p.type !== 'object' && p.type !== 'array')) continue
      if (!required.has(key) || acceptsEmpty(p)) p.type = [p.type, 'null']
    }
    visit(s.items)
    const values = s.additionalProperties
    visit(values)
    // a map's entry written empty reads as empty (emptyKeysRead), so null is accepted where empty is
    if (isMapping(values) && (values.type === 'object' || values.type === 'array') && acceptsEmpty(values))
      values.type = [values.type, 'null']
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) if (Array.isArray(s[key])) s[key].forEach(visit)
    if (isMapping(s.definitions)) Object.values(s.definitions).forEach(visit)
    for (const key of ['if', 'then', 'else'] as const) visit(s[key])
  }
  visit(schema)
  return schema
}
