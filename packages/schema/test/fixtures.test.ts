/**
 * Each directory under test/fixtures is a broken repository; its expected.txt lists every problem the loader
 * must report (`file:line:col code`, or `file code` for problems without a position), in order.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadRepository } from '../src/index.js'

const dir = fileURLToPath(new URL('./fixtures', import.meta.url))
const fixtures = readdirSync(dir).sort()

describe('broken repositories', () => {
  it('there is a set of them', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(20)
  })

  it.each(fixtures)('%s', async (name) => {
    const root = join(dir, name)
    const expected = readFileSync(join(root, 'expected.txt'), 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
    const model = await loadRepository({ root })
    const actual = model.errors.map((e) =>
      e.line ? `${e.file}:${e.line}:${e.column} ${e.code}` : `${e.file} ${e.code}`,
    )
    expect(
      actual,
      model.errors.map((e) => `${e.file}:${e.line}:${e.column} ${e.code} ${e.message}`).join('\n'),
    ).toEqual(expected)
    for (const e of model.errors) expect(e.message.length).toBeGreaterThan(10)
  })
})
