import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { formatTags, parseTags } from '@proxops/pve-client/wire'
import { adoptTags, tagsField } from './tags.js'

/** The reference rule tagsField must keep: live tags normalised as PVE stores them equal the desired ones. */
function reference(live: string | undefined, want: string): boolean {
  if (live === want) return true
  try {
    return formatTags(parseTags(live ?? '')) === want
  } catch {
    return (live ?? '') === want
  }
}

const tag = fc.constantFrom('web', 'WEB', 'Web', 'prod', 'db', 'proxops', 'ProxOps', 'a.b', 'x-1', 'bad!', 'é')
const sep = fc.constantFrom(';', ',', ' ', ';;', ' ,', '\t')

describe('tagsField', () => {
  test.prop(
    [
      fc.array(fc.constantFrom('web', 'prod', 'db', 'a.b'), { maxLength: 4 }),
      fc.option(fc.tuple(fc.array(tag, { maxLength: 6 }), fc.array(sep, { minLength: 6, maxLength: 6 })), {
        nil: undefined,
      }),
    ],
    { numRuns: 300 },
  )('compares live tags as a case-folded set, exactly like formatTags(parseTags(live))', (desired, liveParts) => {
    const live =
      liveParts === undefined ? undefined : liveParts[0].map((t, i) => `${t}${liveParts[1][i] ?? ';'}`).join('')
    const f = tagsField(desired, 'proxops')
    const want = f.create as string
    expect(f.compare(live).length === 0).toBe(reference(live, want))
  })

  test('a reordered, upper-case, repeated spelling is converged; a missing or extra tag is a write', () => {
    const f = tagsField(['web', 'prod'], 'proxops')
    expect(f.compare('PROD web,proxops;web')).toEqual([])
    expect(f.compare('prod;web')).toHaveLength(1)
    expect(f.compare('prod;proxops;web;db')).toHaveLength(1)
    expect(f.compare(undefined)).toHaveLength(1)
  })
})

describe('adoptTags', () => {
  it('drops the ownership tag and every entry marker, keeps look-alikes', () => {
    expect(adoptTags(['web', 'proxops', 'proxops.lab', 'proxops.other', 'proxopsx', 'db'], 'proxops')).toEqual([
      'web',
      'proxopsx',
      'db',
    ])
  })
})
