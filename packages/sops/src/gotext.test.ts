import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { formatFloat, normalizeRfc3339, normalizeRfc3339Nano, parseGoBool, parseGoFloat, parseGoInt } from './gotext.js'

describe('formatFloat (Go FormatFloat f, -1)', () => {
  test.each([
    [3.14, '3.14'],
    [1234568000, '1234568000'],
    [25.4, '25.4'],
    [1e21, '1000000000000000000000'],
    [1.5e22, '15000000000000000000000'],
    [1e-7, '0.0000001'],
    [1.25e-10, '0.000000000125'],
    [-2.5e-7, '-0.00000025'],
    [0, '0'],
    [-0, '-0'],
    [NaN, 'NaN'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
  ])('%s -> %s', (f, s) => {
    expect(formatFloat(f)).toBe(s)
  })

  test.prop([fc.double({ noNaN: true, noDefaultInfinity: true })], { numRuns: 300 })(
    'never uses an exponent and round-trips',
    (f) => {
      const s = formatFloat(f)
      expect(s).not.toMatch(/e/i)
      expect(Object.is(parseGoFloat(s), f)).toBe(true)
    },
  )
})

describe('Go parsers', () => {
  test('ParseBool accepts the Go spellings only', () => {
    for (const t of ['1', 't', 'T', 'TRUE', 'true', 'True']) expect(parseGoBool(t)).toBe(true)
    for (const f of ['0', 'f', 'F', 'FALSE', 'false', 'False']) expect(parseGoBool(f)).toBe(false)
    for (const x of ['yes', 'no', '', 'tRUE', ' true']) expect(parseGoBool(x)).toBeUndefined()
  })

  test('Atoi is decimal int64', () => {
    expect(parseGoInt('+7')).toBe(7n)
    expect(parseGoInt('-9223372036854775808')).toBe(-(2n ** 63n))
    expect(parseGoInt('9223372036854775808')).toBeUndefined()
    expect(parseGoInt('0x10')).toBeUndefined()
    expect(parseGoInt('1_000')).toBeUndefined()
  })

  test('ParseFloat: decimal, inf and nan', () => {
    expect(parseGoFloat('.5')).toBe(0.5)
    expect(parseGoFloat('5.')).toBe(5)
    expect(parseGoFloat('-Inf')).toBe(-Infinity)
    expect(parseGoFloat('NaN')).toBeNaN()
    expect(parseGoFloat('1e400')).toBeUndefined()
    expect(parseGoFloat('abc')).toBeUndefined()
  })

  test('lastmodified is re-formatted as Go does (no fraction, zero offset as Z)', () => {
    expect(normalizeRfc3339('2024-03-25T22:08:10Z')).toBe('2024-03-25T22:08:10Z')
    expect(normalizeRfc3339('2024-03-25T22:08:10.123456Z')).toBe('2024-03-25T22:08:10Z')
    expect(normalizeRfc3339('2024-03-25T22:08:10+00:00')).toBe('2024-03-25T22:08:10Z')
    expect(normalizeRfc3339('2024-03-25T22:08:10+02:00')).toBe('2024-03-25T22:08:10+02:00')
    expect(normalizeRfc3339('2024-02-30T22:08:10Z')).toBeUndefined()
    expect(normalizeRfc3339('2024-03-25 22:08:10Z')).toBeUndefined()
  })

  test('time values are re-marshalled as RFC 3339 with nanoseconds', () => {
    expect(normalizeRfc3339Nano('2020-01-01T00:00:00.500+02:00')).toBe('2020-01-01T00:00:00.5+02:00')
    expect(normalizeRfc3339Nano('2020-01-01T00:00:00.000Z')).toBe('2020-01-01T00:00:00Z')
  })
})
