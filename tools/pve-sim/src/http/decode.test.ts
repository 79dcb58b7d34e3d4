import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BodyDecodeError, decodeUrlencoded, extractParams } from './decode.js'

const enc = (s: string): string => Buffer.from(s, 'utf8').toString('latin1')

// pve-http-server decode_urlencoded / extract_params
describe('form decoding', () => {
  it('splits pairs on & and ;', () => {
    expect(decodeUrlencoded('tags=a;b&name=x')).toEqual({ tags: 'a', b: null, name: 'x' })
  })

  it('cuts a value at an unescaped second =', () => {
    expect(decodeUrlencoded('ipconfig0=ip=10.0.0.5/24,gw=10.0.0.1')).toEqual({ ipconfig0: 'ip' })
    expect(decodeUrlencoded('ipconfig0=ip%3D10.0.0.5%2F24')).toEqual({ ipconfig0: 'ip=10.0.0.5/24' })
  })

  it('decodes + as space and %XX as UTF-8', () => {
    expect(decodeUrlencoded(enc('description=a+b%20c%C3%A9'))).toEqual({ description: 'a b cé' })
  })

  it('turns repeated keys into arrays and a bare key into undef', () => {
    expect(decodeUrlencoded('delete=a&delete=b&delete=c')).toEqual({ delete: ['a', 'b', 'c'] })
    expect(decodeUrlencoded('force&x=1')).toEqual({ force: null, x: '1' })
    expect(decodeUrlencoded('x=')).toEqual({ x: null })
    expect(decodeUrlencoded('x==y')).toEqual({ x: '' })
  })

  it('drops trailing empty pairs like Perl split, keeps inner ones as an empty key', () => {
    expect(decodeUrlencoded('a=1&')).toEqual({ a: '1' })
    expect(decodeUrlencoded('a=1&&b=2')).toEqual({ a: '1', '': null, b: '2' })
  })

  it('round-trips anything URLSearchParams encodes (property)', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ minLength: 1, maxLength: 16 })),
        (obj) => {
          const body = new URLSearchParams(obj).toString()
          const keyBytes = (k: string): string => Buffer.from(k, 'utf8').toString('latin1')
          const expected = Object.fromEntries(Object.entries(obj).map(([k, v]) => [keyBytes(k), v]))
          expect(decodeUrlencoded(enc(body))).toEqual(expected)
        },
      ),
      { numRuns: 200 },
    )
  })
})

describe('extract_params', () => {
  it('reads form bodies for POST/PUT only and lets the query override', () => {
    const body = Buffer.from('name=a&memory=512')
    expect(extractParams('POST', 'application/x-www-form-urlencoded', body, 'name=b&_dc=123')).toEqual({
      name: 'b',
      memory: '512',
    })
    expect(extractParams('GET', undefined, Buffer.alloc(0), 'type=vm')).toEqual({ type: 'vm' })
  })

  it('reads JSON bodies (charset parameter allowed) with their types', () => {
    const body = Buffer.from(JSON.stringify({ onboot: true, cores: 2, tags: 'a;b' }))
    expect(extractParams('PUT', 'application/json; charset=utf-8', body, '')).toEqual({
      onboot: true,
      cores: 2,
      tags: 'a;b',
    })
  })

  it('fails on malformed JSON and on JSON that is not an object', () => {
    expect(() => extractParams('POST', 'application/json', Buffer.from('{x'), '')).toThrow(BodyDecodeError)
    expect(() => extractParams('POST', 'application/json', Buffer.from('[1]'), '')).toThrow('Not a HASH reference')
  })
})
