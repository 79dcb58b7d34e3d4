import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { formatTags, normaliseTagString, parseTags, readTags } from './tags.js'
import { WireError } from './errors.js'
import { returnsOrWireError } from '../test-support/codec.js'

describe('tags', () => {
  it('splits on ; , and whitespace and normalises like PVE', () => {
    expect(parseTags('Web;prod;web')).toEqual(['Web', 'prod', 'web'])
    expect(parseTags('a, b  c;d')).toEqual(['a', 'b', 'c', 'd'])
    expect(parseTags(undefined)).toEqual([])
    expect(normaliseTagString('Web;prod;web')).toBe('prod;web')
    expect(normaliseTagString('zeta,Alpha beta')).toBe('alpha;beta;zeta')
    expect(formatTags([])).toBe('')
    expect(normaliseTagString('proxops;Web')).toBe(normaliseTagString('web,proxops'))
  })

  it('refuses invalid characters with WIRE_TAGS', () => {
    expect(() => parseTags('ok;bad/tag')).toThrow(expect.objectContaining({ code: 'WIRE_TAGS' }))
    expect(() => parseTags('-lead')).toThrow(WireError)
    expect(() => formatTags(['a b'])).toThrow(WireError)
  })

  const tag = fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_+.-]{0,8}$/)
  const sep = fc.constantFrom(';', ',', ' ', ' ; ', '\t', ',,')

  test.prop([fc.array(tag, { maxLength: 8 })], { numRuns: 200 })(
    'normalised form is a fixed point and sorted/unique/lower',
    (tags) => {
      const once = formatTags(tags)
      expect(normaliseTagString(once)).toBe(once)
      const list = parseTags(once)
      expect(list).toEqual([...new Set(tags.map((t) => t.toLowerCase()))].sort())
    },
  )

  test.prop([fc.array(tag, { minLength: 1, maxLength: 8 }), sep], { numRuns: 200 })(
    'any separator gives the same set',
    (tags, s) => {
      expect(normaliseTagString(tags.join(s))).toBe(formatTags(tags))
    },
  )

  test.prop([fc.string({ maxLength: 40 })], { numRuns: 300 })('arbitrary input: a value or WIRE_TAGS', (s) => {
    returnsOrWireError(() => normaliseTagString(s))
  })
})

describe('readTags', () => {
  it('reads `;`, `,` and whitespace separated tags, lower-cased, de-duplicated and sorted', () => {
    expect(readTags('proxops;web')).toEqual(['proxops', 'web'])
    expect(readTags('Web, proxops  db;web')).toEqual(['db', 'proxops', 'web'])
    expect(readTags(undefined)).toEqual([])
    expect(readTags(' ; ,')).toEqual([])
  })

  it('finds the ownership tag whatever separator joins it (property)', () => {
    const tag = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,8}$/)
    fc.assert(
      fc.property(fc.array(tag, { maxLength: 6 }), fc.constantFrom(';', ',', ' ', ', '), fc.nat(6), (tags, sep, at) => {
        const all = [...tags]
        all.splice(Math.min(at, all.length), 0, 'PROXOPS')
        const parsed = readTags(all.join(sep))
        expect(parsed).toContain('proxops')
        expect(parsed).toEqual([...parsed].sort())
        expect(new Set(parsed).size).toBe(parsed.length)
      }),
      { numRuns: 200 },
    )
  })
})
