import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { decodeGuestConfig } from './config.js'
import { returnsOrWireError } from '../test-support/codec.js'

describe('guest config decoding', () => {
  it('turns PVE value types into string form and separates digest', () => {
    const raw = {
      digest: '3f7c2a1e9b0d4c5e6f708192a3b4c5d6e7f80912',
      memory: '2048',
      cores: 2,
      onboot: 1,
      template: true,
      cpulimit: '1.5',
      description: null,
      tags: 'prod;web',
    }
    expect(decodeGuestConfig(raw)).toEqual({
      digest: '3f7c2a1e9b0d4c5e6f708192a3b4c5d6e7f80912',
      values: { memory: '2048', cores: '2', onboot: '1', template: '1', cpulimit: '1.5', tags: 'prod;web' },
    })
  })

  it('keeps a __proto__ key as data', () => {
    const decoded = decodeGuestConfig(JSON.parse('{"__proto__":"x","digest":"d"}'))
    expect(Object.getPrototypeOf(decoded.values)).toBe(Object.prototype)
    expect(Object.prototype.hasOwnProperty.call(decoded.values, '__proto__')).toBe(true)
  })

  it("turns an LXC's raw lxc.* pairs (pve-container parse_pct_config) into one value, the file's lines in order", () => {
    const raw = {
      digest: 'd',
      hostname: 'ct',
      lxc: [
        ['lxc.cgroup2.devices.allow', 'c 10:200 rwm'],
        ['lxc.mount.entry', '/dev/net dev/net none bind,create=dir'],
        ['lxc.cgroup2.devices.allow', 'c 188:* rwm'],
      ],
    }
    expect(decodeGuestConfig(raw).values).toEqual({
      hostname: 'ct',
      lxc: 'lxc.cgroup2.devices.allow: c 10:200 rwm\nlxc.mount.entry: /dev/net dev/net none bind,create=dir\nlxc.cgroup2.devices.allow: c 188:* rwm',
    })
    expect(() => decodeGuestConfig({ lxc: [['lxc.a']] })).toThrow(
      expect.objectContaining({ code: 'WIRE_CONFIG', field: 'config.lxc[0]' }),
    )
  })

  it('refuses non-objects and nested values with WIRE_CONFIG', () => {
    expect(() => decodeGuestConfig([])).toThrow(expect.objectContaining({ code: 'WIRE_CONFIG' }))
    expect(() => decodeGuestConfig({ a: { b: 1 } })).toThrow(expect.objectContaining({ code: 'WIRE_CONFIG' }))
  })

  test.prop(
    [fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string(), fc.integer(), fc.boolean()), { maxKeys: 8 })],
    {
      numRuns: 200,
    },
  )('every scalar survives as its string form', (raw) => {
    const { digest, values } = decodeGuestConfig(raw)
    for (const [k, v] of Object.entries(raw)) {
      const s = typeof v === 'boolean' ? (v ? '1' : '0') : String(v)
      if (k === 'digest') expect(digest).toBe(s)
      else expect(values[k]).toBe(s)
    }
  })

  test.prop([fc.anything()], { numRuns: 300 })('arbitrary input: a value or a WireError', (v) => {
    returnsOrWireError(() => decodeGuestConfig(v))
  })
})
