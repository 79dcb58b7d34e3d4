/**
 * Building blocks for the valibot schemas: each field carries a description (exported to JSON Schema and the
 * generated reference) and messages tagged with a stable error code.
 */
import * as v from 'valibot'
import { type ErrorCode, issueMessage as m } from '../errors.js'
import { bytesToWholeMiB, parseQuantity } from '../quantity.js'
import {
  PVE_TAG,
  RESOURCE_NAME,
  RESOURCE_NAME_MAX,
  STORAGE_ID,
  TAG_MAX,
  checkNodeName,
  checkResourceName,
  checkStorageId,
  checkTag,
} from '../names.js'

/**
 * Extra JSON Schema keys for the input form valibot cannot express (quantity patterns, case-insensitive enum
 * patterns). A metadata action's keys are copied into the generated JSON Schema; validation ignores them.
 */
const jsonMeta = <T>(json: Record<string, unknown>) => v.metadata<T, Record<string, unknown>>(json)

/** A valibot check reporting `code` with `message(value)` when `fails(value)` returns a message. */
function checked<T>(code: ErrorCode, fails: (value: T) => string | undefined) {
  return v.rawCheck<T>(({ dataset, addIssue }) => {
    if (!dataset.typed) return
    const problem = fails(dataset.value)
    if (problem !== undefined) addIssue({ message: m(code, problem) })
  })
}

/**
 * A mapping with exactly `entries`. Its message tags only the "not a mapping" issue; missing and unknown keys are
 * worded here and converted (with their code) by parseManifest and the config reader.
 */
export const obj = <T extends v.ObjectEntries>(entries: T, description: string) =>
  v.pipe(v.strictObject(entries, objectMessage), v.description(description))

function objectMessage(issue: v.BaseIssue<unknown>): string {
  return issue.expected === 'never'
    ? 'unknown key'
    : issue.received === 'undefined' && issue.path
      ? 'missing key'
      : m('field-type', `must be a mapping, got ${issue.received}`)
}

export const str = (description: string) =>
  v.pipe(v.string(m('field-type', 'must be a string')), v.description(description))

export const nonEmptyStr = (description: string) =>
  v.pipe(
    v.string(m('field-type', 'must be a string')),
    v.description(description),
    v.trim(),
    v.minLength(1, m('field-invalid', 'must not be empty')),
  )

export const bool = (description: string) =>
  v.pipe(v.boolean(m('field-type', 'must be true or false')), v.description(description))

export const int = (description: string, min?: number, max?: number, code: ErrorCode = 'field-invalid') => {
  const range =
    min !== undefined && max !== undefined
      ? `between ${min} and ${max}`
      : min !== undefined
        ? `at least ${min}`
        : `at most ${max}`
  return v.pipe(
    v.number(m('field-type', 'must be a whole number')),
    v.description(description),
    v.integer(m('field-type', 'must be a whole number')),
    v.minValue(min ?? Number.MIN_SAFE_INTEGER, m(code, `must be ${range}`)),
    v.maxValue(max ?? Number.MAX_SAFE_INTEGER, m(code, `must be ${range}`)),
  )
}

/** a number PVE reads as a float (`type => 'number'`, a NIC's `rate=`): fractions allowed, at least `min` */
export const decimal = (description: string, min: number) =>
  v.pipe(
    v.number(m('field-type', 'must be a number')),
    v.description(description),
    v.finite(m('field-type', 'must be a number')),
    v.minValue(min, m('field-invalid', `must be at least ${min}`)),
  )

/** An exact enum (case-sensitive). */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T, description: string) =>
  v.pipe(v.picklist(values, m('field-invalid', `must be one of: ${values.join(', ')}`)), v.description(description))

/** An enum matched case-insensitively, normalised to the listed spelling. */
export const oneOfIgnoreCase = <const T extends readonly [string, ...string[]]>(values: T, description: string) =>
  v.pipe(
    v.string(m('field-type', 'must be a string')),
    v.description(description),
    jsonMeta<string>({
      examples: [...values],
      pattern: `^(?:${values.map((x) => [...x].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')).join('|')})$`,
    }),
    v.check(
      (s) => values.some((x) => x.toLowerCase() === s.trim().toLowerCase()),
      m('field-invalid', `must be one of: ${values.join(', ')} (any case)`),
    ),
    v.transform((s) => values.find((x) => x.toLowerCase() === s.trim().toLowerCase()) as T[number]),
  )

export const list = <T extends v.GenericSchema>(item: T, description: string) =>
  v.pipe(v.array(item, m('field-type', 'must be a list')), v.description(description))

export const stringList = (description: string) => list(v.string(m('field-type', 'must be a string')), description)

export const resourceName = (description: string) =>
  v.pipe(
    v.string(m('field-type', 'must be a string')),
    v.description(description),
    jsonMeta<string>({ pattern: RESOURCE_NAME.source, maxLength: RESOURCE_NAME_MAX }),
    checked('name-invalid', checkResourceName),
  )

