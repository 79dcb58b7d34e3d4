/**
 * The `requires` table against PVE's API schema (apidoc.json of 9.1 and 8.4, found through the simulator's
 * test-data lookup; skipped with a notice without it, failed under PROXOPS_REQUIRE_TEST_DATA=1): every endpoint
 * ProxOps writes exists in one of the versions, and its rules are exactly the `requires` of that method's
 * parameters (pve-common PVE::JSONSchema check_object). The helpers are checked as properties.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { apidocForTests, loadApidoc, type ApiNode, type PveVersion } from '@proxops/pve-sim'
import {
  FORMAT_REQUIRES,
  PVE_REQUIRES,
  requiresOf,
  unmetRequires,
  withRequired,
  type PveEndpoint,
} from './pve-requires.js'

type Method = 'POST' | 'PUT' | 'DELETE'

/** every write method of the schema with its parameters' `requires` */
function schemaRules(tree: readonly ApiNode[]): Map<string, { rules: Record<string, string>; formats: Set<string> }> {
  const out = new Map<string, { rules: Record<string, string>; formats: Set<string> }>()
  const walk = (n: ApiNode): void => {
    for (const method of ['POST', 'PUT', 'DELETE'] as Method[]) {
      const info = n.info?.[method]
      if (!info) continue
      const rules: Record<string, string> = {}
      const formats = new Set<string>()
      for (const [k, p] of Object.entries(info.parameters?.properties ?? {})) {
        if (typeof p.requires === 'string') rules[k] = p.requires
        if (typeof p.format === 'string') formats.add(p.format)
      }
      out.set(`${method} ${n.path}`, { rules, formats })
    }
    for (const c of n.children ?? []) walk(c)
  }
  for (const n of tree) walk(n)
  return out
}

const versions: PveVersion[] = ['9.1', '8.4']
const found = Object.fromEntries(versions.map((v) => [v, apidocForTests(v)])) as Record<PveVersion, boolean>
const rulesOf = (v: PveVersion) => {
  const loaded = loadApidoc(v)
  if (!loaded.ok) throw new Error(loaded.warning)
  return schemaRules(loaded.tree)
}

describe.skipIf(!found['9.1'] || !found['8.4'])('PVE_REQUIRES against the API schema', () => {
  // read when a test runs: a skipped describe's body still runs (to collect its tests) in a clone without the data
  const schemas = {} as Record<PveVersion, ReturnType<typeof schemaRules>>
  beforeAll(() => {
    for (const v of versions) schemas[v] = rulesOf(v)
  })

  it.each(Object.keys(PVE_REQUIRES) as PveEndpoint[])('%s: exactly the requires rules of the API schema', (key) => {
    const where = versions.filter((v) => schemas[v].has(key))
    expect(where.length, `${key} is in neither API schema`).toBeGreaterThan(0)
    for (const v of where) expect(PVE_REQUIRES[key], `PVE ${v}`).toEqual(schemas[v].get(key)?.rules)
  })

  it('the ipconfig format the table lists rules for is the one the API schema names (qemu-server pve-qm-ipconfig)', () => {
    for (const v of versions) {
      const config = schemas[v].get('PUT /nodes/{node}/qemu/{vmid}/config')
      for (const format of Object.keys(FORMAT_REQUIRES)) expect(config?.formats.has(format), `PVE ${v}`).toBe(true)
    }
  })
})

describe('unmetRequires / withRequired', () => {
  const rules = requiresOf('PUT /cluster/backup/{id}')
  const key = fc.constantFrom('schedule', 'storage', 'notes-template', 'protected', 'dow', 'starttime', 'mode')
  const params = fc.dictionary(key, fc.constantFrom('a', 'b'))

  it('a request is refused exactly when a present parameter lacks the one it requires', () => {
    fc.assert(
      fc.property(params, (p) => {
        const unmet = unmetRequires(rules, p)
        for (const [param, requires] of Object.entries(rules))
          expect(unmet.some((u) => u.param === param)).toBe(param in p && !(requires in p))
      }),
    )
  })

  it('withRequired adds what the owned values hold, and then nothing required and owned is missing', () => {
    fc.assert(
      fc.property(params, params, (p, owned) => {
        const out = withRequired(rules, p, owned)
        for (const [k, v] of Object.entries(p)) expect(out[k]).toBe(v)
        for (const u of unmetRequires(rules, out)) expect(owned[u.requires]).toBeUndefined()
        for (const k of Object.keys(out)) if (!(k in p)) expect(out[k]).toBe(owned[k])
      }),
    )
  })

  it('notes-template alone is refused; with the job storage it is not', () => {
    expect(unmetRequires(rules, { 'notes-template': '{{guestname}}' })).toEqual([
      { param: 'notes-template', requires: 'storage' },
    ])
    expect(withRequired(rules, { 'notes-template': '{{guestname}}' }, { storage: 'backup', mode: 'stop' })).toEqual({
      'notes-template': '{{guestname}}',
      storage: 'backup',
    })
  })
})
