/**
 * Parameter validation as pve-common's JSONSchema.pm does it (`validate` -> `check_object` -> `check_prop`),
 * against the method schemas of apidoc.json, with PVE's exact per-parameter error texts and value grammar.
 *
 * Values arrive as the decoder left them: strings (form/query), string arrays (repeated keys), `null` (a form
 * key without `=`, Perl's undef) or any JSON value (JSON bodies). JSON booleans behave like Perl's
 * JSON::PP::Boolean refs: accepted for `boolean`, rejected elsewhere with `got JSON::PP::Boolean`.
 */
import { HASH_VALIDATORS, PerlDie, resolveFormat, type HashFormat } from './formats.js'
import type { SchemaProp } from './load.js'
import { schemaPattern } from './perl-regex.js'

export type ParamErrors = Record<string, string>

/** the index ranges of `[n]` keys when the description does not say */
const INDEX_MAX: Record<string, number> = {
  hostpci: 15,
  ipconfig: 31,
  net: 31,
  numa: 7,
  unused: 255,
  virtiofs: 9,
  dev: 255,
  mp: 255,
  link: 7,
  acmedomain: 4,
}

const truthy = (v: unknown): boolean => v !== undefined && v !== null && v !== 0 && v !== '0' && v !== '' && v !== false

/** Perl's add_error: a second message for the same path is joined with a literal backslash-n. */
function addError(errors: ParamErrors, path: string, msg: string): void {
  const p = path || '_root'
  errors[p] = errors[p] !== undefined ? `${errors[p]}\\n${msg}` : msg
}

const IS_NUMBER = /^[+-]?(\d+\.\d+|\d+\.|\.\d+|\d+)([eE][+-]?\d+)?$/
const IS_INTEGER = /^[+-]?\d+$/

/** The Perl ref type name of a decoded value, or undefined for scalars. */
function refType(v: unknown): string | undefined {
  if (typeof v === 'boolean') return 'JSON::PP::Boolean'
  if (Array.isArray(v)) return 'ARRAY'
  if (v !== null && typeof v === 'object') return 'HASH'
  return undefined
}

/** Perl's stringification of a scalar. */
function str(v: unknown): string {
  return typeof v === 'string' ? v : String(v)
}

function checkType(path: string, type: string | undefined, value: unknown, errors: ParamErrors): boolean {
  if (!type || type === 'any') return true
  const vt = refType(value)
  if (type === 'array' || type === 'object') {
    if (vt !== (type === 'array' ? 'ARRAY' : 'HASH')) {
      addError(errors, path, `type check ('${type}') failed`)
      return false
    }
    return true
  }
  if (vt) {
    if (type === 'boolean' && vt === 'JSON::PP::Boolean') return true
    addError(errors, path, `type check ('${type}') failed - got ${vt}`)
    return false
  }
  const s = str(value)
  const ok =
    type === 'boolean'
      ? s === '1' || s === '0'
      : type === 'integer'
        ? IS_INTEGER.test(s)
        : type === 'number'
          ? IS_NUMBER.test(s)
          : true
  if (!ok) addError(errors, path, `type check ('${type}') failed - got '${s}'`)
  return ok
}

/** A `check_format` failure, rendered as `invalid format - <die text>` (a PVE::Exception stringified for property strings). */
function formatFailure(err: unknown): string {
  if (err instanceof PropertyStringError) {
    return `format error\n${Object.entries(err.errors)
      .map(([k, v]) => `${k}: ${v}\n`)
      .join('')}`
  }
  if (err instanceof PerlDie) return err.message
  throw err
}

export class PropertyStringError extends Error {
  constructor(readonly errors: ParamErrors) {
    super('format error')
    this.name = 'PropertyStringError'
  }
}

const parseBoolean = (v: string): string | undefined =>
  /^(1|on|yes|true)$/i.test(v) ? '1' : /^(0|off|no|false)$/i.test(v) ? '0' : undefined

