import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { encodeParams } from './form.js'
import { encodeSshKeys } from './sshkeys.js'
import { WireError } from './errors.js'
import { pveDecodeForm } from '../test-support/pve-form.js'
import { returnsOrWireError } from '../test-support/codec.js'

/** Every form-encoding pitfall, pinned against an independent model of PVE's form decoder. */
describe('form encoding survives PVE decoding', () => {
  const roundTrip = (params: Record<string, string | number | boolean>) =>
    pveDecodeForm(encodeParams(params).toString())

  it('keeps ; inside values (tags, boot order, trunks, mount features)', () => {
    expect(
      roundTrip({ tags: 'a;b', boot: 'order=scsi0;net0', trunks: '10;20-30', features: 'mount=nfs;cifs' }),
    ).toEqual({
      tags: 'a;b',
      boot: 'order=scsi0;net0',
      trunks: '10;20-30',
      features: 'mount=nfs;cifs',
    })
  })

  it('keeps a second = inside values (every property string)', () => {
    expect(roundTrip({ ipconfig0: 'ip=10.0.0.5/24,gw=10.0.0.1', efidisk0: 'local-lvm:1,efitype=4m' })).toEqual({
      ipconfig0: 'ip=10.0.0.5/24,gw=10.0.0.1',
      efidisk0: 'local-lvm:1,efitype=4m',
    })
  })

  it('keeps + and & and spaces', () => {
    expect(roundTrip({ description: 'a+b & c d', name: 'x' })).toEqual({ description: 'a+b & c d', name: 'x' })
  })

  it('sends booleans as 1/0, never true/false', () => {
    const body = encodeParams({ onboot: true, start: false, cores: 2 }).toString()
    expect(body).toBe('onboot=1&start=0&cores=2')
  })

  it('double-encodes sshkeys so PVE receives the urlencoded form', () => {
    const keys = encodeSshKeys('ssh-ed25519 AAAA+/= ops@laptop')
    const body = encodeParams({ sshkeys: keys }).toString()
    expect(body).toContain('ssh-ed25519%2520AAAA%252B%252F%253D%2520ops%2540laptop')
    expect(pveDecodeForm(body).sshkeys).toBe(keys)
  })

  it('refuses raw ssh keys and non-finite numbers before anything is sent', () => {
    expect(() => encodeParams({ sshkeys: 'ssh-ed25519 AAAA ops@laptop' })).toThrow(
      expect.objectContaining({ code: 'WIRE_SSHKEYS' }),
    )
    expect(() => encodeParams({ memory: Number.NaN })).toThrow(WireError)
  })

  it('leaves undefined out', () => {
    expect(encodeParams({ a: undefined, b: 'x' }).toString()).toBe('b=x')
  })

  const key = fc.stringMatching(/^[a-z][a-z0-9_-]{0,10}$/)
  test.prop(
    [fc.dictionary(key, fc.oneof(fc.string({ unit: 'grapheme' }), fc.integer(), fc.boolean()), { maxKeys: 8 })],
    {
      numRuns: 300,
    },
  )('any value arrives intact at PVE', (params) => {
    delete params.sshkeys
    const decoded = pveDecodeForm(encodeParams(params).toString())
    const expected = Object.fromEntries(
      Object.entries(params).map(([k, v]) => [k, typeof v === 'boolean' ? (v ? '1' : '0') : String(v)]),
    )
    expect(decoded).toEqual(expected)
  })

  test.prop(
    [
      fc.dictionary(fc.string({ maxLength: 6 }), fc.anything({ withNullPrototype: true, withBigInt: true }), {
        maxKeys: 5,
      }),
    ],
    {
      numRuns: 300,
    },
  )('arbitrary input: a body or a WireError', (params) => {
    returnsOrWireError(() => encodeParams(params as Record<string, string>))
  })
})
