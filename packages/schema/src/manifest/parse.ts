/**
 * parseManifest: one YAML document (as plain JS data) -> a normalised {@link Manifest} or a list of issues,
 * each with a stable code and the path of the offending field.
 */
import * as v from 'valibot'
import { splitIssueMessage } from '../errors.js'
import type { Add, ManifestIssue, PathKey } from '../kinds/contract.js'
import { API_VERSION, KINDS, KIND_ALIASES, type Kind, canonicalKind, schemaKind } from '../kinds.js'
import { nearest } from '../suggest.js'
import { emptyKeysRead } from '../null-keys.js'
import { checkAnnotations } from './annotations.js'
import { manifestSchemas } from './schemas.js'
import type { Manifest } from './types.js'

export type { ManifestIssue, PathKey } from '../kinds/contract.js'
export {
  DEFAULT_SAFETY_SNAPSHOT_KEEP,
  DEPENDS_ON,
  DISRUPTION,
  DISRUPTION_POLICIES,
  SAFETY_SNAPSHOTS,
  SUSPEND,
  PRUNE,
  IGNORE_FIELDS,
  IGNORE_FIELD_PATH,
  ignoreFieldPaths,
  parseDependsOn,
} from './annotations.js'

export type ParseResult = { ok: true; manifest: Manifest } | { ok: false; issues: ManifestIssue[] }

/** Dotted form of a path: `spec.disks[0].size`. */
export function formatPath(path: readonly PathKey[]): string {
  let out = ''
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`
    else if (/^[A-Za-z0-9_-]+$/.test(k)) out += out ? `.${k}` : k
    else out += `[${JSON.stringify(k)}]`
  }
  return out
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}

const ALIASES = KINDS.flatMap((k) => KIND_ALIASES[k].slice(1)).join(', ')

/** Validates and normalises one manifest document. */
export function parseManifest(doc: unknown): ParseResult {
  if (!isPlainObject(doc)) {
    return {
      ok: false,
      issues: [
        {
          code: 'yaml-not-mapping',
          path: [],
          message: 'a manifest must be a mapping with apiVersion, kind, metadata and spec',
        },
      ],
    }
  }
  const issues: ManifestIssue[] = []
  if (doc.apiVersion === undefined) {
    issues.push({
      code: 'field-required',
      path: [],
      message: `missing required field "apiVersion" (write apiVersion: ${API_VERSION})`,
    })
  } else if (doc.apiVersion !== API_VERSION) {
    issues.push({
      code: 'api-version',
      path: ['apiVersion'],
      message: `apiVersion ${JSON.stringify(doc.apiVersion)} is not supported: write "${API_VERSION}"`,
    })
  }
  let kind: Kind | undefined
  if (doc.kind === undefined) {
    issues.push({
      code: 'field-required',
      path: [],
      message: `missing required field "kind" (one of ${KINDS.join(', ')})`,
    })
  } else if (typeof doc.kind !== 'string' || (kind = canonicalKind(doc.kind)) === undefined) {
    issues.push({
      code: 'kind-unknown',
      path: ['kind'],
      message: `kind ${JSON.stringify(doc.kind)} is unknown: use one of ${KINDS.join(', ')} (aliases ${ALIASES}; any case)`,
    })
  }
  if (kind === undefined) return { ok: false, issues }

  const schema = manifestSchemas[kind]
  // a mapping or list key written with nothing under it reads as left out (null-keys.ts)
  const read = emptyKeysRead(schema, doc) as Record<string, unknown>
  const result = v.safeParse(schema, { ...read, apiVersion: API_VERSION })
  if (!result.success) {
    for (const issue of result.issues) issues.push(convertIssue(issue, schema))
    return { ok: false, issues }
  }
  if (issues.length > 0) return { ok: false, issues }
  const raw = { ...(result.output as Record<string, unknown>), kind } as unknown as Manifest
  const manifest = finalise(raw, issues)
  return issues.length > 0 ? { ok: false, issues } : { ok: true, manifest }
}

// ---------------------------------------------------------------- valibot issue conversion

/**
 * The one place a valibot issue becomes a message. The schema's own messages (tagged with a code) are kept as
 * written (the loader puts the field's path before them, {@link withPath}); the generic ones name the field by
 * its full path (`spec.cpu.type`), since the last key alone (`type`) is ambiguous in a manifest.
 */
function convertIssue(issue: v.BaseIssue<unknown>, root: v.GenericSchema): ManifestIssue {
  const path: PathKey[] = (issue.path ?? []).map((p) => p.key as PathKey)
  const tagged = splitIssueMessage(issue.message)
  if (tagged) return { code: tagged.code, path, message: tagged.text }
  const last = path[path.length - 1]
  const field = JSON.stringify(formatPath(path))
  if ((issue.type === 'strict_object' || issue.type === 'object') && issue.expected === 'never') {
    const known = knownKeysAt(root, path.slice(0, -1))
    const hint = typeof last === 'string' ? nearest(last, known) : undefined
    return {
      code: 'field-unknown',
      path,
      message: `unknown field ${field}${hint ? `: did you mean "${hint}"?` : ''}${known.length ? ` (known: ${known.join(', ')})` : ''}`,
    }
  }
  if ((issue.type === 'strict_object' || issue.type === 'object') && issue.received === 'undefined') {
    return { code: 'field-required', path, message: `missing required field ${field}` }
  }
  return {
    code: 'field-type',
    path,
    message: withPath(path, `expected ${issue.expected ?? 'another type'}, got ${issue.received}`),
  }
}

/**
 * `spec.cpu.cores: must be ...`: a message as a person reads it in a list of problems, naming its field by the full
 * path; one that already names it is kept as it is.
 */
export function withPath(path: readonly PathKey[], text: string): string {
  const where = formatPath(path)
  return where === '' || text.includes(where) ? text : `${where}: ${text}`
}

/** Walks the schema along a path to list the keys an object accepts there. */
function knownKeysAt(schema: unknown, path: readonly PathKey[]): string[] {
  let s = schema as Record<string, unknown> | undefined
  const unwrap = (): void => {
    for (;;) {
      if (!s) return
      if (Array.isArray(s.pipe)) s = s.pipe[0] as Record<string, unknown>
      else if (s.type === 'optional' || s.type === 'nullable' || s.type === 'nullish')
        s = s.wrapped as Record<string, unknown>
      else return
    }
  }
  unwrap()
  for (const key of path) {
    if (!s) return []
    if (typeof key === 'number') s = s.item as Record<string, unknown>
    else s = (s.entries as Record<string, Record<string, unknown>> | undefined)?.[key]
    unwrap()
  }
  return s && s.entries ? Object.keys(s.entries) : []
}

// ---------------------------------------------------------------- cross-field rules and context defaults

function finalise(m: Manifest, issues: ManifestIssue[]): Manifest {
  const add: Add = (code, path, message) => issues.push({ code, path, message })
  checkAnnotations(m.metadata.annotations, add)
  schemaKind(m.kind).finalise(m, add)
  return m
}
