import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { parseDuration } from './duration.js'

describe('durations', () => {
  it('parses the forms config uses', () => {
    expect(parseDuration('30s')).toBe(30_000)
    expect(parseDuration('1h30m')).toBe(5_400_000)
    expect(parseDuration('250ms')).toBe(250)
    expect(parseDuration('45')).toBe(45_000)
    expect(parseDuration('1.5s')).toBe(1500)
    expect(parseDuration('0')).toBe(0)
    expect(parseDuration('thirty')).toBeUndefined()
    expect(parseDuration('30 s')).toBeUndefined()
    expect(parseDuration('')).toBeUndefined()
  })
  const part = fc.integer({ min: 0, max: 1000 })
  test.prop([part, part, part, part], { numRuns: 200 })(
    'sums the hours, minutes, seconds and milliseconds a Go-style duration names',
    (h, m, s, ms) => {
      const text = `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}${ms ? `${ms}ms` : ''}` || '0s'
      expect(parseDuration(text)).toBe(((h * 60 + m) * 60 + s) * 1000 + ms)
    },
  )
})
