import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fc, test } from '@fast-check/vitest'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { apidocCandidates, findRepoRoot, loadApidoc, parseApidocText, type PveVersion } from './load.js'
import { apidocForTests } from './test-data.js'

describe('locating apidoc.json at run time (architecture.md section 3)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pve-sim-apidoc-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('looks at PROXOPS_PVE_APIDOC first, then ../shared/pve-api next to the repository root', () => {
    const root = findRepoRoot()
    expect(root).toBeDefined()
    expect(apidocCandidates('9.1', { PROXOPS_PVE_APIDOC: '/x/apidoc.json' })).toEqual([
      '/x/apidoc.json',
      join(root as string, '..', 'shared', 'pve-api', 'apidoc.json'),
    ])
    expect(apidocCandidates('8.4', { PROXOPS_PVE_APIDOC: '/x/apidoc.json' })[0]).toBe('/x/apidoc-pve8.json')
  })

  it('reads a file given by PROXOPS_PVE_APIDOC', () => {
    const f = join(dir, 'apidoc.json')
    writeFileSync(f, JSON.stringify([{ path: '/version', info: { GET: { name: 'version' } } }]))
    const r = loadApidoc('9.1', { PROXOPS_PVE_APIDOC: f })
    expect(r).toEqual({ ok: true, file: f, tree: [{ path: '/version', info: { GET: { name: 'version' } } }] })
  })

  it('turns checks off with a warning naming the file when it is not an apidoc array', () => {
    const f = join(dir, 'bad', 'apidoc.json')
    rmSync(join(dir, 'bad'), { recursive: true, force: true })
    mkdirSync(join(dir, 'bad'))
    writeFileSync(f, '{"not": "an array"}')
    const r = loadApidoc('9.1', { PROXOPS_PVE_APIDOC: f })
    expect(r.ok).toBe(false)
    expect(r.ok ? '' : r.warning).toBe(`${f}: expected a JSON array of API nodes; schema checks are off`)
  })
})

describe('the viewer script a PVE node ships (/usr/share/pve-docs/api-viewer/apidoc.js)', () => {
  const viewer = (schema: unknown) =>
    `const apiSchema = ${JSON.stringify(schema, null, 3)}\n;\nExt.onReady(function() { var x = [1]; });\n`
  const node = fc.record({ path: fc.string(), text: fc.oneof(fc.string(), fc.constant('a ]; b')) })

  test.prop([fc.array(node, { maxLength: 5 })])(
    'reads the same schema as its JSON, whatever the strings hold',
    (schema) => {
      expect(parseApidocText(viewer(schema))).toEqual(schema)
      expect(parseApidocText(JSON.stringify(schema))).toEqual(schema)
    },
  )

  it('fails on text that is neither', () => {
    expect(() => parseApidocText('var other = 1;')).toThrow(SyntaxError)
    expect(() => parseApidocText('const apiSchema = [ {"path": "/"} ')).toThrow(/does not end/)
  })
})

describe('tests that need the schema (fresh clone vs CI)', () => {
  const absent = () =>
    ({
      ok: false,
      warning:
        'PVE 9.1 API schema not found (looked in: /x/apidoc.json; set PROXOPS_PVE_APIDOC); schema checks are off',
    }) as const

  it('skip with one line saying what is missing and how to provide it', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    // a set of its own: another test file in this worker may have announced the real skip already
    const announced = new Set<PveVersion>()
    expect(apidocForTests('9.1', {}, absent, announced)).toBe(false)
    expect(apidocForTests('9.1', {}, absent, announced)).toBe(false)
    expect(warn).toHaveBeenCalledTimes(1)
    expect(String(warn.mock.calls[0]?.[0])).toMatch(
      /^skipped: tests that need the PVE 9.1 API schema: .*PROXOPS_PVE_APIDOC.*api-viewer/,
    )
    warn.mockRestore()
  })

  it('fail instead under PROXOPS_REQUIRE_TEST_DATA=1', () => {
    expect(() => apidocForTests('9.1', { PROXOPS_REQUIRE_TEST_DATA: '1' }, absent)).toThrow(
      /PROXOPS_REQUIRE_TEST_DATA=1 but tests that need the PVE 9.1 API schema/,
    )
  })

  it('run where the schema is found', () => {
    const f = join(mkdtempSync(join(tmpdir(), 'pve-sim-apidoc-')), 'apidoc.json')
    writeFileSync(f, '[]')
    expect(apidocForTests('9.1', { PROXOPS_PVE_APIDOC: f, PROXOPS_REQUIRE_TEST_DATA: '1' })).toBe(true)
  })
})
