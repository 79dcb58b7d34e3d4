import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { aadFor, openEnc, parseEnc, sealEnc } from './cipher.js'

const key = new Uint8Array(32).fill(7)

describe('ENC[] values', () => {
  test.prop([fc.uint8Array({ maxLength: 200 }), fc.array(fc.string(), { maxLength: 4 })], { numRuns: 200 })(
    'seal then open with the same AAD gives the plaintext back; a 32-byte IV is used',
    (plain, path) => {
      const enc = parseEnc(sealEnc(plain, 'str', key, aadFor(path)))
      expect(enc?.iv.length).toBe(32)
      expect(enc && Buffer.from(openEnc(enc, key, aadFor(path)) ?? []).equals(Buffer.from(plain))).toBe(true)
    },
  )

  test('another AAD or key fails authentication', () => {
    const enc = parseEnc(sealEnc(Buffer.from('x'), 'str', key, 'a:b:'))
    expect(enc).toBeDefined()
    if (!enc) return
    expect(openEnc(enc, key, 'a:')).toBeUndefined()
    expect(openEnc(enc, new Uint8Array(32), 'a:b:')).toBeUndefined()
  })

  test('AAD: keys joined with ":" plus a trailing ":"', () => {
    expect(aadFor(['app2', 'db', 'password'])).toBe('app2:db:password:')
    expect(aadFor([])).toBe(':')
  })

  test('parse is strict: canonical base64, 16-byte tag, known type', () => {
    const good = sealEnc(Buffer.from('hello'), 'str', key, 'k:')
    expect(parseEnc(good)).toBeDefined()
    expect(parseEnc(good.replace('type:str', 'type:xyz'))).toBeUndefined()
    expect(parseEnc(good.replace(/tag:[^,]+/, 'tag:AAAA'))).toBeUndefined()
    expect(parseEnc(good.replace(/data:[^,]+/, 'data:a!b='))).toBeUndefined()
    // non-zero trailing bits decode to the same bytes in lenient decoders: rejected here
    expect(
      parseEnc('ENC[AES256_GCM,data:Ah==,iv:' + 'A'.repeat(43) + '=,tag:' + 'A'.repeat(22) + '==,type:int]'),
    ).toBeUndefined()
    expect(parseEnc(`${good}x`)).toBeUndefined()
  })
})