/** PVE::JSONSchema::parse_property_string; throws PerlDie for grammar errors, PropertyStringError for value errors. */
export function parsePropertyString(format: HashFormat, data: string, path: string): Record<string, string> {
  const res: Record<string, string> = {}
  let defaultKey: string | undefined
  const die = (m: string): never => {
    throw new PerlDie(`${m}\n`)
  }
  for (const part of data.split(',')) {
    if (/^\s*$/.test(part)) continue
    const kv = /^([^=]+)=([\s\S]+)$/.exec(part)
    if (kv) {
      let k = kv[1] as string
      let v = kv[2] as string
      if (res[k] !== undefined) die(`duplicate key in comma-separated list property: ${k}`)
      let schema = Object.hasOwn(format, k) ? format[k] : undefined
      if (schema?.alias) {
        if (schema.keyAlias) {
          if (res[schema.keyAlias] !== undefined) die(`key alias '${schema.keyAlias}' is already defined`)
          res[schema.keyAlias] = k
        }
        k = schema.alias
        schema = format[k]
        if (res[k] !== undefined) die(`key '${k}' is already defined (via alias)`)
      }
      if (!schema) die(`invalid key in comma-separated list property: ${k}`)
      if (schema?.type === 'boolean') v = parseBoolean(v) ?? v
      res[k] = v
    } else if (!part.includes('=')) {
      if (defaultKey) die(`duplicate key in comma-separated list property: ${defaultKey}`)
      for (const [key, s] of Object.entries(format)) {
        if (!truthy(s.default_key)) continue
        defaultKey = key
        if (res[key]) die(`duplicate key in comma-separated list property: ${key}`)
        res[key] = s.type === 'boolean' ? (parseBoolean(part) ?? part) : part
        break
      }
      if (!defaultKey) die('value without key, but schema does not define a default key')
    } else {
      die('missing key in comma-separated list property')
    }
  }
  const errors: ParamErrors = {}
  checkObject(path, format, res, false, errors)
  if (Object.keys(errors).length) throw new PropertyStringError(errors)
  return HASH_VALIDATORS.get(format)?.(res) ?? res
}

function checkFormat(format: string | HashFormat, value: string, path: string): void {
  if (typeof format === 'object') {
    parsePropertyString(format, value, path)
    return
  }
  const f = resolveFormat(format)
  if (f.kind === 'hash') parsePropertyString(f.format, value, path)
  else if (f.kind === 'code') f.verify(value)
}

export function checkProp(value: unknown, schema: SchemaProp, path: string, errors: ParamErrors): void {
  if (value === undefined || value === null) {
    if (schema.type === 'null') return
    if (!truthy(schema.optional) && !schema.alias) addError(errors, path, 'property is missing and it is not optional')
    return
  }
  if (!checkType(path, schema.type, value, errors)) return
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((el, i) => checkProp(el, schema.items as SchemaProp, `${path}[${i}]`, errors))
    return
  }
  if (refType(value) === 'HASH') {
    if (schema.properties)
      checkObject(path, schema.properties, value as Record<string, unknown>, schema.additionalProperties, errors)
    return
  }
  if (refType(value)) return // JSON boolean for a boolean parameter
  const s = str(value)
  if (schema.format) {
    try {
      checkFormat(schema.format, s, path)
    } catch (err) {
      addError(errors, path, `invalid format - ${formatFailure(err)}`)
      return
    }
  }
  if (schema.pattern && !schemaPattern(schema.pattern).test(s)) {
    addError(errors, path, 'value does not match the regex pattern')
    return
  }
  if (schema.maxLength !== undefined && [...s].length > Number(schema.maxLength)) {
    addError(errors, path, `value may only be ${schema.maxLength} characters long`)
    return
  }
  if (schema.minLength !== undefined && [...s].length < Number(schema.minLength)) {
    addError(errors, path, `value must be at least ${schema.minLength} characters long`)
    return
  }
  if (IS_NUMBER.test(s)) {
    if (schema.maximum !== undefined && Number(s) > Number(schema.maximum)) {
      addError(errors, path, `value must have a maximum value of ${schema.maximum}`)
      return
    }
    if (schema.minimum !== undefined && Number(s) < Number(schema.minimum)) {
      addError(errors, path, `value must have a minimum value of ${schema.minimum}`)
      return
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(s)) {
    addError(errors, path, `value '${s}' does not have a value in the enumeration '${schema.enum.join(', ')}'`)
  }
}

