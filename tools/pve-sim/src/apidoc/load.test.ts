import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { apidocCandidates, findRepoRoot, loadApidoc } from './load.js'

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
