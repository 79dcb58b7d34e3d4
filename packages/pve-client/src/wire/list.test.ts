import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { splitList } from './list.js'

describe('splitList (PVE::Tools::split_list)', () => {
  it('splits on , ; and whitespace, dropping empty items', () => {
    expect(splitList('a,b;c d\te\n f')).toEqual(['a', 'b', 'c', 'd', 'e', 'f'])
    expect(splitList(' ,a,,;b; ')).toEqual(['a', 'b'])
    expect(splitList('')).toEqual([])
    expect(splitList(undefined)).toEqual([])
    expect(splitList(null)).toEqual([])
  })

  const item = fc.stringMatching(/^[a-z0-9:._-]{1,8}$/)
  const sep = fc.stringMatching(/^[,; \t\n]{1,3}$/)
  test.prop([fc.array(item, { maxLength: 6 }), sep, sep])(
    'joining items with any separators gives them back',
    (items, s, edge) => {
      expect(splitList(edge + items.join(s) + edge)).toEqual(items)
    },
  )
})
