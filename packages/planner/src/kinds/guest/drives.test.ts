import { describe, expect, it } from 'vitest'
import {
  adoptCdAndCloudInit,
  bootOrderOf,
  bootOwned,
  cdAndCloudInitOwned,
  isCdrom,
  isCloudInit,
  readDrive,
} from './drives.js'

describe('readDrive (qemu-server parse_drive, drive_is_cdrom, drive_is_cloudinit)', () => {
  it.each([
    ['local-lvm:vm-100-cloudinit,media=cdrom', 'cloud-init'],
    ['local:100/vm-100-cloudinit.qcow2,media=cdrom', 'cloud-init'],
    ['local-lvm:cloudinit', 'cloud-init'],
    ['local-lvm:vm-100-notcloudinit,size=4M', 'disk'],
    ['local-lvm:vm-100-disk-0,size=8G', 'disk'],
    ['local:iso/debian-12.iso,media=cdrom', 'cdrom'],
    ['none,media=cdrom', 'cdrom'],
    ['cdrom,media=cdrom', 'cdrom'],
  ])('%s is a %s drive', (value, kind) => {
    expect(readDrive(value)?.kind).toBe(kind)
  })

  it('a value outside the grammar, or without a volume, is no drive', () => {
    expect(readDrive('media=cdrom')).toBeUndefined()
    expect(readDrive('local:iso/a.iso,media=cdrom,media=disk')).toBeUndefined()
  })

  it('drive_is_cdrom counts the cloud-init drive (its media is cdrom); drive_is_cloudinit reads the volume', () => {
    expect(isCdrom('local-lvm:vm-100-cloudinit,media=cdrom')).toBe(true)
    expect(isCdrom('local-lvm:vm-100-disk-0')).toBe(false)
    expect(isCdrom(undefined)).toBe(false)
    expect(isCloudInit('local-lvm:vm-100-cloudinit,media=cdrom')).toBe(true)
    expect(isCloudInit('local:iso/cloudinit-tools.iso,media=cdrom')).toBe(false)
  })
})

describe('adoptCdAndCloudInit', () => {
  const isoNames = new Map([['local:iso/debian-12.iso', 'debian-12-iso']])
  const run = (config: Record<string, string>) => {
    const gaps: { field: string; value: string }[] = []
    const out = adoptCdAndCloudInit(config, Object.keys(config).sort(), isoNames, (field, value) =>
      gaps.push({ field, value }),
    )
    return { ...out, gaps }
  }

  it('the cloud-init drive on ide2 and a CD on ide3, as plan() places them', () => {
    const r = run({
      ide2: 'local-lvm:vm-100-cloudinit,media=cdrom',
      ide3: 'local:iso/debian-12.iso,media=cdrom',
      scsi0: 'local-lvm:vm-100-disk-0,size=8G',
    })
    expect(r.hardware).toEqual({
      'cloud-init': { enabled: true, storage: 'local-lvm' },
      cdrom: { iso: 'debian-12-iso' },
    })
    expect([...r.claimed]).toEqual(['ide2', 'ide3'])
    expect(r.gaps).toEqual([])
  })

  it('a CD plan() would not put on that slot is a gap, not a cdrom it would move', () => {
    // no cloud-init drive: plan() puts the CD on ide2, so one on ide3 cannot be adopted as spec.hardware.cdrom
    const r = run({ ide3: 'local:iso/debian-12.iso,media=cdrom', ide0: 'none,media=cdrom' })
    expect(r.hardware).toEqual({})
    expect(r.gaps.map((g) => g.field)).toEqual(['ide0', 'ide3'])
    expect([...r.claimed].sort()).toEqual(['ide0', 'ide3'])
  })

  it("the host's CD drive and an ISO that was not adopted are gaps; an empty drive is iso none", () => {
    expect(run({ ide2: 'cdrom,media=cdrom' }).gaps.map((g) => g.field)).toEqual(['ide2'])
    expect(run({ ide2: 'local:iso/other.iso,media=cdrom' }).gaps.map((g) => g.field)).toEqual(['ide2'])
    expect(run({ ide2: 'none,media=cdrom' }).hardware).toEqual({ cdrom: { iso: 'none' } })
  })

  it('a cloud-init drive on another slot is a gap; disks are left to the disk loop', () => {
    const r = run({ sata0: 'local-lvm:vm-100-cloudinit,media=cdrom', virtio0: 'local-lvm:vm-100-disk-0,size=8G' })
    expect(r.hardware).toEqual({})
    expect(r.gaps.map((g) => g.field)).toEqual(['sata0'])
    expect([...r.claimed]).toEqual(['sata0'])
  })
})

