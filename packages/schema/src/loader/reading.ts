/**
 * Reading repository files: size and NUL limits, YAML parsing, manifest parsing (once per file, whichever
 * clusters list it) and the validation of config documents, every problem with a stable code and a position.
 */
import * as v from 'valibot'
import { type ErrorCode, type SchemaError, splitIssueMessage } from '../errors.js'
import { formatPath, parseManifest, withPath, type PathKey } from '../manifest/parse.js'
import type { Manifest } from '../manifest/types.js'
import { type Position, parseYaml, type YamlDocument } from '../yaml.js'
import { emptyKeysRead } from '../null-keys.js'
import { type FileInfo, nodeFs } from './fs.js'
import { RepoPaths } from './paths.js'
import type { LoadOptions } from './types.js'

const DEFAULT_MAX_FILE = 1024 * 1024
export const YAML_EXT = /\.ya?ml$/i

export interface ParsedFile {
  file: string
  docs: YamlDocument[]
  errors: SchemaError[]
  resources: Array<{ manifest: Manifest; doc: YamlDocument }>
}

export class Loader extends RepoPaths {
  readonly errors: SchemaError[] = []
  private readonly maxFileBytes: number
  private readonly maxAliasCount: number
  private readonly fileCache = new Map<string, Promise<ParsedFile>>()

  constructor(readonly options: LoadOptions) {
    super(options.fs ?? nodeFs)
    this.maxFileBytes = options.limits?.maxFileBytes ?? DEFAULT_MAX_FILE
    this.maxAliasCount = options.limits?.maxAliasCount ?? 100
  }

  err(
    code: ErrorCode,
    file: string,
    at: Position | undefined,
    message: string,
    extra: Partial<SchemaError> = {},
  ): SchemaError {
    const e: SchemaError = { code, file, line: at?.line ?? 0, column: at?.column ?? 0, message, ...extra }
    return e
  }

  /**
   * Reads a file whose real path has been checked; enforces the size limit. `known` is the caller's fresh
   * `stat` of the same real path, saving a second one.
   */
  async read(real: string, known?: FileInfo): Promise<{ text: string } | { error: SchemaError }> {
    if (!this.inside(real)) throw new Error(`loader bug: refusing to read ${real} outside ${this.root}`)
    const file = this.rel(real)
    const info = known ?? (await this.fs.stat(real))
    if (!info?.isFile) return { error: this.err('file-unreadable', file, undefined, `${file} is not a regular file`) }
    if (info.size > this.maxFileBytes) {
      return {
        error: this.err(
          'file-too-large',
          file,
          undefined,
          `${file} is ${info.size} bytes, over the ${this.maxFileBytes}-byte limit for one YAML file: split it`,
        ),
      }
    }
    try {
      const text = await this.fs.readFile(real)
      if (Buffer.byteLength(text) > this.maxFileBytes) {
        return {
          error: this.err(
            'file-too-large',
            file,
            undefined,
            `${file} is over the ${this.maxFileBytes}-byte limit for one YAML file: split it`,
          ),
        }
      }
      // a NUL byte is no YAML character; refused here so that none can reach PVE (escaped ones: nulPath)
      const nul = text.indexOf('\0')
      if (nul >= 0) {
        const line = text.slice(0, nul).split('\n').length
        return {
          error: this.err(
            'file-unreadable',
            file,
            { line, column: nul - text.lastIndexOf('\n', nul - 1) },
            `${file} contains a NUL byte`,
          ),
        }
      }
      return { text }
    } catch (err) {
      return {
        error: this.err('file-unreadable', file, undefined, `${file} could not be read: ${(err as Error).message}`),
      }
    }
  }

  async readYaml(
    real: string,
    known?: FileInfo,
    file = this.rel(real),
  ): Promise<{ docs: YamlDocument[]; errors: SchemaError[] }> {
    const r = await this.read(real, known)
    if ('error' in r) return { docs: [], errors: [{ ...r.error, file }] }
    return this.parseYamlText(r.text, file)
  }

  parseYamlText(text: string, file: string): { docs: YamlDocument[]; errors: SchemaError[] } {
    const parsed = parseYaml(text, { maxAliasCount: this.maxAliasCount })
    return { docs: parsed.documents, errors: parsed.problems.map((p) => this.err(p.code, file, p, p.message)) }
  }

