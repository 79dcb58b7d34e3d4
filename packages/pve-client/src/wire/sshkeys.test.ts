import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { decodeSshKeys, encodeSshKeys, isUrlEncoded, sshKeyLines, sshKeySet } from './sshkeys.js'
import { WireError } from './errors.js'
import { returnsOrWireError } from '../test-support/codec.js'

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBb+/x= ops@laptop'

describe('sshkeys', () => {
  it('encodes exactly as encodeURIComponent: %20 for spaces, never +', () => {
    const enc = encodeSshKeys([KEY, 'ssh-rsa AAAA x@y'])
    expect(enc).toBe(encodeURIComponent(`${KEY}\nssh-rsa AAAA x@y`))
    expect(enc).not.toContain('+')
    expect(enc).toContain('%20')
    expect(enc).toContain('%2B')
    expect(enc).toContain('%0A')
    expect(isUrlEncoded(enc)).toBe(true)
  })

  it('refuses values PVE rejects (invalid urlencoded string)', () => {
    expect(() => decodeSshKeys(KEY)).toThrow(expect.objectContaining({ code: 'WIRE_SSHKEYS' }))
    expect(() => decodeSshKeys('ssh-rsa+AAAA')).toThrow(WireError)
    expect(() => decodeSshKeys('%E0%A4%A')).toThrow(WireError)
    expect(() => encodeSshKeys('\uD800')).toThrow(WireError)
  })

  it('compares as a key set', () => {
    expect(sshKeySet(`b\n a \n\nb\r\n`)).toEqual(['a', 'b'])
    expect(sshKeyLines(`b\n a \n\nb\r\n`)).toEqual(['b', 'a'])
  })

  test.prop([fc.string({ unit: 'grapheme', maxLength: 80 })], { numRuns: 300 })('decode(encode(s)) == s', (s) => {
    const enc = encodeSshKeys(s)
    expect(isUrlEncoded(enc)).toBe(true)
    expect(decodeSshKeys(enc)).toBe(s)
  })

  test.prop([fc.string({ unit: 'binary', maxLength: 40 })], { numRuns: 300 })(
    'arbitrary input: a value or WIRE_SSHKEYS',
    (s) => {
      returnsOrWireError(() => encodeSshKeys(s))
      returnsOrWireError(() => decodeSshKeys(s))
    },
  )
})
