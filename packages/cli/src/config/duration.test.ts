import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { formatDuration, parseDuration } from './duration.js'

describe('durations', () => {
  it('parses the forms config uses', () => {
    expect(parseDuration('30s')).toBe(30_000)
    expect(parseDuration('1h30m')).toBe(5_400_000)
    expect(parseDuration('250ms')).toBe(250)
    expect(parseDuration('45')).toBe(45_000)
    expect(parseDuration('thirty')).toBeUndefined()
    expect(parseDuration('30 s')).toBeUndefined()
    expect(parseDuration('')).toBeUndefined()
  })
  test.prop([fc.integer({ min: 0, max: 10 * 86_400_000 })], { numRuns: 200 })(
    'format then parse is the identity',
    (ms) => {
      expect(parseDuration(formatDuration(ms))).toBe(ms)
    },
  )
})
