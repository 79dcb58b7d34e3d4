/** The CLI package exports no library internals (docs/architecture.md): `main` and `version`, one entry point. */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

describe('@proxops/cli as a library', () => {
  it('exports main and version only', async () => {
    expect(Object.keys(await import('./index.js')).sort()).toEqual(['main', 'version'])
  })

  it('has one entry point and the proxops binary, no subpaths', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, unknown>
      bin: Record<string, string>
    }
    expect(Object.keys(pkg.exports)).toEqual(['.'])
    expect(Object.keys(pkg.bin)).toEqual(['proxops'])
  })
})
