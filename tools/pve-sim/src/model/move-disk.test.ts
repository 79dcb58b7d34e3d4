/**
 * Disk moves, each test named after the PVE function it follows: qemu-server PVE::API2::Qemu `move_vm_disk`
 * (`$load_and_check_move`, `$move_updatefn`, `$load_and_check_reassign_configs`, `$disk_reassignfn`) with
 * PVE::QemuServer `clone_disk` and BlockJob `mirror`; pve-container PVE::API2::LXC `move_volume`
 * (`$move_to_storage_checks`, `$storage_realcmd`, `$load_and_check_reassign_configs`, `$volume_reassignfn`) with
 * PVE::LXC `copy_volume`; pve-storage `rename_volume` and `volume_has_feature` (`rename`).
 */
import { describe, expect, it } from 'vitest'
import { addDirStorage, makeSim, type Sim } from '../test-support/sim.js'

const TMPL = 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst'
const volids = (s: Sim, storage: string) => s.sim.storageContent('pve1', storage).map((v) => String(v.volid))

async function vm(s: Sim, vmid = 100, extra: Record<string, unknown> = {}) {
  const r = await s.run('POST', '/nodes/pve1/qemu', { vmid, memory: '512', scsi0: 'local-lvm:1', ...extra })
  expect(r.exitstatus).toBe('OK')
}
async function ct(s: Sim, vmid = 200, extra: Record<string, unknown> = {}) {
  s.sim.addVolume('pve1', 'local', { filename: 'debian-12-standard_12.7-1_amd64.tar.zst', content: 'vztmpl' })
  const r = await s.run('POST', '/nodes/pve1/lxc', { vmid, ostemplate: TMPL, rootfs: 'local-lvm:1', ...extra })
  expect(r.exitstatus).toBe('OK')
}

