/**
 * Keys left empty (null-keys.ts): a mapping or list key written as YAML null reads as left out (optional) or empty
 * (required), in validate and in the JSON Schema alike. The agreement is checked on real documents: every manifest
 * of examples/repository/ and the minimal manifests of every kind, each with one mapping or list key nulled, are
 * judged by validate and by a JSON Schema validator (ajv, draft-07) on the generated schema.
 */
import { readFileSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Ajv from 'ajv'
import { fc, test } from '@fast-check/vitest'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { canonicalKind, type Kind } from './kinds.js'
import { manifestJsonSchema } from './json-schema.js'
import { manifestSchemas } from './manifest/schemas.js'
import { parseManifest } from './manifest/parse.js'
import { emptyKeysRead, nullableEmptyKeys } from './null-keys.js'
import { processConfigSchema } from './config.js'
import { validManifests } from './test-support/manifests.js'

type Doc = Record<string, unknown>
type Path = (string | number)[]

const examples = fileURLToPath(new URL('../../../examples/repository/', import.meta.url))
const MANIFEST_ROOTS = ['vm', 'templatevm', 'lxc', 'templatect', 'iso', 'ctt', 'diskimage', 'backupjob', 'pool']

function exampleManifests(): Doc[] {
  const out: Doc[] = []
  for (const root of MANIFEST_ROOTS) {
    const dir = path.join(examples, root)
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.yaml')) continue
      const text = readFileSync(path.join(entry.parentPath, entry.name), 'utf8')
      for (const part of text.split(/^---$/m)) {
        const doc = parseYaml(part) as Doc | null
        if (doc) out.push(doc)
      }
    }
  }
  return out
}

const DOCS: Doc[] = [...exampleManifests(), ...(Object.values(validManifests) as Doc[])]

/** Every key of the document whose value is a mapping or a list, with its path. */
function containerKeys(value: unknown, at: Path = []): Path[] {
  if (typeof value !== 'object' || value === null) return []
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? value.map((x, i) => [i, x])
    : Object.entries(value)
  return entries.flatMap(([key, x]) => {
    const here = [...at, key]
    const mine = typeof key === 'string' && typeof x === 'object' && x !== null ? [here] : []
    return [...mine, ...containerKeys(x, here)]
  })
}