  /** Parses a manifest file once, whichever clusters list it. */
  manifestFile(real: string, known?: FileInfo): Promise<ParsedFile> {
    let cached = this.fileCache.get(real)
    if (!cached) {
      cached = (async () => {
        const file = this.rel(real)
        const { docs, errors } = await this.readYaml(real, known)
        const resources: ParsedFile['resources'] = []
        for (const doc of docs) {
          if (doc.value === null || doc.value === undefined) continue // empty documents are skipped
          const nul = nulPath(doc.value)
          if (nul) {
            errors.push(
              this.err(
                'field-invalid',
                file,
                doc.locate(nul),
                `${formatPath(nul) || 'a key'}: contains a NUL character ("\\0"), which PVE cannot store`,
                { field: formatPath(nul) },
              ),
            )
            continue
          }
          const r = parseManifest(doc.value)
          if (r.ok) resources.push({ manifest: r.manifest, doc })
          else {
            for (const issue of r.issues) {
              const at = doc.locate(issue.path, { key: issue.code === 'field-unknown' })
              errors.push(
                this.err(
                  issue.code,
                  file,
                  at,
                  withPath(issue.path, issue.message),
                  issue.path.length ? { field: formatPath(issue.path) } : {},
                ),
              )
            }
          }
        }
        return { file, docs, errors, resources }
      })()
      this.fileCache.set(real, cached)
    }
    return cached
  }

  /** Validates a config document with a valibot schema, reporting issues with positions. */
  validateConfig<T>(
    schema: v.GenericSchema<unknown, T>,
    doc: YamlDocument,
    file: string,
    prefix: PathKey[] = [],
  ): T | undefined {
    if (!isMapping(doc.value)) {
      this.errors.push(
        this.err(
          'config-invalid',
          file,
          doc.start,
          `${file} must be a mapping of settings, got ${Array.isArray(doc.value) ? 'a list' : typeof doc.value}`,
        ),
      )
      return undefined
    }
    const nul = nulPath(doc.value)
    if (nul) {
      this.errors.push(
        this.err('config-invalid', file, doc.locate(nul), `${formatPath(nul)}: contains a NUL character`, {
          field: formatPath(nul),
        }),
      )
      return undefined
    }
    // a mapping or list key written with nothing under it reads as left out, as in manifests (null-keys.ts)
    const r = v.safeParse(schema, emptyKeysRead(schema, doc.value))
    if (r.success) return r.output
    for (const issue of r.issues) {
      const path = [...prefix, ...(issue.path ?? []).map((p) => p.key as PathKey)]
      const tagged = splitIssueMessage(issue.message)
      const last = path[path.length - 1]
      let code: ErrorCode = 'config-invalid'
      let message: string
      if (tagged) {
        code = tagged.code === 'field-type' || tagged.code === 'field-invalid' ? 'config-invalid' : tagged.code
        message = `${formatPath(path)}: ${tagged.text}`
      } else if (issue.expected === 'never') message = `unknown setting ${JSON.stringify(formatPath(path))}`
      else if (issue.received === 'undefined') message = `missing required setting ${JSON.stringify(formatPath(path))}`
      else message = `${formatPath(path) || 'the document'}: expected ${issue.expected}, got ${issue.received}`
      this.errors.push(
        this.err(code, file, doc.locate(path, { key: issue.expected === 'never' }), message, {
          field: formatPath(path),
        }),
      )
      void last
    }
    return undefined
  }

  /** The one non-empty document of a config file (several = error). */
  singleDoc(docs: YamlDocument[], file: string): YamlDocument | undefined {
    const nonEmpty = docs.filter((d) => d.value !== null && d.value !== undefined)
    if (nonEmpty.length > 1) {
      this.errors.push(this.err('config-invalid', file, nonEmpty[1]!.start, `${file} must hold a single YAML document`))
      return undefined
    }
    return nonEmpty[0]
  }
}

/** The path of the first string (value or key) holding a NUL character, if any. */
export function nulPath(value: unknown, path: PathKey[] = []): PathKey[] | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = nulPath(value[i], [...path, i])
      if (p) return p
    }
    return undefined
  }
  if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\0')) return [...path, k]
      const p = nulPath(v, [...path, k])
      if (p) return p
    }
  }
  return undefined
}

export function isMapping(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}
