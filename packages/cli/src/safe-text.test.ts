import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { paint } from './render/color.js'
import { safeLine, safeLines, safeOutput, safeValue } from './safe-text.js'

/** the code points a terminal or a reader can be fooled by (the list safe-text.ts escapes) */
const isUnsafe = (cp: number): boolean =>
  cp <= 0x1f ||
  (cp >= 0x7f && cp <= 0x9f) ||
  cp === 0x061c ||
  cp === 0x200e ||
  cp === 0x200f ||
  cp === 0x2028 ||
  cp === 0x2029 ||
  (cp >= 0x202a && cp <= 0x202e) ||
  (cp >= 0x2066 && cp <= 0x2069)
const unsafeIn = (text: string, keep = ''): string[] =>
  [...text].filter((c) => isUnsafe(c.codePointAt(0)!) && !keep.includes(c))

/** hostile text: terminal sequences, lone controls and bidi marks among ordinary characters */
const hostile = fc
  .array(
    fc.oneof(
      fc.string(),
      fc.constantFrom(
        '\u001b[2J',
        '\u001b]0;pwned\u0007',
        '\u001b]8;;https://evil.example\u001b\\',
        '\u009b31m',
        '\u009d0;x\u009c',
        '\r',
        '\n',
        '\t',
        '\u202e',
        '\u2066',
        '\u007f',
        '\u001b[31m',
      ),
      fc.integer({ min: 0, max: 0x2070 }).map((cp) => String.fromCodePoint(cp)),
    ),
  )
  .map((parts) => parts.join(''))

describe('safe-text', () => {
  test.prop([hostile])('no unsafe character survives; newlines and tabs only where lines are kept', (text) => {
    expect(unsafeIn(safeLine(text))).toEqual([])
    expect(unsafeIn(safeLines(text), '\n\t')).toEqual([])
    expect(safeLines(text).split('\n').length).toBe(text.split('\n').length)
  })

  test.prop([hostile])('on output only ProxOps own colour sequences keep their ESC', (text) => {
    const p = paint(true)
    const out = safeOutput(p.red(text) + p.bold(safeLine(text)))
    const withoutOwn = out.replace(/\u001b\[(?:1|2|22|31|32|33|35|39)m/g, '')
    expect(unsafeIn(withoutOwn, '\n\t')).toEqual([])
    // what ProxOps paints around safe text reaches the terminal as it was
    expect(safeOutput(p.green(safeLine(text)))).toBe(p.green(safeLine(text)))
  })

  test.prop([fc.jsonValue()])('a JSON text keeps its value: an escape means the same character', (value) => {
    const json = JSON.stringify(value, null, 2)
    // compared with what the JSON text itself means (JSON has no -0: it reads back as 0)
    expect(JSON.parse(safeOutput(json))).toEqual(JSON.parse(json))
    expect(unsafeIn(safeOutput(json), '\n')).toEqual([])
  })

  test.prop([fc.string({ unit: 'grapheme' })])('leaves text without unsafe characters as it is', (text) => {
    fc.pre(unsafeIn(text).length === 0)
    expect(safeLine(text)).toBe(text)
    expect(safeOutput(text)).toBe(text)
  })

  it('writes an escape a person can read, and keeps the document shape', () => {
    expect(safeLine('boom\u001b]0;pwned\u0007\r\nnext')).toBe('boom\\u001b]0;pwned\\u0007 next')
    expect(safeLines('a\n\u009b2Jb\u202e')).toBe('a\n\\u009b2Jb\\u202e')
    expect(safeValue({ 'k\u001b': ['x\u001b[2J', 1, null, { n: 'ok\n' }] })).toEqual({
      'k\\u001b': ['x\\u001b[2J', 1, null, { n: 'ok\n' }],
    })
  })
})

describe('safe text, in detail (pnpm mutate)', () => {
  it('keeps newlines and tabs of a text with lines, and an ESC just before an own colour is escaped', () => {
    expect(safeLines('a\nb\tc\rd')).toBe('a\nb\tc\\u000dd')
    expect(safeOutput('\u001b\u001b[1mx')).toBe('\\u001b\u001b[1mx')
  })
})