describe('qemu-server move_vm_disk to another storage', () => {
  it('$move_updatefn: the copy replaces the disk, the source stays as unused0, and the data moves with it', async () => {
    const s = makeSim()
    await vm(s)
    s.sim.writeVolume('pve1', 'local-lvm:vm-100-disk-0', 'hello')
    const r = await s.run('POST', '/nodes/pve1/qemu/100/move_disk', { disk: 'scsi0', storage: 'local-zfs' })
    expect(r.exitstatus).toBe('OK')
    expect(r.upid).toContain(':qmmove:100:')
    expect(r.log).toEqual([
      "copying volume 'local-lvm:vm-100-disk-0' from current storage 'local-lvm' to target storage 'local-zfs'",
      'create full clone of drive scsi0 (local-lvm:vm-100-disk-0)',
      "allocated target volume 'local-zfs:vm-100-disk-0'",
      "adding source volume 'local-lvm:vm-100-disk-0' as 'unused0' to config",
      'TASK OK',
    ])
    const conf = s.sim.guest(100)!.config
    expect(conf.scsi0).toBe('local-zfs:vm-100-disk-0,size=1G')
    expect(conf.unused0).toBe('local-lvm:vm-100-disk-0')
    expect(s.sim.readVolume('pve1', 'local-zfs:vm-100-disk-0')).toBe('hello')
  })

  it('with delete the source is freed after the copy; a running VM is copied by drive-mirror and keeps running', async () => {
    const s = makeSim()
    await vm(s, 100, { start: 1 })
    expect(s.sim.guest(100)!.status).toBe('running')
    const r = await s.run('POST', '/nodes/pve1/qemu/100/move_disk', { disk: 'scsi0', storage: 'local-zfs', delete: 1 })
    expect(r.exitstatus).toBe('OK')
    expect(r.log).toContain('drive mirror is starting for drive-scsi0')
    expect(r.log).toContain("removing source volume 'local-lvm:vm-100-disk-0' after successful copy")
    expect(s.sim.guest(100)!.config.unused0).toBeUndefined()
    expect(volids(s, 'local-lvm')).toEqual([])
    expect(s.sim.guest(100)!.status).toBe('running')
  })

  it('$load_and_check_move: digest, missing disk, cdrom, same storage, storage without images, snapshots with delete', async () => {
    const s = makeSim()
    await addDirStorage(s)
    await vm(s, 100, { ide2: 'none,media=cdrom' })
    const digest = s.sim.guest(100)!.digest
    const err = async (p: Record<string, unknown>) =>
      (await s.error('POST', '/nodes/pve1/qemu/100/move_disk', p)).message
    expect(await err({ disk: 'scsi0', storage: 'local-zfs', digest: '0'.repeat(40) })).toBe(
      'detected modified configuration - file changed by other user? Try again.',
    )
    expect(await err({ disk: 'scsi1', storage: 'local-zfs' })).toBe("disk 'scsi1' does not exist")
    expect(await err({ disk: 'ide2', storage: 'local-zfs' })).toBe("you can't move a cdrom")
    expect(await err({ disk: 'scsi0', storage: 'local-lvm' })).toBe(
      "you can't move to the same storage with same format",
    )
    const images = await s.error('POST', '/nodes/pve1/qemu/100/move_disk', { disk: 'scsi0', storage: 'local' })
    expect([images.status, images.errors]).toEqual([400, { storage: "storage 'local' does not support vm images" }])
    expect((await s.error('POST', '/nodes/pve1/qemu/100/move_disk', { disk: 'scsi0' })).errors).toEqual({
      'target-vmid': "both 'storage' and 'target-vmid' missing, either needs to be set",
      storage: "both 'storage' and 'target-vmid' missing, either needs to be set",
    })
    // a matching digest passes; a qcow2 copy on the same dir storage is a move too
    expect(
      (await s.run('POST', '/nodes/pve1/qemu/100/move_disk', { disk: 'scsi0', storage: 'vmdir', digest })).exitstatus,
    ).toBe('OK')
    const conv = await s.run('POST', '/nodes/pve1/qemu/100/move_disk', {
      disk: 'scsi0',
      storage: 'vmdir',
      format: 'qcow2',
      delete: 1,
    })
    expect(conv.exitstatus).toBe('OK')
    expect(s.sim.guest(100)!.config.scsi0).toBe('vmdir:100/vm-100-disk-1.qcow2,size=1G')
    await s.run('POST', '/nodes/pve1/qemu/100/snapshot', { snapname: 'before' })
    expect(await err({ disk: 'scsi0', storage: 'local-zfs', delete: 1 })).toBe(
      "you can't move a disk with snapshots and delete the source",
    )
    const kept = await s.run('POST', '/nodes/pve1/qemu/100/move_disk', { disk: 'scsi0', storage: 'local-zfs' })
    expect(kept.log).toContain('WARN: moving disk with snapshots, snapshots will not be moved!')
    expect(kept.exitstatus).toBe('WARNINGS: 1')
  })

  it('the worker holds the config flock (no lock in the config): writes meanwhile fail, and a held task shows it', async () => {
    const s = makeSim()
    await vm(s)
    s.sim.setTaskBehaviour('qmmove', { hold: true })
    const upid = await s.call('POST', '/nodes/pve1/qemu/100/move_disk', { disk: 'scsi0', storage: 'local-zfs' })
    s.advance(60_000)
    expect(s.sim.guest(100)!.lock).toBeUndefined()
    expect((await s.error('PUT', '/nodes/pve1/qemu/100/config', { cores: 2 })).message).toBe(
      "can't lock file '/var/lock/qemu-server/lock-100.conf' - got timeout",
    )
    s.sim.setTaskBehaviour('qmmove', null)
    const st = await s.call('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/status`)
    expect(st.exitstatus).toBe('OK')
    expect((await s.call('PUT', '/nodes/pve1/qemu/100/config', { cores: 2 })) ?? null).toBeNull()
  })

  it('a failing allocation frees nothing it did not allocate and ends `storage migration failed: ...`', async () => {
    const s = makeSim()
    await vm(s)
    s.sim.setStorageOnline('local-zfs', false)
    const r = await s.run('POST', '/nodes/pve1/qemu/100/move_disk', { disk: 'scsi0', storage: 'local-zfs' })
    expect(r.exitstatus).toBe("storage migration failed: storage 'local-zfs' is not online")
    expect(s.sim.guest(100)!.config.scsi0).toBe('local-lvm:vm-100-disk-0,size=1G')
    expect(volids(s, 'local-lvm')).toEqual(['local-lvm:vm-100-disk-0'])
  })
})

describe('qemu-server move_vm_disk with target-vmid ($disk_reassignfn, rename_volume)', () => {
  it('the volume is renamed to the target VM and moves from one config to the other, leaving the boot order', async () => {
    const s = makeSim()
    await vm(s, 100, { scsi1: 'local-lvm:1', boot: 'order=scsi0;scsi1' })
    await vm(s, 101)
    s.sim.writeVolume('pve1', 'local-lvm:vm-100-disk-1', 'data')
    const r = await s.run('POST', '/nodes/pve1/qemu/100/move_disk', {
      disk: 'scsi1',
      'target-vmid': 101,
      'target-disk': 'scsi3',
    })
    expect(r.upid).toContain(':qmmove:100-scsi1>101-scsi3:')
    expect(r.log).toEqual([
      "reassign disk 'scsi1' from VM '100' as 'scsi3' to VM '101'",
      "removing disk 'scsi1' from boot order config",
      "removing disk 'scsi1' from VM '100' config",
      'TASK OK',
    ])
    expect(s.sim.guest(100)!.config.scsi1).toBeUndefined()
    expect(s.sim.guest(100)!.config.boot).toBe('order=scsi0')
    expect(s.sim.guest(101)!.config.scsi3).toBe('local-lvm:vm-101-disk-1,size=1G')
    expect(s.sim.readVolume('pve1', 'local-lvm:vm-101-disk-1')).toBe('data')
  })

  it('$load_and_check_reassign_configs: both set, the same VM, a used target key, a running source, a missing target', async () => {
    const s = makeSim()
    await vm(s, 100, { start: 1 })
    await vm(s, 101)
    const both = await s.error('POST', '/nodes/pve1/qemu/100/move_disk', {
      disk: 'scsi0',
      'target-vmid': 101,
      storage: 'local-zfs',
    })
    expect(both.errors).toEqual({
      'target-vmid': "either set 'storage' or 'target-vmid', but not both",
      storage: "either set 'storage' or 'target-vmid', but not both",
    })
    const same = await s.error('POST', '/nodes/pve1/qemu/100/move_disk', { disk: 'scsi0', 'target-vmid': 100 })
    expect(same.errors).toEqual({ 'target-vmid': 'must be different than source VMID to reassign disk' })
    const err = async (p: Record<string, unknown>) =>
      (await s.error('POST', '/nodes/pve1/qemu/100/move_disk', p)).message
    expect(await err({ disk: 'scsi0', 'target-vmid': 101 })).toBe(
      "Target disk key 'scsi0' is already in use for VM '101'",
    )
    expect(await err({ disk: 'scsi0', 'target-vmid': 101, 'target-disk': 'scsi1' })).toBe(
      'Cannot move disk to another VM while the source VM is running - detach first',
    )
    expect(await err({ disk: 'scsi0', 'target-vmid': 999 })).toBe('could not find target VM 999')
  })
})

describe('pve-container move_volume', () => {
  it('$storage_realcmd: `lock: disk` until the task ends, the copy replaces the volume, delete frees the source', async () => {
    const s = makeSim()
    await ct(s)
    s.sim.writeVolume('pve1', 'local-lvm:vm-200-disk-0', 'etc')
    s.sim.setTaskBehaviour('move_volume', { hold: true })
    const upid = await s.call('POST', '/nodes/pve1/lxc/200/move_volume', {
      volume: 'rootfs',
      storage: 'local-zfs',
      delete: 1,
    })
    expect(upid).toContain(':move_volume:200:')
    s.advance(60_000)
    expect(s.sim.guest(200)!.lock).toBe('disk')
    expect((await s.error('POST', '/nodes/pve1/lxc/200/status/start')).message).toBe('CT is locked (disk)')
    s.sim.setTaskBehaviour('move_volume', null)
    const st = await s.call('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/status`)
    expect(st.exitstatus).toBe('OK')
    const g = s.sim.guest(200)!
    expect(g.lock).toBeUndefined()
    expect(g.config.rootfs).toBe('local-zfs:subvol-200-disk-0,size=1G')
    expect(g.config.unused0).toBeUndefined()
    expect(volids(s, 'local-lvm')).toEqual([])
    expect(s.sim.readVolume('pve1', 'local-zfs:subvol-200-disk-0')).toBe('etc')
  })

  it('$move_to_storage_checks: a running container, an unused volume, snapshots with delete, both targets', async () => {
    const s = makeSim()
    await ct(s, 200)
    await s.run('POST', '/nodes/pve1/lxc/200/status/start')
    const err = async (p: Record<string, unknown>) =>
      (await s.error('POST', '/nodes/pve1/lxc/200/move_volume', p)).message
    expect(await err({ volume: 'rootfs', storage: 'local-zfs' })).toBe('cannot move volumes of a running container')
    expect(await err({ volume: 'rootfs', storage: 'local-zfs', 'target-vmid': 201 })).toBe(
      'either set storage or target-vmid, but not both',
    )
    await s.run('POST', '/nodes/pve1/lxc/200/status/stop')
    expect(await err({ volume: 'unused0', storage: 'local-zfs' })).toBe(
      "cannot move volume 'unused0', only configured volumes can be moved to another storage",
    )
    await s.run('POST', '/nodes/pve1/lxc/200/snapshot', { snapname: 'before' })
    expect(await err({ volume: 'rootfs', storage: 'local-zfs', delete: 1 })).toBe(
      "you can't move a volume with snapshots and delete the source",
    )
    // a check that fails leaves no lock behind
    expect(s.sim.guest(200)!.lock).toBeUndefined()
  })

  it('$volume_reassignfn: a mount point goes to another container; rootfs cannot', async () => {
    const s = makeSim()
    await ct(s, 200, { mp0: 'local-lvm:1,mp=/data' })
    await ct(s, 201)
    const err = async (p: Record<string, unknown>) =>
      (await s.error('POST', '/nodes/pve1/lxc/200/move_volume', p)).message
    expect(await err({ volume: 'rootfs', 'target-vmid': 201 })).toBe("Cannot move to/from 'rootfs'")
    const r = await s.run('POST', '/nodes/pve1/lxc/200/move_volume', {
      volume: 'mp0',
      'target-vmid': 201,
      'target-volume': 'mp1',
    })
    expect(r.upid).toContain(':move_volume:200-mp0>201-mp1:')
    expect(r.log).toEqual([
      "moving volume 'mp0' from container '200' to '201'",
      "removing volume 'mp0' from container '200' config",
      "target container '201' updated with 'mp1'",
      'TASK OK',
    ])
    expect(s.sim.guest(200)!.config.mp0).toBeUndefined()
    expect(s.sim.guest(201)!.config.mp1).toBe('local-lvm:vm-201-disk-1,mp=/data,size=1G')
  })
})
