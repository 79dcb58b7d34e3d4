import { describe, expect, it } from 'vitest'
import { addDirStorage, makeSim } from '../test-support/sim.js'

const TMPL = 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst'

function sim() {
  const s = makeSim()
  s.sim.addVolume('pve1', 'local', { filename: 'debian-12-standard_12.7-1_amd64.tar.zst', content: 'vztmpl' })
  return s
}

describe('LXC create and config', () => {
  it('normalises rootfs/net, defaults unprivileged, never stores password or ssh keys', async () => {
    const s = sim()
    const upid = await s.call('POST', '/nodes/pve1/lxc', {
      vmid: 101,
      ostemplate: TMPL,
      hostname: 'ct1',
      rootfs: 'local-lvm:8',
      net0: 'name=eth0,bridge=vmbr0,firewall=1,ip=dhcp',
      password: 'canary-pw-123',
      'ssh-public-keys': 'ssh-ed25519 AAAA canary@host',
      tags: 'Z,a',
    })
    expect(upid).toContain(':vzcreate:101:')
    s.advance(1000)
    const c = await s.call('GET', '/nodes/pve1/lxc/101/config')
    expect(c).toMatchObject({
      hostname: 'ct1',
      rootfs: 'local-lvm:vm-101-disk-0,size=8G',
      unprivileged: 1,
      arch: 'amd64',
      ostype: 'debian',
      tags: 'a;z',
    })
    expect(c.net0).toMatch(/^name=eth0,bridge=vmbr0,firewall=1,hwaddr=BC:24:11:[0-9A-F:]{8},ip=dhcp,type=veth$/)
    const text = s.sim.configText(101) ?? ''
    expect(text).not.toContain('canary')
    expect(c.password).toBeUndefined()
  })

  it('zfs rootfs is a subvol; dir rootfs a raw file; bare size uses `storage`', async () => {
    const s = sim()
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 102, ostemplate: TMPL, rootfs: 'local-zfs:8' })
    expect((await s.call('GET', '/nodes/pve1/lxc/102/config')).rootfs).toBe('local-zfs:subvol-102-disk-0,size=8G')
    await addDirStorage(s)
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 103, ostemplate: TMPL, storage: 'vmdir', rootfs: '2' })
    expect((await s.call('GET', '/nodes/pve1/lxc/103/config')).rootfs).toBe('vmdir:103/vm-103-disk-0.raw,size=2G')
    // a fresh install's `local` (the default `storage`) holds no container volumes
    const local = await s.error('POST', '/nodes/pve1/lxc', { vmid: 109, ostemplate: TMPL })
    expect(local.errors).toEqual({ storage: `storage 'local' does not support container directories` })
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 104, ostemplate: TMPL, storage: 'local-lvm' })
    expect((await s.call('GET', '/nodes/pve1/lxc/104/config')).rootfs).toBe('local-lvm:vm-104-disk-0,size=4G')
    const zfs = s.sim.storageContent('pve1', 'local-zfs')
    expect(zfs).toEqual([
      expect.objectContaining({
        volid: 'local-zfs:subvol-102-disk-0',
        content: 'rootdir',
        format: 'subvol',
        vmid: 102,
      }),
    ])
  })

  it('an existing vmid is an immediate 500; a missing template fails the vzcreate task (abs_filesystem_path)', async () => {
    const s = sim()
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 105, ostemplate: TMPL, storage: 'local-lvm' })
    const dup = await s.error('POST', '/nodes/pve1/lxc', { vmid: 105, ostemplate: TMPL, storage: 'local-lvm' })
    expect(dup.message).toBe(`CT 105 already exists on node 'pve1'`)
    const overVm = await s.error('POST', '/nodes/pve1/qemu', { vmid: 105 })
    expect(overVm.message).toBe(`unable to create VM 105 - CT 105 already exists on node 'pve1'`)
    const nt = await s.run('POST', '/nodes/pve1/lxc', {
      vmid: 106,
      ostemplate: 'local:vztmpl/nope.tar.zst',
      storage: 'local-lvm',
    })
    expect(nt.exitstatus).toBe(`unable to create CT 106 - can't find file 'local:vztmpl/nope.tar.zst'`)
    expect(s.sim.storageContent('pve1', 'local-lvm').map((v) => v.volid)).not.toContain('local-lvm:vm-106-disk-0')
    const mp = await s.error('POST', '/nodes/pve1/lxc', { vmid: 106, ostemplate: TMPL, mp0: 'local-lvm:1,mp=/data' })
    expect(mp.message).toBe(`mount points configured, but 'rootfs' not set - aborting`)
    expect(s.sim.guest(106)).toBeUndefined()
  })

  it('PUT config: digest text, required options, read-only unprivileged, pending while running', async () => {
    const s = sim()
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 110, ostemplate: TMPL, storage: 'local-zfs', memory: 512 })
    const stale = await s.error('PUT', '/nodes/pve1/lxc/110/config', { memory: 1024, digest: '0'.repeat(40) })
    expect(stale.message).toBe('detected modified configuration - file changed by other user? Try again.')
    expect((await s.error('PUT', '/nodes/pve1/lxc/110/config', { delete: 'rootfs' })).message).toBe(
      `unable to delete required option 'rootfs'`,
    )
    expect((await s.error('PUT', '/nodes/pve1/lxc/110/config', { unprivileged: 0 })).message).toBe(
      `unable to modify read-only option: 'unprivileged'`,
    )
    await s.run('POST', '/nodes/pve1/lxc/110/status/start')
    await s.call('PUT', '/nodes/pve1/lxc/110/config', {
      memory: 1024,
      hostname: 'renamed',
      nameserver: '10.0.0.53',
      delete: 'arch',
    })
    const cur = await s.call('GET', '/nodes/pve1/lxc/110/config', { current: 1 })
    expect([cur.memory, cur.hostname, cur.nameserver, cur.arch]).toEqual([1024, 'renamed', undefined, 'amd64'])
    const pending = await s.call('GET', '/nodes/pve1/lxc/110/pending')
    expect(pending.find((r: { key: string }) => r.key === 'nameserver')).toEqual({
      key: 'nameserver',
      pending: '10.0.0.53',
    })
    expect(pending.find((r: { key: string }) => r.key === 'arch')).toEqual({ key: 'arch', value: 'amd64', delete: 1 })
    // a new mount point hot-plugs; the next start applies what was pending
    await s.call('PUT', '/nodes/pve1/lxc/110/config', { mp0: 'local-lvm:2,mp=/data' })
    expect((await s.call('GET', '/nodes/pve1/lxc/110/config', { current: 1 })).mp0).toBe(
      'local-lvm:vm-110-disk-0,mp=/data,size=2G',
    )
    // changing an existing mount point waits, unallocated, in [PENDING]
    await s.call('PUT', '/nodes/pve1/lxc/110/config', { mp0: 'local-lvm:3,mp=/data' })
    expect(s.sim.guest(110)?.pending.mp0).toBe('local-lvm:3,mp=/data')
    expect(s.sim.storageContent('pve1', 'local-lvm')).toHaveLength(1)
    await s.run('POST', '/nodes/pve1/lxc/110/status/stop')
    await s.run('POST', '/nodes/pve1/lxc/110/status/start')
    const after = await s.call('GET', '/nodes/pve1/lxc/110/config', { current: 1 })
    expect([after.nameserver, after.arch]).toEqual(['10.0.0.53', undefined])
    expect([after.mp0, after.unused0]).toEqual(['local-lvm:vm-110-disk-1,mp=/data,size=3G', 'local-lvm:vm-110-disk-0'])
  })

  it('power errors are immediate for CTs (unlike qemu); template answers null and runs a vztemplate worker', async () => {
    const s = sim()
    await s.run('POST', '/nodes/pve1/lxc', {
      vmid: 120,
      ostemplate: TMPL,
      rootfs: 'local-lvm:4',
      net0: 'name=eth0,bridge=vmbr0',
    })
    expect((await s.error('POST', '/nodes/pve1/lxc/120/status/stop')).message).toBe('CT 120 not running')
    expect((await s.error('POST', '/nodes/pve1/lxc/120/status/shutdown')).message).toBe('CT 120 not running')
    await s.run('POST', '/nodes/pve1/lxc/120/status/start')
    expect((await s.error('POST', '/nodes/pve1/lxc/120/status/start')).message).toBe('CT 120 already running')
    expect((await s.error('DELETE', '/nodes/pve1/lxc/120')).message).toBe(
      'unable to destroy CT 120 - container is running',
    )
    await s.run('POST', '/nodes/pve1/lxc/120/status/stop')
    expect(await s.call('POST', '/nodes/pve1/lxc/120/template')).toBeNull()
    s.advance(1000)
    const c = await s.call('GET', '/nodes/pve1/lxc/120/config')
    expect([c.template, c.rootfs]).toEqual([1, 'local-lvm:base-120-disk-0,size=4G'])
    await s.run('POST', '/nodes/pve1/lxc/120/clone', { newid: 121, hostname: 'clone1' })
    const cc = await s.call('GET', '/nodes/pve1/lxc/121/config')
    expect(cc.hostname).toBe('clone1')
    expect(cc.rootfs).toBe('local-lvm:vm-121-disk-0,size=4G')
    const src = await s.call('GET', '/nodes/pve1/lxc/120/config')
    expect(cc.net0).toMatch(/^name=eth0,bridge=vmbr0,hwaddr=BC:24:11:/)
    expect(cc.net0).not.toBe(src.net0)
  })

  it('linked clones on dir storage are refused: pve-container asks for raw or subvol, Plugin.pm clones to qcow2', async () => {
    const s = sim()
    await addDirStorage(s)
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 125, ostemplate: TMPL, storage: 'vmdir' })
    expect((await s.call('GET', '/nodes/pve1/lxc/125/config')).rootfs).toBe('vmdir:125/vm-125-disk-0.raw,size=4G')
    await s.call('POST', '/nodes/pve1/lxc/125/template')
    s.advance(1000)
    const e = await s.error('POST', '/nodes/pve1/lxc/125/clone', { newid: 126 })
    expect(e.message).toBe(`Linked clone feature for 'vmdir:125/base-125-disk-0.raw' is not available`)
    expect((await s.run('POST', '/nodes/pve1/lxc/125/clone', { newid: 126, full: 1 })).exitstatus).toBe('OK')
  })

  it('destroy with force removes a running CT; CT lock text', async () => {
    const s = sim()
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 130, ostemplate: TMPL, storage: 'local-lvm' })
    s.sim.setLock(130, 'backup')
    expect((await s.error('PUT', '/nodes/pve1/lxc/130/config', { cores: 2 })).message).toBe('CT is locked (backup)')
    expect((await s.error('DELETE', '/nodes/pve1/lxc/130')).message).toBe('CT is locked (backup)')
    s.sim.setLock(130, null)
    await s.run('POST', '/nodes/pve1/lxc/130/status/start')
    expect((await s.run('DELETE', '/nodes/pve1/lxc/130', { force: 1 })).exitstatus).toBe('OK')
    expect(s.sim.guest(130)).toBeUndefined()
  })
})