export const nodeName = (description: string) =>
  v.pipe(
    v.string(m('field-type', 'must be a string')),
    v.description(description),
    jsonMeta<string>({ pattern: '^[^\\s/]{1,64}$' }),
    checked('node-name-invalid', checkNodeName),
  )

export const storageId = (description: string) =>
  v.pipe(
    v.string(m('field-type', 'must be a string')),
    v.description(description),
    jsonMeta<string>({ pattern: STORAGE_ID.source }),
    checked('storage-id-invalid', checkStorageId),
  )

export const tag = v.pipe(
  v.string(m('field-type', 'must be a string')),
  jsonMeta<string>({ pattern: PVE_TAG.source, maxLength: TAG_MAX }),
  checked('tag-invalid', checkTag),
)

/** A scalar YAML value accepted where PVE expects a string (numbers and booleans are stringified). */
export const scalarString = v.pipe(
  v.union([v.string(), v.number(), v.boolean()], m('field-type', 'must be a string, number or boolean')),
  v.transform((x) => String(x)),
)

const QUANTITY_PATTERN = '^\\s*\\d+\\s*(?:[KkMmGgTtPp][Ii]?[Bb]?|[Bb])?\\s*$'
const QUANTITY_JSON = {
  anyOf: [
    { type: 'string', pattern: QUANTITY_PATTERN },
    { type: 'integer', minimum: 0 },
  ],
}

const quantityInput = (description: string) =>
  v.pipe(
    v.union([v.string(), v.number()], m('field-type', 'must be a size such as "8GiB" (or a number of bytes)')),
    v.description(description),
    jsonMeta<string | number>(QUANTITY_JSON),
    v.rawCheck<string | number>(({ dataset, addIssue }) => {
      if (!dataset.typed) return
      const r = parseQuantity(dataset.value)
      if (!r.ok) addIssue({ message: m(r.code, r.message) })
    }),
  )

function wholeMiBMessage(value: string | number, what: string): string | undefined {
  const r = parseQuantity(value)
  if (!r.ok || bytesToWholeMiB(r.bytes) !== undefined) return undefined
  let hint = ''
  if (typeof value === 'number') hint = ` (a bare number counts bytes: did you mean "${value}MiB"?)`
  else {
    const d = /^\s*(\d+)\s*([kmgtp])b?\s*$/i.exec(value)
    if (d) hint = ` ("${value.trim()}" is a decimal unit: did you mean "${d[1]}${d[2]!.toUpperCase()}iB"?)`
    else if (/^\s*\d+\s*b?\s*$/i.test(value))
      hint = ` (a bare number counts bytes: did you mean "${value.trim().replace(/b$/i, '')}MiB"?)`
  }
  return `${what} must be a whole number of MiB${hint}`
}

/** Memory or swap: a quantity that is a whole number of MiB; output is **MiB** (a number). */
export const memoryMiB = (description: string, min = 1) =>
  v.pipe(
    quantityInput(description),
    checked('quantity-not-whole-mib', (x: string | number) => wholeMiBMessage(x, 'a memory size')),
    checked('quantity-range', (x: string | number) => {
      const r = parseQuantity(x)
      return r.ok && r.bytes % 1024 ** 2 === 0 && r.bytes / 1024 ** 2 < min ? `must be at least ${min} MiB` : undefined
    }),
    v.transform((x) => (parseQuantity(x) as { bytes: number }).bytes / 1024 ** 2),
  )

/** A disk-like size: a positive whole number of MiB; output is **bytes** (a number). */
export const diskBytes = (description: string) =>
  v.pipe(
    quantityInput(description),
    checked('quantity-not-whole-mib', (x: string | number) => wholeMiBMessage(x, 'a disk size')),
    checked('quantity-range', (x: string | number) => {
      const r = parseQuantity(x)
      return r.ok && r.bytes === 0 ? 'a disk size must be greater than zero' : undefined
    }),
    v.transform((x) => (parseQuantity(x) as { bytes: number }).bytes),
  )

/** A quantity kept as the user wrote it (validated only), e.g. the cloud-init drive size sent verbatim. */
export const verbatimQuantity = (description: string) =>
  v.pipe(
    v.string(m('field-type', 'must be a size string such as "4M"')),
    v.description(description),
    jsonMeta<string>({ pattern: QUANTITY_PATTERN }),
    checked('quantity-invalid', (x: string) => {
      const r = parseQuantity(x)
      return r.ok ? undefined : r.message
    }),
    v.transform((x: string) => x.trim()),
  )

/**
 * pve-access-control verify_poolname (`pve-poolid`): up to three `/`-separated levels of letters, digits, `.`,
 * `-` and `_`. Any such id may be named by a guest's `spec.pool` or a backup job's selection (a pool made by hand
 * may predate the rule a new pool's id must follow: kinds/pool/schema.ts).
 */
export const POOL_ID = /^[A-Za-z0-9.\-_]+(?:\/[A-Za-z0-9.\-_]+){0,2}$/

export { checked, jsonMeta }
