import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { formatResize, formatSize, parseResize, parseSize } from './size.js'
import { WireError } from './errors.js'
import { returnsOrWireError } from '../test-support/codec.js'

describe('disk sizes', () => {
  it('parses PVE spellings', () => {
    expect(parseSize('32G')).toBe(32 * 1024 ** 3)
    expect(parseSize('32GiB')).toBe(32 * 1024 ** 3)
    expect(parseSize('512M')).toBe(512 * 1024 ** 2)
    expect(parseSize('1T')).toBe(1024 ** 4)
    expect(parseSize('528K')).toBe(528 * 1024)
    expect(parseSize('34359738368')).toBe(32 * 1024 ** 3)
    expect(parseSize('1.5G')).toBe(1.5 * 1024 ** 3)
  })

  it('prints with the largest exact unit, as format_size', () => {
    expect(formatSize(32 * 1024 ** 3)).toBe('32G')
    expect(formatSize(4 * 1024 ** 2)).toBe('4M')
    expect(formatSize(528 * 1024)).toBe('528K')
    expect(formatSize(1024 ** 4)).toBe('1T')
    expect(formatSize(1000)).toBe('1000')
    expect(formatSize(1536 * 1024 ** 2)).toBe('1536M')
  })

  it('parses and prints resize forms', () => {
    expect(parseResize('+2G')).toEqual({ relative: true, bytes: 2 * 1024 ** 3 })
    expect(parseResize('50G')).toEqual({ relative: false, bytes: 50 * 1024 ** 3 })
    expect(formatResize({ relative: true, bytes: 2 * 1024 ** 3 })).toBe('+2G')
    expect(() => parseResize('2GiB')).toThrow(WireError)
    expect(() => parseResize('-2G')).toThrow(WireError)
  })

  it('refuses garbage with WIRE_SIZE', () => {
    for (const bad of ['', '32 G', '32g', 'G', '-1', '1.G', '99999999999999999999T']) {
      expect(() => parseSize(bad, 'scsi0')).toThrow(expect.objectContaining({ code: 'WIRE_SIZE' }))
    }
    expect(() => formatSize(-1)).toThrow(WireError)
    expect(() => formatSize(1.5)).toThrow(WireError)
  })

  test.prop([fc.maxSafeNat()], { numRuns: 300 })('parse(format(n)) == n', (n) => {
    expect(parseSize(formatSize(n))).toBe(n)
  })

  test.prop([fc.boolean(), fc.nat({ max: 2 ** 40 })], { numRuns: 200 })('resize round trip', (relative, bytes) => {
    expect(parseResize(formatResize({ relative, bytes }))).toEqual({ relative, bytes })
  })

  test.prop([fc.string({ maxLength: 30 })], { numRuns: 300 })('arbitrary input: a value or WIRE_SIZE', (s) => {
    returnsOrWireError(() => parseSize(s))
    returnsOrWireError(() => parseResize(s))
  })
})