describe('boot order (qemu-server boot format: order=, or a legacy string)', () => {
  it('reads order=a;b and nothing else', () => {
    expect(bootOrderOf('order=scsi0;ide2;net0')).toEqual(['scsi0', 'ide2', 'net0'])
    expect(bootOrderOf('cdn')).toBeUndefined()
    expect(bootOrderOf('order=')).toBeUndefined()
  })

  it('compares the order, writes order= when it differs or PVE has a legacy string', () => {
    const boot = bootOwned(['scsi0', 'net0'])
    expect(boot.create).toBe('order=scsi0;net0')
    expect(boot.compare('order=scsi0;net0')).toEqual([])
    expect(boot.compare('order=net0;scsi0')).toEqual([
      { t: 'write', value: 'order=scsi0;net0', after: 'order=scsi0;net0' },
    ])
    expect(boot.compare('cdn')).toHaveLength(1)
    expect(boot.compare(undefined)).toHaveLength(1)
  })
})

describe('cdAndCloudInitOwned', () => {
  const ctx = (cloned: boolean) => ({
    cloned,
    volid: (_kind: string, name: string) => (name === 'debian' ? 'local:iso/debian-12.iso' : undefined),
  })
  const codes = (outcomes: readonly { t: string; code?: string }[]) => outcomes.map((o) => o.code ?? o.t)

  it('the cloud-init drive: created on an empty ide2, never put over another volume, kept on a clone', () => {
    const ci = { 'cloud-init': { enabled: true, storage: 'local-lvm', size: '4M' } }
    const [own] = cdAndCloudInitOwned(ci, ctx(false))
    expect(own?.key).toBe('ide2')
    expect(own?.create).toBe('local-lvm:cloudinit')
    expect(own?.compare(undefined)).toEqual([
      { t: 'write', value: 'local-lvm:cloudinit', after: 'local-lvm:cloudinit', newSlot: true },
    ])
    expect(own?.compare('local-lvm:vm-100-cloudinit,media=cdrom')).toEqual([])
    expect(codes(own!.compare('local-lvm:vm-100-disk-1,size=8G'))).toEqual(['volume-kind'])
    expect(codes(own!.compare('ceph:vm-100-cloudinit,media=cdrom'))).toEqual(['write'])
    const [cloned] = cdAndCloudInitOwned(ci, ctx(true))
    expect(codes(cloned!.compare('ceph:vm-100-cloudinit,media=cdrom'))).toEqual(['volume-pool'])
  })

  it('the CD drive: on ide3 beside cloud-init, swaps media of a CD drive only', () => {
    const both = cdAndCloudInitOwned(
      { 'cloud-init': { enabled: true, storage: 'local-lvm', size: '4M' }, cdrom: { iso: 'debian', media: 'cdrom' } },
      ctx(false),
    )
    expect(both.map((o) => o.key)).toEqual(['ide2', 'ide3'])
    const [cd] = cdAndCloudInitOwned({ cdrom: { iso: 'debian', media: 'cdrom' } }, ctx(false))
    expect(cd?.key).toBe('ide2')
    expect(cd?.compare('local:iso/debian-12.iso,media=cdrom')).toEqual([])
    expect(codes(cd!.compare('none,media=cdrom'))).toEqual(['write'])
    expect(codes(cd!.compare('local:iso/other.iso,media=cdrom'))).toEqual(['write'])
    // a disk, or an ISO PVE would not store without media=cdrom, is never replaced
    expect(codes(cd!.compare('local-lvm:vm-100-disk-1,size=8G'))).toEqual(['volume-kind'])
    expect(codes(cd!.compare('local:iso/other.iso'))).toEqual(['volume-kind'])
    // nor the cloud-init drive a clone inherited on ide2 (its media is cdrom too)
    expect(codes(cd!.compare('local-lvm:vm-100-cloudinit,media=cdrom'))).toEqual(['volume-kind'])
    const [eject] = cdAndCloudInitOwned({ cdrom: { iso: 'none', media: 'cdrom' } }, ctx(false))
    expect(eject?.compare('none,media=cdrom')).toEqual([])
    expect(eject?.compare(undefined)).toEqual([])
    expect(codes(eject!.compare('local:iso/other.iso,media=cdrom'))).toEqual(['write'])
    expect(codes(eject!.compare('local-lvm:vm-100-cloudinit,media=cdrom'))).toEqual(['volume-kind'])
  })
})
