import { describe, expect, it } from 'vitest'
import { allowed, classify, maxClass, type GuestRuntime } from './disruption.js'

const qemu = (over: Partial<GuestRuntime> = {}): GuestRuntime => ({
  type: 'qemu',
  running: true,
  hotplug: new Set(['network', 'disk', 'usb']),
  numa: false,
  ...over,
})

describe('disruption classes from PVE hotplug rules', () => {
  it('a stopped guest takes every write at once', () => {
    for (const key of ['cores', 'memory', 'scsi0', 'bios'])
      expect(classify(key, false, qemu({ running: false }))).toBe('none')
  })

  it('qemu: fast options and cloud-init are none; NICs and new scsi/virtio disks hotplug; the rest reboot', () => {
    expect(classify('tags', false, qemu())).toBe('none')
    expect(classify('ipconfig0', false, qemu())).toBe('none')
    expect(classify('net0', false, qemu())).toBe('hotplug')
    expect(classify('net0', false, qemu({ hotplug: new Set() }))).toBe('reboot')
    expect(classify('scsi1', true, qemu())).toBe('hotplug')
    expect(classify('sata1', true, qemu())).toBe('reboot')
    expect(classify('scsi0', false, qemu())).toBe('reboot')
    expect(classify('memory', false, qemu())).toBe('reboot')
    expect(classify('memory', false, qemu({ hotplug: new Set(['memory']), numa: true }))).toBe('hotplug')
    expect(classify('cores', false, qemu())).toBe('reboot')
  })

  it('lxc: memory, cores, NICs and new mount points hotplug; DNS and features reboot', () => {
    const ct = qemu({ type: 'lxc' })
    expect(classify('memory', false, ct)).toBe('hotplug')
    expect(classify('net0', false, ct)).toBe('hotplug')
    expect(classify('mp0', true, ct)).toBe('hotplug')
    expect(classify('mp0', false, ct)).toBe('reboot')
    expect(classify('nameserver', false, ct)).toBe('reboot')
    expect(classify('hostname', false, ct)).toBe('none')
  })

  it('policies are levels; allow is everything', () => {
    expect(maxClass(['none', 'hotplug', 'reboot'])).toBe('reboot')
    expect(allowed('stop', 'allow')).toBe(true)
    expect(allowed('hotplug', 'none')).toBe(false)
    expect(allowed('hotplug', 'hotplug')).toBe(true)
    expect(allowed('reboot', 'hotplug')).toBe(false)
  })
})
