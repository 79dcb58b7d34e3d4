import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { GuestConfig } from './config.js'
import { FORMATS, parsePropString, printPropString } from './propstring.js'
import { formatSize, parseDiskSize, resizeTarget } from './sizes.js'
import { invalidTag, normaliseTags } from './tags.js'
import { optionType, typedValue } from './options.js'

const tagChar = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_-+.'.split(''))
const tag = fc
  .tuple(fc.constantFrom(...'abcxyzABC019_'.split('')), fc.array(tagChar, { maxLength: 8 }))
  .map(([h, t]) => h + t.join(''))
const tagList = fc
  .tuple(fc.array(tag, { maxLength: 6 }), fc.array(fc.constantFrom(';', ',', ' '), { minLength: 6, maxLength: 6 }))
  .map(([tags, seps]) => tags.map((t, i) => t + (i < tags.length - 1 ? seps[i] : '')).join(''))

describe('tags (get_unique_tags)', () => {
  it('lower-cases, de-duplicates, sorts and ;-joins', () => {
    expect(normaliseTags('Web;prod;web')).toBe('prod;web')
    expect(normaliseTags('b, A c')).toBe('a;b;c')
    expect(invalidTag('ok;-bad')).toBe('-bad')
  })
  test.prop([tagList], { numRuns: 200 })('normalisation is idempotent and order-insensitive', (list) => {
    const n = normaliseTags(list)
    expect(normaliseTags(n)).toBe(n)
    expect(normaliseTags(list.split(/[;, ]/).reverse().join(';'))).toBe(n)
    expect(n).toBe(n.toLowerCase())
  })
})

describe('sizes (format_size)', () => {
  it('prints the largest exact unit', () => {
    expect([
      formatSize(32 * 1024 ** 3),
      formatSize(528 * 1024),
      formatSize(4 * 1024 ** 2),
      formatSize(1024 ** 4),
      formatSize(1000),
    ]).toEqual(['32G', '528K', '4M', '1T', '1000'])
    expect(parseDiskSize('4MiB')).toBe(4 * 1024 ** 2)
    expect(parseDiskSize('1.5G')).toBe(1.5 * 1024 ** 3)
    expect(resizeTarget(10, '+5')).toBe(15)
  })
  test.prop([fc.integer({ min: 1, max: 2 ** 45 })], { numRuns: 200 })('parse(format(n)) = n', (n) => {
    expect(parseDiskSize(formatSize(n))).toBe(n)
  })
})

describe('property strings', () => {
  it('drives: default key bare first, rest alphabetical, booleans as 1/0, volume alias', () => {
    const p = parsePropString('volume=local-lvm:vm-1-disk-0,ssd=true,discard=on,iothread=on', FORMATS.drive)
    expect(printPropString(p, FORMATS.drive)).toBe('local-lvm:vm-1-disk-0,discard=on,iothread=1,ssd=1')
  })
  it('net: model=MAC keyAlias printed first; lxc mount: mp right after volume', () => {
    expect(
      printPropString(
        parsePropString('bridge=vmbr0,virtio=BC:24:11:00:00:01,firewall=yes', FORMATS.qemuNet),
        FORMATS.qemuNet,
      ),
    ).toBe('virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1')
    expect(
      printPropString(
        parsePropString('backup=1,mp=/data,volume=local-lvm:vm-1-disk-1,size=8G', FORMATS.lxcMount),
        FORMATS.lxcMount,
      ),
    ).toBe('local-lvm:vm-1-disk-1,mp=/data,backup=1,size=8G')
    expect(() => parsePropString('a=1,a=2', FORMATS.drive)).toThrow(/duplicate key/)
  })
  const key = fc.constantFrom('cache', 'discard', 'serial', 'ssd', 'iothread', 'backup', 'wwn', 'aio')
  const props = fc.dictionary(key, fc.stringMatching(/^[a-z0-9]{1,6}$/), { maxKeys: 6 })
  test.prop([props], { numRuns: 200 })('print is a fixed point of parse', (extra) => {
    const value = printPropString({ file: 'local-lvm:vm-100-disk-0', ...extra }, { ...FORMATS.drive, booleans: [] })
    const again = printPropString(parsePropString(value, { ...FORMATS.drive, booleans: [] }), {
      ...FORMATS.drive,
      booleans: [],
    })
    expect(again).toBe(value)
  })
})

describe('config text and digest', () => {
  const kv = fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/), fc.stringMatching(/^[ -~]{0,12}$/), {
    maxKeys: 8,
  })
  test.prop([kv, kv], { numRuns: 200 })('digest changes iff the file text changes', (a, b) => {
    const ca = new GuestConfig(a)
    const cb = new GuestConfig(b)
    expect(ca.digest() === cb.digest()).toBe(ca.text() === cb.text())
  })
  it('renders sorted keys, description comments first, [PENDING] with delete list (! = force)', () => {
    const c = new GuestConfig({ name: 'x', cores: '2', description: 'a: b\nline 2' })
    c.setPending('memory', '4096')
    c.addPendingDelete('net1', true)
    c.addPendingDelete('vga', false)
    expect(c.text()).toBe('#a%3A b\n#line 2\ncores: 2\nname: x\n\n[PENDING]\ndelete: !net1,vga\nmemory: 4096\n')
    const before = c.digest()
    c.clearPending('memory')
    expect(c.digest()).not.toBe(before)
  })
})

describe('value types on read', () => {
  it('booleans/integers as numbers, number options and memory as strings', () => {
    expect([
      typedValue('qemu', 'onboot', '1'),
      typedValue('qemu', 'cores', '2'),
      typedValue('qemu', 'memory', '2048'),
      typedValue('qemu', 'cpulimit', '1.5'),
    ]).toEqual([1, 2, '2048', '1.5'])
    expect([typedValue('lxc', 'memory', '512'), typedValue('lxc', 'unprivileged', '1')]).toEqual([512, 1])
    expect([optionType('qemu', 'scsi30'), optionType('qemu', 'scsi31'), optionType('qemu', 'net07')]).toEqual([
      'string',
      undefined,
      undefined,
    ])
  })
})
