import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { bytesToWholeMiB, formatGiB, formatQuantity, GiB, MiB, parseQuantity } from './quantity.js'

const bytes = (input: unknown): number => {
  const r = parseQuantity(input)
  if (!r.ok) throw new Error(r.message)
  return r.bytes
}

describe('parseQuantity', () => {
  it.each([
    ['0', 0],
    ['512', 512],
    ['512B', 512],
    ['1K', 1000],
    ['1kb', 1000],
    ['1M', 1e6],
    ['8G', 8e9],
    ['2T', 2e12],
    ['1P', 1e15],
    ['1Ki', 1024],
    ['1KiB', 1024],
    ['8Gi', 8 * GiB],
    ['8GiB', 8 * GiB],
    ['8gib', 8 * GiB],
    ['8GIB', 8 * GiB],
    ['512MiB', 512 * MiB],
    ['1TiB', 1024 * GiB],
    ['1PiB', 1024 ** 5],
    [' 4 MiB ', 4 * MiB],
  ])('%s -> %d bytes', (input, expected) => {
    expect(bytes(input)).toBe(expected)
  })

  it('reads a YAML number as bytes', () => {
    expect(bytes(1048576)).toBe(MiB)
  })

  it.each(['', '1.5GiB', '-1G', 'GiB', '8 GB B', '8XB', '8Gibibytes', '0x10'])('rejects %j', (input) => {
    const r = parseQuantity(input)
    expect(r.ok).toBe(false)
    expect(r.ok ? '' : r.code).toBe('quantity-invalid')
  })

  it('rejects fractional and negative numbers and non-scalars', () => {
    expect(parseQuantity(1.5)).toMatchObject({ ok: false, code: 'quantity-invalid' })
    expect(parseQuantity(-1)).toMatchObject({ ok: false, code: 'quantity-invalid' })
    expect(parseQuantity(null)).toMatchObject({ ok: false, code: 'quantity-invalid' })
  })

  it('rejects sizes beyond the safe integer range', () => {
    expect(parseQuantity('9000PiB')).toMatchObject({ ok: false, code: 'quantity-range' })
    expect(parseQuantity(2 ** 60)).toMatchObject({ ok: false, code: 'quantity-range' })
  })
})

describe('formatQuantity / formatGiB', () => {
  it('uses the largest exact binary unit', () => {
    expect(formatQuantity(8 * GiB)).toBe('8GiB')
    expect(formatQuantity(1536 * MiB)).toBe('1536MiB')
    expect(formatQuantity(1500)).toBe('1500')
    expect(formatQuantity(0)).toBe('0')
    expect(formatQuantity(3e9, 'decimal')).toBe('3GB')
  })

  it('prints the create-form GiB token', () => {
    expect(formatGiB(32 * GiB)).toBe('32')
    expect(formatGiB(512 * MiB)).toBe('0.5')
    expect(formatGiB(4 * MiB)).toBe('0.00390625')
  })

  it('knows whole MiB', () => {
    expect(bytesToWholeMiB(8 * GiB)).toBe(8192)
    expect(bytesToWholeMiB(8e9)).toBeUndefined()
  })
})

describe('properties', () => {
  test.prop([fc.maxSafeNat()])('parse(format(n)) = n, binary', (n) => {
    expect(bytes(formatQuantity(n))).toBe(n)
  })
  test.prop([fc.maxSafeNat()])('parse(format(n)) = n, decimal', (n) => {
    expect(bytes(formatQuantity(n, 'decimal'))).toBe(n)
  })
  const units: Array<[string, number]> = [
    ['', 1],
    ['B', 1],
    ['K', 1e3],
    ['KB', 1e3],
    ['M', 1e6],
    ['MB', 1e6],
    ['G', 1e9],
    ['GB', 1e9],
    ['T', 1e12],
    ['TB', 1e12],
    ['Ki', 1024],
    ['KiB', 1024],
    ['Mi', MiB],
    ['MiB', MiB],
    ['Gi', GiB],
    ['GiB', GiB],
    ['Ti', 1024 ** 4],
    ['TiB', 1024 ** 4],
  ]
  test.prop([fc.integer({ min: 0, max: 4096 }), fc.constantFrom(...units), fc.boolean()])(
    'n<unit> is n times the unit factor, in any case',
    (n, [unit, factor], upper) => {
      const text = `${n}${upper ? unit.toUpperCase() : unit.toLowerCase()}`
      expect(bytes(text)).toBe(n * factor)
    },
  )
  test.prop([fc.integer({ min: 0, max: 2 ** 20 })])('whole MiB round-trip through formatGiB', (mib) => {
    expect(Number(formatGiB(mib * MiB)) * GiB).toBe(mib * MiB)
  })
})
