/** The main entry stays narrow (docs/embedding-planner.md): internals live behind it or on a named subpath. */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

/** the names `src/index.ts` exports, values and types, from its export lists */
function exportedNames(): string[] {
  const text = readFileSync(new URL('./index.ts', import.meta.url), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '')
  return [...text.matchAll(/export (?:type )?\{([^}]*)\}/g)].flatMap((m) =>
    (m[1] ?? '')
      .split(',')
      .map((name) => name.trim().replace(/^type /, ''))
      .filter(Boolean),
  )
}

describe('the main entry', () => {
  it('exports at most 70 names, each named in docs/embedding-planner.md', () => {
    const names = exportedNames()
    expect(names.length).toBeLessThanOrEqual(70)
    const doc = readFileSync(new URL('../../../docs/embedding-planner.md', import.meta.url), 'utf8')
    const surface = doc.slice(doc.indexOf('## The public surface'), doc.indexOf('## The ports'))
    expect(names.filter((n) => !surface.includes(`\`${n}\``))).toEqual([])
    expect(surface).toContain(`${names.length} names`)
  })
})
