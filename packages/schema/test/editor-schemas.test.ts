/**
 * The JSON Schemas for editors: every file of examples/repository/ names its schema in a `yaml-language-server` line
 * that resolves from the file, each file is valid to it (ajv, draft-07), and for config files the schema accepts
 * exactly what validate's schema step accepts, also with a key left empty.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Ajv from 'ajv'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { configJsonSchema, manifestJsonSchema, resourcesJsonSchema } from '../src/json-schema.js'
import { processConfigSchema } from '../src/config.js'
import { emptyKeysRead } from '../src/null-keys.js'

const examples = fileURLToPath(new URL('../../../examples/repository/', import.meta.url))
const schemaDir = fileURLToPath(new URL('../schema/', import.meta.url))
const ajv = new Ajv({ allErrors: false })
const SCHEMAS = {
  'manifest.schema.json': ajv.compile(manifestJsonSchema()),
  'config.schema.json': ajv.compile(configJsonSchema()),
  'resources.schema.json': ajv.compile(resourcesJsonSchema()),
} as const

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name) && !e.parentPath.includes(`${path.sep}keys`))
    .map((e) => path.join(e.parentPath, e.name))
    .filter((f) => !f.endsWith('.sops.yaml'))
    .sort()
}

/** The schema a file of a ProxOps repository is written against. */
function schemaOf(rel: string): keyof typeof SCHEMAS {
  if (rel === 'proxops.yaml' || /^clusters\/[^/]+\/config\.yaml$/.test(rel)) return 'config.schema.json'
  if (/^clusters\/[^/]+\/resources\.yaml$/.test(rel)) return 'resources.schema.json'
  return 'manifest.schema.json'
}

describe('editor schemas of the example repository', () => {
  const files = yamlFiles(examples)

  it('every file names its schema on its first line, by a path that resolves to it', () => {
    expect(files.length).toBeGreaterThan(15)
    for (const file of files) {
      const rel = path.relative(examples, file).split(path.sep).join('/')
      const first = readFileSync(file, 'utf8').split('\n')[0] ?? ''
      const m = /^# yaml-language-server: \$schema=(\S+)$/.exec(first)
      expect(m, rel).not.toBeNull()
      const target = path.resolve(path.dirname(file), m![1]!)
      expect(target, rel).toBe(path.join(schemaDir, schemaOf(rel)))
      expect(existsSync(target)).toBe(true)
    }
  })

  it('every file is valid to its schema', () => {
    for (const file of files) {
      const rel = path.relative(examples, file).split(path.sep).join('/')
      const validate = SCHEMAS[schemaOf(rel)]
      for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
        const value = doc.toJS() as unknown
        if (value === null && schemaOf(rel) === 'manifest.schema.json') continue // an empty document is skipped
        expect(validate(value), `${rel}: ${JSON.stringify(validate.errors)}`).toBe(true)
      }
    }
  })

  it('config files: the schema accepts what validate accepts, also with any one section left empty', () => {
    const configs = files.filter(
      (f) => schemaOf(path.relative(examples, f).split(path.sep).join('/')) === 'config.schema.json',
    )
    const shapeValid = (doc: unknown) =>
      v.safeParse(processConfigSchema, emptyKeysRead(processConfigSchema, doc)).success
    const sections = (doc: unknown, at: string[] = []): string[][] =>
      typeof doc === 'object' && doc !== null && !Array.isArray(doc)
        ? Object.entries(doc).flatMap(([k, x]) =>
            typeof x === 'object' && x !== null ? [[...at, k], ...sections(x, [...at, k])] : [],
          )
        : []
    let checked = 0
    for (const file of configs) {
      const doc = parseAllDocuments(readFileSync(file, 'utf8'))[0]!.toJS() as Record<string, unknown>
      for (const at of [[] as string[], ...sections(doc)]) {
        const copy = structuredClone(doc)
        if (at.length > 0) {
          let parent = copy
          for (const k of at.slice(0, -1)) parent = parent[k] as Record<string, unknown>
          parent[at[at.length - 1]!] = null
        }
        expect(SCHEMAS['config.schema.json'](copy), `${file} ${at.join('.')}`).toBe(shapeValid(copy))
        checked++
      }
    }
    expect(checked).toBeGreaterThan(10)
  })

  it('resources.yaml: a list of .yaml paths, as a mapping or alone; empty entries and files compose nothing', () => {
    const ok = SCHEMAS['resources.schema.json']
    for (const doc of [null, [], { resources: null }, { resources: ['../../vm/a.yaml', null] }, ['x.YML']])
      expect(ok(doc), JSON.stringify(doc)).toBe(true)
    for (const doc of [{ resource: [] }, ['vm/a.txt'], { resources: 'a.yaml' }, 3])
      expect(ok(doc), JSON.stringify(doc)).toBe(false)
  })
})
