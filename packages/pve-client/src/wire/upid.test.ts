import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { formatUpid, isUpid, parseUpid, type Upid } from './upid.js'
import { WireError } from './errors.js'
import { returnsOrWireError } from '../test-support/codec.js'

describe('UPID', () => {
  it('parses PVE task ids, including token users and empty ids', () => {
    expect(parseUpid('UPID:pve:0012AB34:0A1B2C3D:6650F00D:qmclone:9000:root@pam!gitops:')).toEqual({
      node: 'pve',
      pid: 0x0012ab34,
      pstart: 0x0a1b2c3d,
      starttime: 0x6650f00d,
      type: 'qmclone',
      id: '9000',
      user: 'root@pam!gitops',
    })
    expect(parseUpid('UPID:edge1:00000001:123456789:6650F00D:imgcopy::root@pam:').id).toBe('')
    expect(isUpid('UPID:pve:0012AB34:0A1B2C3D:6650F00D:qmclone:9000:root@pam')).toBe(false)
  })

  it('refuses malformed ids with WIRE_UPID', () => {
    for (const bad of [
      '',
      'UPID:',
      'UPID:-pve:0012AB34:0A1B2C3D:6650F00D:x:1:u:',
      'UPID:pve:12AB34:0A1B2C3D:6650F00D:x:1:u:',
    ]) {
      expect(() => parseUpid(bad)).toThrow(expect.objectContaining({ code: 'WIRE_UPID' }))
    }
    expect(() => formatUpid({ node: 'p', pid: -1, pstart: 0, starttime: 0, type: 't', id: '', user: 'u' })).toThrow(
      WireError,
    )
  })

  const node = fc.stringMatching(/^[a-zA-Z0-9]([a-zA-Z0-9-]{0,10}[a-zA-Z0-9])?$/)
  const word = fc.stringMatching(/^[^:\s/]{1,12}$/)
  const upid: fc.Arbitrary<Upid> = fc.record({
    node,
    pid: fc.nat({ max: 0xffffffff }),
    pstart: fc.nat({ max: 0xfffffffff }),
    starttime: fc.nat({ max: 0xffffffff }),
    type: word,
    id: fc.oneof(fc.constant(''), word),
    user: word,
  })

  test.prop([upid], { numRuns: 300 })('parse(format(u)) == u and format(parse(s)) == s', (u) => {
    const s = formatUpid(u)
    expect(parseUpid(s)).toEqual(u)
    expect(formatUpid(parseUpid(s))).toBe(s)
  })

  test.prop([fc.string({ maxLength: 80 })], { numRuns: 300 })('arbitrary input: a value or WIRE_UPID', (s) => {
    returnsOrWireError(() => parseUpid(s))
  })
})