/** Looks a key up in an object schema, expanding apidoc's `name[n]` entries to `name0`..`nameN`. */
export function propertySchema(properties: Record<string, SchemaProp>, key: string): SchemaProp | undefined {
  if (Object.hasOwn(properties, key)) return properties[key]
  const m = /^([a-z]+)(\d+)$/.exec(key)
  if (!m) return undefined
  const base = m[1] as string
  const idx = m[2] as string
  const s = properties[`${base}[n]`]
  if (!s || (idx.length > 1 && idx.startsWith('0'))) return undefined
  const range = /n is (\d+) to (\d+)/.exec(s.description ?? '')
  const max = range ? Number(range[2]) : (INDEX_MAX[base] ?? 255)
  return Number(idx) <= max ? s : undefined
}

export function checkObject(
  path: string,
  properties: Record<string, SchemaProp>,
  value: Record<string, unknown>,
  additionalProperties: unknown,
  errors: ParamErrors,
): void {
  const sub = (k: string): string => (path ? `${path}.${k}` : k)
  // aliases are remapped so validation and handlers see canonical names (check_object in pve-common 9.x)
  for (const k of Object.keys(value)) {
    const alias = propertySchema(properties, k)?.alias
    if (!alias) continue
    if (value[alias] !== undefined && value[alias] !== null)
      addError(errors, sub(k), `cannot set both '${k}' and its alias target '${alias}'`)
    else {
      value[alias] = value[k]
      delete value[k]
    }
  }
  for (const [k, s] of Object.entries(properties)) {
    if (k.endsWith('[n]')) continue
    checkProp(value[k], s, sub(k), errors)
  }
  for (const k of Object.keys(value)) {
    const s = propertySchema(properties, k)
    if (s) {
      if (Object.hasOwn(properties, k) === false) checkProp(value[k], s, sub(k), errors)
      if (typeof s.requires === 'string' && (value[s.requires] === undefined || value[s.requires] === null)) {
        addError(errors, sub(s.requires), `missing property required by '${sub(k)}'`)
      }
      continue
    }
    if (additionalProperties !== undefined && additionalProperties !== null && !truthy(additionalProperties)) {
      addError(errors, sub(k), 'property is not defined in schema and the schema does not allow additional properties')
    }
  }
}

export interface MethodSchema {
  additionalProperties?: number | string
  properties?: Record<string, SchemaProp>
}

/**
 * RESTHandler::handle: normalise legacy list encodings (a repeated key for a `*-list` string is joined with
 * `,`; a single value for an `array` parameter is wrapped), then validate. Returns the errors map, or the
 * parameters as handlers see them (aliases resolved; values coerced to the schema type: integer/number ->
 * number, boolean -> boolean, string -> string).
 */
export function validateParams(
  schema: MethodSchema,
  input: Record<string, unknown>,
): { ok: true; params: Record<string, unknown> } | { ok: false; errors: ParamErrors } {
  const props = schema.properties ?? {}
  const value: Record<string, unknown> = { ...input }
  for (const [k, v] of Object.entries(value)) {
    const s = propertySchema(props, k)
    if (!s || !truthy(v)) continue
    if (Array.isArray(v) && s.type === 'string' && typeof s.format === 'string' && s.format.endsWith('-list'))
      value[k] = v.join(',')
    else if (!Array.isArray(v) && s.type === 'array') value[k] = [v]
  }
  const errors: ParamErrors = {}
  checkObject('', props, value, schema.additionalProperties, errors)
  if (Object.keys(errors).length) return { ok: false, errors }
  const params: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined || v === null) continue
    params[k] = coerce(propertySchema(props, k)?.type, v)
  }
  return { ok: true, params }
}

function coerce(type: string | undefined, v: unknown): unknown {
  if (type === 'integer' || type === 'number') return typeof v === 'number' ? v : Number(str(v))
  if (type === 'boolean') return v === true || str(v) === '1'
  if (type === 'string') return typeof v === 'string' ? v : str(v)
  return v
}