/** A copy of `doc` with the value at `at` replaced (`undefined`: the key removed). */
function withValue(doc: Doc, at: Path, value: unknown): Doc {
  const copy = structuredClone(doc)
  let parent: Record<string | number, unknown> = copy
  for (const key of at.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>
  const last = at[at.length - 1]!
  if (value === undefined) delete parent[last]
  else parent[last] = value
  return copy
}

const get = (doc: unknown, at: Path): unknown =>
  at.reduce<unknown>((x, k) => (x as Record<string | number, unknown>)[k], doc)

const ajv = new Ajv({ allErrors: false })
const validateJson = ajv.compile(manifestJsonSchema())

function kindOf(doc: Doc): Kind {
  const kind = canonicalKind(String(doc.kind))
  if (!kind) throw new Error(`unknown kind ${String(doc.kind)}`)
  return kind
}

/** The schema step of validate: what the JSON Schema describes (the cross-field rules come after it). */
function shapeValid(doc: Doc): boolean {
  const schema = manifestSchemas[kindOf(doc)]
  return v.safeParse(schema, emptyKeysRead(schema, doc)).success
}

/** Whether the key at `at` is required, as the generated JSON Schema says (its `required` list there). */
function requiredInJson(doc: Doc, at: Path): boolean {
  let s = (manifestJsonSchema() as { definitions: Record<string, Doc> }).definitions[kindOf(doc)] as Doc
  for (const key of at.slice(0, -1)) {
    s = (typeof key === 'number' ? s.items : (s.properties as Record<string, Doc>)[key]) as Doc
  }
  return ((s.required as string[] | undefined) ?? []).includes(String(at[at.length - 1]))
}

describe('keys left empty', () => {
  it('the documents under test are valid to both validate and the JSON Schema', () => {
    expect(DOCS.length).toBeGreaterThan(15)
    for (const doc of DOCS) {
      const r = parseManifest(doc)
      expect(r.ok, JSON.stringify(!r.ok && r.issues)).toBe(true)
      expect(validateJson(doc), JSON.stringify(validateJson.errors)).toBe(true)
    }
  })

  it('reads the reference-style manifest: hardware, options and tags with their children commented out', () => {
    const text = `apiVersion: proxops/v1alpha1
kind: VM
metadata:
  name: app
  labels:
    # team: web
spec:
  node: pve1
  vmid: 100
  memory: 1GiB
  cpu: { type: host, cores: 1 }
  disks:
    - { storage: local-lvm, size: 4GiB }
  networks:
    # - bridge: vmbr0
  hardware:
    # machine: q35
    # tpm:
  options:
    # onboot: true
  tags:
    # - web
`
    const r = parseManifest(parseYaml(text))
    if (!r.ok) throw new Error(JSON.stringify(r.issues))
    const plain = parseManifest(
      parseYaml(text.replace(/^ {2}(labels|networks|hardware|options|tags):\n/gm, '').replace(/^ +#.*\n/gm, '')),
    )
    expect(plain.ok && r.manifest).toEqual(plain.ok && plain.manifest)
    expect(r.manifest.spec).toMatchObject({ networks: [], tags: [] })
    expect(r.manifest.spec).not.toHaveProperty('hardware')
    expect(r.manifest.spec).not.toHaveProperty('options')
  })

  it('an optional block left empty is not managed, as when it is absent (tpm, cdrom, firewall, ha)', () => {
    const vm = structuredClone(validManifests.VM) as Doc & { spec: Doc }
    const r = parseManifest({
      ...vm,
      spec: { ...vm.spec, hardware: { tpm: null, cdrom: null }, firewall: null, ha: null },
    })
    if (!r.ok) throw new Error(JSON.stringify(r.issues))
    const spec = r.manifest.spec as Doc & { hardware: Doc }
    expect(spec.hardware.tpm).toBeUndefined()
    expect(spec.hardware.cdrom).toBeUndefined()
    expect(spec.firewall).toBeUndefined()
    expect(spec.ha).toBeUndefined()
  })

  it('a required mapping left empty names the fields it misses', () => {
    const vm = structuredClone(validManifests.VM) as Doc & { spec: Doc }
    const r = parseManifest({ ...vm, spec: { ...vm.spec, cpu: null } })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.issues.map((i) => [i.code, i.path.join('.')])).toEqual([
      ['field-required', 'spec.cpu.type'],
      ['field-required', 'spec.cpu.cores'],
    ])
  })

  it('leaves scalars and list items alone: `memory:` with no value is still an error', () => {
    const vm = structuredClone(validManifests.VM) as Doc & { spec: Doc }
    for (const spec of [
      { ...vm.spec, memory: null },
      { ...vm.spec, disks: [null] },
    ]) {
      const r = parseManifest({ ...vm, spec })
      expect(r.ok).toBe(false)
    }
  })

  it('never changes the document it reads', () => {
    const doc = { metadata: { name: 'x', labels: null }, spec: { hardware: null } }
    const before = structuredClone(doc)
    emptyKeysRead(manifestSchemas.VM, doc)
    expect(doc).toEqual(before)
  })

  it('config files: a section left empty reads as its defaults', () => {
    const r = v.safeParse(
      processConfigSchema,
      emptyKeysRead(processConfigSchema, { log: null, reconcile: null, pve: { clusters: null } }),
    )
    expect(r.success && r.output).toEqual(v.parse(processConfigSchema, {}))
  })

  test.prop([fc.nat(), fc.nat()], { numRuns: 400 })(
    'one mapping or list key nulled: validate and the JSON Schema agree, and null reads as left out or empty',
    (pick, key) => {
      const doc = DOCS[pick % DOCS.length]!
      const keys = containerKeys(doc)
      const at = keys[key % keys.length]!
      const nulled = withValue(doc, at, null)
      // agreement: the JSON Schema accepts exactly what validate's schema step accepts
      expect(validateJson(nulled), `${JSON.stringify(at)}: ${JSON.stringify(validateJson.errors)}`).toBe(
        shapeValid(nulled),
      )
      // the meaning: left out where the key is optional, empty where it is required
      const empty = Array.isArray(get(doc, at)) ? [] : {}
      const meant = requiredInJson(doc, at) ? withValue(doc, at, empty) : withValue(doc, at, undefined)
      expect(parseManifest(nulled)).toEqual(parseManifest(meant))
      expect(validateJson(nulled)).toBe(validateJson(meant))
    },
  )

  it('nullableEmptyKeys: optional containers and required ones that may be empty accept null', () => {
    const schema = nullableEmptyKeys({
      type: 'object',
      required: ['a', 'b'],
      properties: {
        a: { type: 'object', required: ['x'], properties: { x: { type: 'string' } } },
        b: { type: 'array', items: { type: 'string' } },
        c: { type: 'object', properties: {} },
        d: { type: 'string' },
      },
    })
    expect(schema.properties.a.type).toBe('object')
    expect(schema.properties.b.type).toEqual(['array', 'null'])
    expect(schema.properties.c.type).toEqual(['object', 'null'])
    expect(schema.properties.d.type).toBe('string')
  })
})
