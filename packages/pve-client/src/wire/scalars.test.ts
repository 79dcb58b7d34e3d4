import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { isTrue, toBool, toInt, toNumber, toStr, optInt } from './scalars.js'
import { WireError } from './errors.js'
import { returnsOrWireError } from '../test-support/codec.js'

describe('lenient scalars', () => {
  it('decodes what PVE really sends', () => {
    expect(toInt('100')).toBe(100)
    expect(toInt(100)).toBe(100)
    expect(toInt(' +7 ')).toBe(7)
    expect(toNumber('1.5')).toBe(1.5)
    expect(toNumber('.5')).toBe(0.5)
    expect(toNumber('1e3')).toBe(1000)
    expect(toBool(1)).toBe(true)
    expect(toBool('0')).toBe(false)
    expect(toBool('on')).toBe(true)
    expect(toBool('No')).toBe(false)
    expect(toStr(2048)).toBe('2048')
    expect(toStr(true)).toBe('1')
    expect(optInt(undefined)).toBeUndefined()
    expect(optInt(null)).toBeUndefined()
  })

  test.prop([
    fc.oneof(
      fc.constantFrom<unknown>('1', '0', 'on', 'OFF', ' yes ', 'no', 'true', 'False', '', 1, 0, 2, true, false),
      fc.anything(),
    ),
  ])('isTrue is toBool where toBool reads a value, and false where it refuses', (value) => {
    let read: boolean
    try {
      read = toBool(value)
    } catch {
      read = false
    }
    expect(isTrue(value)).toBe(read)
  })

  it('refuses with a coded error naming the field, without echoing the value', () => {
    const secret = 'CANARY-s3cr3t'
    try {
      toInt(secret, 'memory')
      expect.unreachable()
    } catch (err) {
      expect(err).toBeInstanceOf(WireError)
      expect((err as WireError).code).toBe('WIRE_SCALAR')
      expect((err as WireError).message).toContain('memory')
      expect((err as WireError).message).not.toContain(secret)
    }
    expect(() => toInt('1.5')).toThrow(WireError)
    expect(() => toBool(2)).toThrow(WireError)
    expect(() => toStr({})).toThrow(WireError)
  })

  test.prop([fc.integer()], { numRuns: 200 })('integers round-trip through their string form', (n) => {
    expect(toInt(String(n))).toBe(n)
    expect(toInt(n)).toBe(n)
  })

  test.prop([fc.double({ noNaN: true, noDefaultInfinity: true })], { numRuns: 200 })(
    'finite numbers round-trip through their string form',
    (n) => {
      expect(toNumber(toStr(n))).toBe(n === 0 ? 0 : n)
    },
  )

  test.prop([fc.boolean()], { numRuns: 20 })('booleans round-trip through 1/0', (b) => {
    expect(toBool(toStr(b))).toBe(b)
  })

  test.prop([fc.anything()], { numRuns: 300 })('never throw anything but a WireError', (v) => {
    returnsOrWireError(() => toInt(v))
    returnsOrWireError(() => toNumber(v))
    returnsOrWireError(() => toBool(v))
    returnsOrWireError(() => toStr(v))
  })
})
