/**
 * The YAML shown in README.md and docs/getting-started.md is real: every block parses, every manifest in it
 * (apiVersion proxops/v1alpha1) passes @proxops/schema, every composition is a list of .yaml paths.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { parseManifest, parseYaml } from '@proxops/schema'
import { describe, expect, it } from 'vitest'
import { fencedBlocks } from './markdown.js'
import { repoRoot } from './sandbox.js'

const PAGES = ['README.md', 'docs/getting-started.md']

for (const page of PAGES) {
  const blocks = fencedBlocks(readFileSync(path.join(repoRoot, page), 'utf8')).filter((b) =>
    ['yaml', 'yml'].includes(b.words[0] ?? ''),
  )

  describe(`${page}: YAML blocks`, () => {
    for (const block of blocks) {
      it(`${page}:${block.line} parses${/apiVersion:/.test(block.body) ? ' and validates' : ''}`, () => {
        const file = parseYaml(block.body)
        expect(file.problems).toEqual([])
        for (const doc of file.documents) {
          const value = doc.value as Record<string, unknown> | null
          if (value && typeof value === 'object' && 'apiVersion' in value) {
            const result = parseManifest(value)
            expect(result.ok ? [] : result.issues).toEqual([])
          }
          if (value && typeof value === 'object' && 'resources' in value) {
            const list = value.resources
            expect(Array.isArray(list) && list.every((p) => typeof p === 'string' && /\.ya?ml$/.test(p))).toBe(true)
          }
        }
      })
    }
  })
}

describe('getting started shows a manifest', () => {
  it('has at least one manifest block', () => {
    const text = readFileSync(path.join(repoRoot, 'docs/getting-started.md'), 'utf8')
    expect(
      fencedBlocks(text).some((b) => b.words[0] === 'yaml' && b.body.includes('apiVersion: proxops/v1alpha1')),
    ).toBe(true)
  })
})
