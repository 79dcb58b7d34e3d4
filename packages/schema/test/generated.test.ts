/** The generated files are in sync with the schemas (run `pnpm --filter @proxops/schema gen` to refresh). */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import {
  PVE_DATA_FILES,
  renderConfigSchema,
  renderManifestSchema,
  renderPveData,
  renderResourcesSchema,
  renderSchemaReference,
  withErrorTable,
  renderErrorTable,
} from '../src/generate.js'
import { calendarEventData, firewallData } from '../src/pve-data.js'
import { manifestJsonSchema } from '../src/json-schema.js'
import { ErrorCodes, KIND_ALIASES, KINDS, parseQuantity } from '../src/index.js'
import { manifestSchemas } from '../src/manifest/schemas.js'
import { parseManifest } from '../src/manifest/parse.js'

const read = (p: string) => readFileSync(fileURLToPath(new URL(p, import.meta.url)), 'utf8')
const HINT = 'out of date: run `pnpm --filter @proxops/schema gen`'

describe('generated files', () => {
  it('schema/manifest.schema.json', () => {
    expect(read('../schema/manifest.schema.json'), HINT).toBe(renderManifestSchema())
  })
  it('schema/config.schema.json and schema/resources.schema.json', () => {
    expect(read('../schema/config.schema.json'), HINT).toBe(renderConfigSchema())
    expect(read('../schema/resources.schema.json'), HINT).toBe(renderResourcesSchema())
  })
  it('docs/schema-reference.md', () => {
    expect(read('../../../docs/schema-reference.md'), HINT).toBe(renderSchemaReference())
  })
  it('the error table of docs/repository.md', () => {
    const doc = read('../../../docs/repository.md')
    expect(doc, HINT).toBe(withErrorTable(doc))
    for (const code of Object.keys(ErrorCodes)) expect(renderErrorTable()).toContain(`\`${code}\``)
  })
  it('src/pve-data.ts holds the pve-data/ tables the simulator reads, unchanged', () => {
    const texts = Object.fromEntries(PVE_DATA_FILES.map(({ file }) => [file, read(`../../../pve-data/${file}`)]))
    expect(read('../src/pve-data.ts'), HINT).toBe(renderPveData(texts))
    expect(firewallData).toEqual(JSON.parse(texts['firewall.json']!))
    expect(calendarEventData).toEqual(JSON.parse(texts['calendar-event.json']!))
  })
  it('the pve-data check can fail: a changed table renders a different module', () => {
    const texts = Object.fromEntries(PVE_DATA_FILES.map(({ file }) => [file, read(`../../../pve-data/${file}`)]))
    const changed = { ...texts, 'firewall.json': texts['firewall.json']!.replace('"Amanda"', '"Amandb"') }
    expect(renderPveData(changed)).not.toBe(read('../src/pve-data.ts'))
  })
})

describe('JSON Schema', () => {
  const schema = manifestJsonSchema() as any
  it('dispatches on every spelling of every kind, in any case', () => {
    for (const kind of KINDS) {
      const own = new RegExp(schema.definitions[kind].properties.kind.pattern)
      for (const alias of KIND_ALIASES[kind]) {
        expect(own.test(alias)).toBe(true)
        expect(own.test(alias.toLowerCase())).toBe(true)
        expect(new RegExp(schema.properties.kind.pattern).test(alias.toUpperCase())).toBe(true)
      }
      for (const other of KINDS.filter((k) => k !== kind)) expect(own.test(other)).toBe(false)
    }
  })

  it('documents every field with a description', () => {
    const walk = (s: any, path: string): void => {
      for (const [k, p] of Object.entries<any>(s.properties ?? {})) {
        expect(typeof p.description, `${path}.${k}`).toBe('string')
        if (p.properties) walk(p, `${path}.${k}`)
        if (p.items?.properties) walk(p.items, `${path}.${k}[]`)
      }
    }
    for (const kind of KINDS) walk(schema.definitions[kind], kind)
  })

  it('uses no regex flags in the valibot rules, which the JSON Schema patterns would silently drop', () => {
    const flagged: string[] = []
    const seen = new Set<unknown>()
    const walk = (x: unknown): void => {
      if (typeof x !== 'object' || x === null || seen.has(x)) return
      seen.add(x)
      if (x instanceof RegExp) {
        if (x.flags !== '') flagged.push(`/${x.source}/${x.flags}`)
        return
      }
      for (const value of Object.values(x)) walk(value)
    }
    walk(manifestSchemas)
    expect(flagged).toEqual([])
  })

  const macPattern = new RegExp(schema.definitions.VM.properties.spec.properties.networks.items.properties.mac.pattern)
  test.prop([
    fc.oneof(
      fc.array(fc.stringMatching(/^[0-9a-fA-F]{2}$/), { minLength: 6, maxLength: 6 }).map((p) => p.join(':')),
      fc.array(fc.stringMatching(/^[0-9a-fA-FgG]{1,3}$/), { minLength: 5, maxLength: 7 }).map((p) => p.join(':')),
    ),
  ])('the JSON Schema accepts exactly the MACs validate accepts (upper, lower and mixed case)', (mac) => {
    const doc = {
      apiVersion: 'proxops/v1alpha1',
      kind: 'VM',
      metadata: { name: 'app' },
      spec: { node: 'pve1', vmid: 100, networks: [{ slot: 'net0', bridge: 'vmbr0', mac }] },
    }
    const r = parseManifest(doc)
    const macIssue = !r.ok && r.issues.some((i) => i.path.join('.').endsWith('mac'))
    expect(macPattern.test(mac)).toBe(!macIssue)
  })

  test.prop([fc.string({ maxLength: 12 })])(
    'the quantity pattern accepts exactly what parseQuantity accepts (for strings)',
    (text) => {
      const pattern = new RegExp(schema.definitions.VM.properties.spec.properties.memory.anyOf[0].pattern)
      const parsed = parseQuantity(text)
      if (parsed.ok || (!parsed.ok && parsed.code === 'quantity-range')) expect(pattern.test(text)).toBe(true)
      else expect(pattern.test(text)).toBe(false)
    },
  )
  test.prop([
    fc.integer({ min: 0, max: 99999 }),
    fc.constantFrom('', 'b', 'K', 'kb', 'Mi', 'MiB', 'gib', 'T', 'PB', 'pi', 'X', 'KiBB'),
  ])('quantity pattern on generated sizes', (n, unit) => {
    const pattern = new RegExp(schema.definitions.VM.properties.spec.properties.memory.anyOf[0].pattern)
    const r = parseQuantity(`${n}${unit}`)
    expect(pattern.test(`${n}${unit}`)).toBe(r.ok || r.code === 'quantity-range')
  })
})
