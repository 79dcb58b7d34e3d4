import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { editDistance, nearest } from './suggest.js'

const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '-'), maxLength: 8 })

describe('editDistance', () => {
  it('counts inserts, deletes, substitutions and neighbour swaps', () => {
    expect(editDistance('diff', 'diff')).toBe(0)
    expect(editDistance('dif', 'diff')).toBe(1)
    expect(editDistance('clsuter', 'cluster')).toBe(1)
    expect(editDistance('aply', 'apply')).toBe(1)
    expect(editDistance('', 'run')).toBe(3)
    expect(editDistance('kitten', 'sitting')).toBe(3)
  })
  test.prop([word, word])('is symmetric, and zero only for equal words', (a, b) => {
    expect(editDistance(a, b)).toBe(editDistance(b, a))
    expect(editDistance(a, b) === 0).toBe(a === b)
  })
  test.prop([word, word])('is at least the difference of lengths and at most the longer length', (a, b) => {
    const d = editDistance(a, b)
    expect(d).toBeGreaterThanOrEqual(Math.abs(a.length - b.length))
    expect(d).toBeLessThanOrEqual(Math.max(a.length, b.length))
  })
})

describe('nearest', () => {
  const commands = ['diff', 'apply', 'status', 'validate', 'adopt', 'run', 'version', 'help', 'completion']
  it('suggests typos and unique prefixes, nothing for far-off words', () => {
    expect(nearest('dif', commands)).toBe('diff')
    expect(nearest('aply', commands)).toBe('apply')
    expect(nearest('stauts', commands)).toBe('status')
    expect(nearest('valid', commands)).toBe('validate')
    expect(nearest('APPLY', commands)).toBe('apply')
    expect(nearest('zzz', commands)).toBeUndefined()
    expect(nearest('deploy', commands)).toBeUndefined()
    expect(nearest('clustr', ['cluster', 'color', 'config'])).toBe('cluster')
    expect(nearest('yse', ['yes', 'plan'])).toBe('yes')
  })
  test.prop([fc.constantFrom(...commands)])('a known name suggests itself', (name) => {
    expect(nearest(name, commands)).toBe(name)
  })
  test.prop([word, fc.array(word, { maxLength: 6 })])(
    'suggests a known name within a third of the longer word (or its one prefix), and none nearer is left out',
    (typed, known) => {
      const t = typed.toLowerCase()
      const close = (k: string) =>
        editDistance(t, k.toLowerCase()) <= Math.max(1, Math.floor(Math.max(t.length, k.length) / 3))
      const prefixed = known.filter((k) => t.length >= 2 && k.startsWith(t))
      const guess = nearest(typed, known)
      if (prefixed.length === 1) {
        expect(guess).toBe(prefixed[0])
        return
      }
      expect(guess === undefined).toBe(!known.some(close))
      if (guess === undefined) return
      expect(close(guess)).toBe(true)
      const d = editDistance(t, guess.toLowerCase())
      for (const k of known.filter(close)) expect(editDistance(t, k.toLowerCase())).toBeGreaterThanOrEqual(d)
    },
  )
  it('suggests manifest fields by the same rule (a swap is one edit)', () => {
    expect(nearest('memroy', ['memory', 'cpu', 'disks'])).toBe('memory')
    expect(nearest('netwroks', ['networks', 'node'])).toBe('networks')
    expect(nearest('Memory', ['memory'])).toBe('memory')
  })
})
