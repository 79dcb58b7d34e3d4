import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadApidoc, type ApiNode, type SchemaProp } from './load.js'
import { perlPatternToJs, schemaPattern } from './perl-regex.js'

// apidoc.json: 79 patterns use Perl syntax, all matched anchored ^(?:re)$
describe('Perl regex translation', () => {
  it('turns (?^:...) into a plain group and (?^i:...) into a case-insensitive expression', () => {
    expect(perlPatternToJs('(?^:\\d+(?:;\\d+)*)')).toEqual({ source: '(?:\\d+(?:;\\d+)*)', flags: '' })
    expect(perlPatternToJs('(?^i:[a-z0-9_][a-z0-9_\\-\\+\\.]*)').flags).toBe('i')
    expect(
      schemaPattern('(?^i:[a-z0-9_][a-z0-9_\\-\\+\\.]*)(?:;(?^i:[a-z0-9_][a-z0-9_\\-\\+\\.]*))*').test('Web;prod'),
    ).toBe(true)
  })

  it('expands {,N} to {0,N} (drive product/vendor patterns)', () => {
    const re = schemaPattern('[A-Za-z0-9\\-_\\s]{,16}')
    expect(re.test('')).toBe(true)
    expect(re.test('a'.repeat(16))).toBe(true)
    expect(re.test('a'.repeat(17))).toBe(false)
  })

  it('anchors the whole pattern, so alternations cannot match a prefix', () => {
    const re = schemaPattern('/dev/parport\\d+|/dev/usb/lp\\d+')
    expect(re.test('/dev/parport0')).toBe(true)
    expect(re.test('/dev/parport0x')).toBe(false)
    expect(re.test('x/dev/usb/lp1')).toBe(false)
  })

  it("keeps Perl's $: a single trailing newline still matches", () => {
    expect(schemaPattern('\\d+').test('12\n')).toBe(true)
    expect(schemaPattern('\\d+').test('12\n\n')).toBe(false)
    expect(schemaPattern('^\\d+$').test('12\n')).toBe(true)
  })

  it('leaves character classes alone ($ and { inside a class are literal)', () => {
    const re = schemaPattern('[$]{1,2}')
    expect(re.test('$$')).toBe(true)
  })

  it('agrees with a direct JS translation for plain patterns (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9;-]{0,12}$/), (s) => {
        expect(schemaPattern('\\d+(?:-\\d+)?(?:;\\d+(?:-\\d+)?)*').test(s)).toBe(
          /^(?:\d+(?:-\d+)?(?:;\d+(?:-\d+)?)*)$/.test(s),
        )
      }),
      { numRuns: 200 },
    )
  })

  const apidoc = loadApidoc('9.1')
  it.skipIf(!apidoc.ok)('compiles every pattern of the 9.1 schema', () => {
    const patterns = new Set<string>()
    const visit = (p: SchemaProp | undefined): void => {
      if (!p) return
      if (p.pattern) patterns.add(p.pattern)
      if (p.format && typeof p.format === 'object') Object.values(p.format).forEach(visit)
      Object.values(p.properties ?? {}).forEach(visit)
      visit(p.items)
    }
    const walk = (n: ApiNode): void => {
      for (const m of Object.values(n.info ?? {})) Object.values(m?.parameters?.properties ?? {}).forEach(visit)
      n.children?.forEach(walk)
    }
    if (apidoc.ok) apidoc.tree.forEach(walk)
    expect(patterns.size).toBeGreaterThan(50)
    for (const p of patterns) expect(() => schemaPattern(p), p).not.toThrow()
  })
})
