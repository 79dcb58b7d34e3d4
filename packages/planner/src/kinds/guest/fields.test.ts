import { fc, test } from '@fast-check/vitest'
import { formatPropertyString } from '@proxops/pve-client/wire'
import { describe, expect, it } from 'vitest'
import { parsePS, rewrite } from './fields.js'
import { guardVolume, isEmptySlot, liveSizeBytes, poolOf } from './volumes.js'

describe('live property strings', () => {
  it('parses bare default values, keys with `=` in values, and skips empty parts', () => {
    expect(parsePS('local-lvm:vm-100-disk-0,size=32G', 'file')).toEqual({
      file: 'local-lvm:vm-100-disk-0',
      size: '32G',
    })
    expect(parsePS('order=scsi0;net0', 'legacy')).toEqual({ order: 'scsi0;net0' })
    expect(parsePS('local-lvm:0,import-from=local:import/a=b.qcow2', 'file')).toEqual({
      file: 'local-lvm:0',
      'import-from': 'local:import/a=b.qcow2',
    })
    expect(parsePS('host', 'cputype')).toEqual({ cputype: 'host' })
    expect(parsePS('a=1,,b=2')).toEqual({ a: '1', b: '2' })
  })

  it('refuses what PVE never writes: duplicates, bare values without a default key', () => {
    expect(parsePS('a=1,a=2')).toBeUndefined()
    expect(parsePS('virtio,bridge=vmbr0')).toBeUndefined()
    expect(parsePS('x,y', 'file')).toBeUndefined()
    expect(parsePS('virtio=x,size=')).toBeUndefined()
  })

  it('a `__proto__` token stays an own key and changes no prototype', () => {
    const p = parsePS('__proto__=1,a=2') as Record<string, unknown>
    expect(Object.getPrototypeOf(p)).toBe(Object.prototype)
    expect(Object.keys(p)).toEqual(['__proto__', 'a'])
    expect(({} as Record<string, unknown>).a).toBeUndefined()
  })

  const key = fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/)
  const value = fc.stringMatching(/^[A-Za-z0-9:/._;=+-]{1,12}$/)
  test.prop([fc.dictionary(key, value, { maxKeys: 6 }), fc.option(value, { nil: undefined })])(
    'round-trips what the wire formatter prints',
    (rest, bare) => {
      const obj = { ...rest, ...(bare !== undefined ? { file: bare } : {}) }
      delete (obj as Record<string, string>).__proto__
      const text = formatPropertyString(obj, { defaultKey: 'file' })
      expect(parsePS(text, 'file')).toEqual(obj)
    },
  )

  it('a live-form rewrite keeps unowned tokens and the volume id', () => {
    const live = parsePS('local-lvm:vm-100-disk-0,backup=0,size=32G', 'file') as Record<string, string>
    expect(rewrite(live, { iothread: '1', backup: undefined }, 'file')).toBe(
      'local-lvm:vm-100-disk-0,iothread=1,size=32G',
    )
  })
})

describe('volume guards', () => {
  it('recognises empty slots, pools, sizes', () => {
    for (const v of [undefined, '', 'none', 'none,media=cdrom']) expect(isEmptySlot(v)).toBe(true)
    expect(isEmptySlot('local-lvm:vm-1-disk-0')).toBe(false)
    expect(poolOf('local-lvm:vm-1-disk-0')).toBe('local-lvm')
    expect(poolOf('/tank/x')).toBeUndefined()
    expect(liveSizeBytes('local-lvm:vm-1-disk-0', '512M')).toBe(512 * 1024 ** 2)
    expect(liveSizeBytes('local-lvm:8', undefined)).toBe(8 * 1024 ** 3)
    expect(liveSizeBytes('local-lvm:vm-1-disk-0', undefined)).toBeUndefined()
  })

  test.prop([fc.integer({ min: 1, max: 4096 }), fc.integer({ min: 1, max: 4096 })])(
    'grow is a resize to the desired size, shrink an anomaly, equal nothing',
    (liveMiB, wantMiB) => {
      const out = guardVolume(
        'scsi0',
        'spec.disks[0]',
        'local-lvm:vm-1-disk-0',
        `${liveMiB}M`,
        'local-lvm',
        wantMiB * 1024 ** 2,
        true,
      )
      if (wantMiB === liveMiB) expect(out).toEqual([])
      else if (wantMiB > liveMiB)
        expect(out).toEqual([{ t: 'resize', size: expect.any(String), after: expect.any(String) }])
      else expect(out.map((o) => (o.t === 'anomaly' ? o.code : o.t))).toEqual(['volume-shrink'])
    },
  )
})
