import { describe, expect, it } from 'vitest'
import { makeSim } from '../test-support/sim.js'

/**
 * loadGuest: a guest that exists before the test, from its config file. PVE keeps what the file says
 * (PVE::QemuServer::Config / PVE::LXC::Config load_config read it as is), and its volumes are real volumes of
 * the node's storages: listed, resized and freed by destroy_vm like any other.
 */
describe('loadGuest', () => {
  it('stores the config as given, registers the volumes it owns, and PVE then treats them as its own', async () => {
    const s = makeSim()
    s.sim.loadGuest({
      vmid: 100,
      type: 'qemu',
      node: 'pve1',
      status: 'running',
      config: {
        name: 'web',
        memory: '2048',
        scsi0: 'local-lvm:vm-100-disk-0,size=32G',
        unused0: 'local-lvm:vm-100-disk-1',
        ide2: 'none,media=cdrom',
        net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0',
        tags: 'proxops',
      },
    })
    const conf = await s.call('GET', '/nodes/pve1/qemu/100/config')
    expect(conf).toMatchObject({ name: 'web', scsi0: 'local-lvm:vm-100-disk-0,size=32G', tags: 'proxops' })
    const status = await s.call('GET', '/nodes/pve1/qemu/100/status/current')
    expect(status).toMatchObject({ status: 'running' })
    const content = (await s.call('GET', '/nodes/pve1/storage/local-lvm/content', { vmid: 100 })) as {
      volid: string
      size: number
    }[]
    expect(content.map((v) => [v.volid, v.size])).toEqual([
      ['local-lvm:vm-100-disk-0', 32 * 1024 ** 3],
      ['local-lvm:vm-100-disk-1', 0],
    ])
    await s.run('PUT', '/nodes/pve1/qemu/100/resize', { disk: 'scsi0', size: '+1G' })
    expect(s.sim.guest(100)?.config.scsi0).toBe('local-lvm:vm-100-disk-0,size=33G')
    await s.run('POST', '/nodes/pve1/qemu/100/status/stop')
    await s.run('DELETE', '/nodes/pve1/qemu/100', { 'destroy-unreferenced-disks': 1 })
    expect(await s.call('GET', '/nodes/pve1/storage/local-lvm/content', { vmid: 100 })).toEqual([])
  })

  it('a container: rootfs and mount points on their storages; a volume of another guest is not registered', () => {
    const s = makeSim()
    s.sim.loadGuest({
      vmid: 101,
      type: 'lxc',
      node: 'pve2',
      config: {
        hostname: 'db',
        rootfs: 'local-zfs:subvol-101-disk-0,size=8G',
        mp0: 'local-lvm:vm-101-disk-0,mp=/data,size=4G',
        mp1: 'local-lvm:vm-999-disk-0,mp=/other,size=1G',
      },
    })
    expect(s.sim.storageContent('pve2', 'local-zfs').map((v) => [v.volid, v.format])).toEqual([
      ['local-zfs:subvol-101-disk-0', 'subvol'],
    ])
    expect(s.sim.storageContent('pve2', 'local-lvm').map((v) => v.volid)).toEqual(['local-lvm:vm-101-disk-0'])
    expect(s.sim.guest(101)).toMatchObject({ type: 'lxc', node: 'pve2', status: 'stopped' })
  })

  it('refuses an unknown node, a taken vmid and a storage the node does not have', () => {
    const s = makeSim()
    const spec = { vmid: 102, type: 'qemu' as const, node: 'pve1', config: { name: 'a' } }
    expect(() => s.sim.loadGuest({ ...spec, node: 'pve9' })).toThrow('no node pve9')
    s.sim.loadGuest(spec)
    expect(() => s.sim.loadGuest(spec)).toThrow('guest 102 exists')
    expect(() => s.sim.loadGuest({ ...spec, vmid: 103, config: { scsi0: 'tank:vm-103-disk-0,size=1G' } })).toThrow(
      'no storage tank on pve1',
    )
  })
})
