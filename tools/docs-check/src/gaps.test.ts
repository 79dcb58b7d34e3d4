import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { mergeGaps, rebaseLinks } from './gaps.js'

const docs = join(import.meta.dirname, '..', '..', '..', 'docs')

describe('links in docs/gaps/ files', () => {
  it('are rebased for docs/GAPS.md, one folder up', () => {
    expect(rebaseLinks('see [a](../simulator-model.md), [b](planner.md#x), [c](https://x.org/a), [d](#top)')).toBe(
      'see [a](simulator-model.md), [b](gaps/planner.md#x), [c](https://x.org/a), [d](#top)',
    )
  })
})

describe('docs/GAPS.md', () => {
  it('is the merge of docs/gaps/*.md (UPDATE_GAPS=1 rewrites it)', () => {
    const merged = mergeGaps(docs)
    if (process.env.UPDATE_GAPS === '1') writeFileSync(join(docs, 'GAPS.md'), merged)
    expect(readFileSync(join(docs, 'GAPS.md'), 'utf8')).toBe(merged)
  })

  it('has a section for every area file, each with at least one gap', () => {
    const merged = mergeGaps(docs)
    expect(merged.match(/^## /gm)?.length).toBeGreaterThanOrEqual(9)
    for (const section of merged.split(/^## /m).slice(1)) expect(section).toMatch(/^- /m)
  })

  it('says what "the reference" is before any section compares with it', () => {
    const merged = mergeGaps(docs)
    const said = merged.indexOf('**The reference**')
    expect(said).toBeGreaterThan(0)
    expect(said).toBeLessThan(merged.search(/\bthe reference\b/))
  })
})
