import { describe, expect, it } from 'vitest'
import { addDirStorage, makeSim } from '../test-support/sim.js'

const IMPORT = 'local:import/debian-12-genericcloud-amd64.qcow2'

async function exampleSim() {
  const s = makeSim()
  s.sim.addVolume('pve1', 'local', {
    filename: 'debian-12-genericcloud-amd64.qcow2',
    content: 'import',
    size: 2 * 1024 ** 3,
  })
  return s
}

const EXAMPLE = {
  vmid: 100,
  name: 'web-1',
  memory: '2048',
  cores: 2,
  sockets: 1,
  cpu: 'host',
  ostype: 'l26',
  scsihw: 'virtio-scsi-single',
  agent: '1',
  bios: 'ovmf',
  efidisk0: 'local-lvm:1,efitype=4m,pre-enrolled-keys=1',
  scsi0: `local-lvm:0,import-from=${IMPORT},discard=on,iothread=1,ssd=1`,
  ide2: 'local-lvm:cloudinit',
  net0: 'virtio,bridge=vmbr0,firewall=1',
  ipconfig0: 'ip=10.0.0.10/24,gw=10.0.0.1',
  ciuser: 'ops',
  sshkeys: 'ssh-ed25519%20AAAAC3Nza...%20ops%40laptop',
  tags: 'Web;prod;web',
  onboot: true,
}

describe('worked example (golden data)', () => {
  it('create returns a qmcreate UPID and the config reads back normalised and typed', async () => {
    const s = await exampleSim()
    const upid = await s.call('POST', '/nodes/pve1/qemu', EXAMPLE)
    expect(upid).toMatch(/^UPID:pve1:[0-9A-F]{8}:[0-9A-F]{8,9}:[0-9A-F]{8}:qmcreate:100:root@pam!proxops:$/)
    const running = await s.call('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/status`)
    expect(running).toMatchObject({
      status: 'running',
      type: 'qmcreate',
      id: '100',
      user: 'root@pam',
      tokenid: 'proxops',
      node: 'pve1',
    })
    expect(running.exitstatus).toBeUndefined()
    s.advance(1000)
    const done = await s.call('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/status`)
    expect(done).toMatchObject({ status: 'stopped', exitstatus: 'OK' })
    const conf = await s.call('GET', '/nodes/pve1/qemu/100/config')
    expect(conf).toMatchObject({
      name: 'web-1',
      memory: '2048',
      cores: 2,
      sockets: 1,
      cpu: 'host',
      ostype: 'l26',
      scsihw: 'virtio-scsi-single',
      agent: '1',
      bios: 'ovmf',
      onboot: 1,
      efidisk0: 'local-lvm:vm-100-disk-0,efitype=4m,pre-enrolled-keys=1,size=4M',
      scsi0: 'local-lvm:vm-100-disk-1,discard=on,iothread=1,size=2G,ssd=1',
      ide2: 'local-lvm:vm-100-cloudinit,media=cdrom',
      ipconfig0: 'ip=10.0.0.10/24,gw=10.0.0.1',
      ciuser: 'ops',
      sshkeys: 'ssh-ed25519%20AAAAC3Nza...%20ops%40laptop',
      tags: 'prod;web',
      boot: 'order=scsi0;ide2;net0',
    })
    expect(conf.net0).toMatch(/^virtio=BC:24:11:[0-9A-F]{2}:[0-9A-F]{2}:[0-9A-F]{2},bridge=vmbr0,firewall=1$/)
    expect(conf.smbios1).toMatch(/^uuid=[0-9a-f-]{36}$/)
    expect(conf.vmgenid).toMatch(/^[0-9a-f-]{36}$/)
    expect(conf.meta).toMatch(/^creation-qemu=\d+\.\d+\.\d+,ctime=\d+$/)
    expect(conf.digest).toMatch(/^[0-9a-f]{40}$/)
    expect(conf.lock).toBeUndefined()
  })

  it('errors: existing vmid (500, immediate), wrong node, missing VM, destroy running', async () => {
    const s = await exampleSim()
    await s.run('POST', '/nodes/pve1/qemu', EXAMPLE)
    const dup = await s.error('POST', '/nodes/pve2/qemu', { vmid: 100 })
    expect([dup.status, dup.message]).toEqual([500, `unable to create VM 100 - VM 100 already exists on node 'pve1'`])
    const missing = await s.error('GET', '/nodes/pve1/qemu/999/config')
    expect([missing.status, missing.message]).toEqual([
      500,
      `Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist`,
    ])
    const wrongNode = await s.error('GET', '/nodes/pve2/qemu/100/config')
    expect(wrongNode.message).toBe(`Configuration file 'nodes/pve2/qemu-server/100.conf' does not exist`)
    await s.run('POST', '/nodes/pve1/qemu/100/status/start')
    const destroy = await s.error('DELETE', '/nodes/pve1/qemu/100')
    expect([destroy.status, destroy.message]).toEqual([500, 'VM 100 is running - destroy failed'])
  })
})

describe('create: locks, errors inside and outside the task', () => {
  it('holds `lock: create` while the task runs; conflicting writes get `VM is locked (create)`', async () => {
    const s = makeSim()
    await s.call('POST', '/nodes/pve1/qemu', { vmid: 101, scsi0: 'local-lvm:4' })
    const conf = await s.call('GET', '/nodes/pve1/qemu/101/config')
    expect(conf.lock).toBe('create')
    const e = await s.error('PUT', '/nodes/pve1/qemu/101/config', { name: 'x' })
    expect([e.status, e.message]).toEqual([500, 'VM is locked (create)'])
    s.advance(1000)
    expect((await s.call('GET', '/nodes/pve1/qemu/101/config')).lock).toBeUndefined()
  })

  it('a failing create task frees its volumes and removes the config', async () => {
    const s = makeSim()
    s.sim.setTaskBehaviour('qmcreate', { fail: 'unable to create VM 102 - lvcreate failed' })
    const r = await s.run('POST', '/nodes/pve1/qemu', { vmid: 102, scsi0: 'local-lvm:4' })
    expect(r.exitstatus).toBe('unable to create VM 102 - lvcreate failed')
    expect(r.log.at(-1)).toBe('TASK ERROR: unable to create VM 102 - lvcreate failed')
    expect(s.sim.guest(102)).toBeUndefined()
    expect(s.sim.storageContent('pve1', 'local-lvm')).toEqual([])
  })

  it('import-from: size must be 0 (400), the source must be images/import content (400) and exist (in the task)', async () => {
    const s = await exampleSim()
    s.sim.addVolume('pve1', 'local', { filename: 'cloud.img', content: 'iso' })
    const size = await s.error('POST', '/nodes/pve1/qemu', { vmid: 103, scsi0: `local-lvm:8,import-from=${IMPORT}` })
    expect(size.status).toBe(400)
    expect(size.errors).toEqual({
      scsi0: `'import-from' requires special syntax - use <storage ID>:0,import-from=<source>`,
    })
    const iso = await s.error('POST', '/nodes/pve1/qemu', {
      vmid: 103,
      scsi0: 'local-lvm:0,import-from=local:iso/cloud.img',
    })
    expect([iso.status, iso.errors]).toEqual([
      400,
      { scsi0: `local:iso/cloud.img has wrong type 'iso' - needs to be 'images' or 'import'` },
    ])
    // create_disks reads the source in the worker: file_size_info of its path
    const none = await s.run('POST', '/nodes/pve1/qemu', {
      vmid: 103,
      scsi0: 'local-lvm:0,import-from=local:import/nope.qcow2',
    })
    expect(none.exitstatus).toBe(`unable to create VM 103 - failed to stat '/var/lib/vz/import/nope.qcow2'`)
    expect(s.sim.guest(103)).toBeUndefined()
  })

  it('iso attach needs media=cdrom; an ISO on a cdrom gets its size= (create_disks volume_size_info)', async () => {
    const s = makeSim()
    await addDirStorage(s)
    s.sim.addVolume('pve1', 'local', { filename: 'x.iso', content: 'iso' })
    const e = await s.error('POST', '/nodes/pve1/qemu', { vmid: 104, ide2: 'local:iso/x.iso' })
    expect(e.errors).toEqual({ ide2: `explicit 'media=cdrom' is required for iso images` })
    await s.run('POST', '/nodes/pve1/qemu', {
      vmid: 104,
      ide2: 'local:iso/x.iso,media=cdrom',
      scsi0: 'vmdir:4,format=qcow2',
    })
    const conf = await s.call('GET', '/nodes/pve1/qemu/104/config')
    expect(conf.ide2).toBe('local:iso/x.iso,media=cdrom,size=2G')
    expect(conf.scsi0).toBe('vmdir:104/vm-104-disk-0.qcow2,size=4G')
    expect(conf.boot).toBe('order=scsi0;ide2')
  })

  it('EFI and TPM sizes per storage type; disks numbered in sorted key order', async () => {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', {
      vmid: 105,
      bios: 'ovmf',
      efidisk0: 'local-zfs:1,efitype=4m',
      scsi0: 'local-zfs:10',
      tpmstate0: 'local-zfs:1,version=v2.0',
    })
    const c = await s.call('GET', '/nodes/pve1/qemu/105/config')
    expect(c.efidisk0).toBe('local-zfs:vm-105-disk-0,efitype=4m,size=528K')
    expect(c.scsi0).toBe('local-zfs:vm-105-disk-1,size=10G')
    expect(c.tpmstate0).toBe('local-zfs:vm-105-disk-2,size=4M,version=v2.0')
    await addDirStorage(s)
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 106, efidisk0: 'vmdir:1', tpmstate0: 'local-lvm:1,version=v2.0' })
    const d = await s.call('GET', '/nodes/pve1/qemu/106/config')
    expect(d.efidisk0).toBe('vmdir:106/vm-106-disk-0.raw,size=128K')
    expect(d.tpmstate0).toBe('local-lvm:vm-106-disk-0,size=4M,version=v2.0')
  })

  it('cloud-init volume on file storage; cipassword hashed and masked; description trimmed', async () => {
    const s = makeSim()
    await addDirStorage(s)
    await s.run('POST', '/nodes/pve1/qemu', {
      vmid: 107,
      ide2: 'vmdir:cloudinit',
      cipassword: 's3cret-canary',
      description: 'hello\nworld\n\n  ',
    })
    const c = await s.call('GET', '/nodes/pve1/qemu/107/config')
    expect(c.ide2).toBe('vmdir:107/vm-107-cloudinit.qcow2,media=cdrom')
    expect(c.cipassword).toBe('**********')
    expect(c.description).toBe('hello\nworld')
    const text = s.sim.configText(107) ?? ''
    expect(text).not.toContain('s3cret-canary')
    expect(text).toMatch(/^#hello\n#world\n/)
    expect(text).toMatch(/cipassword: \$5\$/)
  })
})

describe('config update: pending, hotplug, digest, delete/revert', () => {
  async function vm() {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', {
      vmid: 200,
      name: 'a',
      cores: 1,
      memory: '1024',
      scsi0: 'local-lvm:4',
      net0: 'virtio,bridge=vmbr0',
    })
    return s
  }

  it('stopped VM: applied at once; digest changes iff the file changes', async () => {
    const s = await vm()
    const before = await s.call('GET', '/nodes/pve1/qemu/200/config')
    expect(await s.call('PUT', '/nodes/pve1/qemu/200/config', { cores: 4, digest: before.digest })).toBeNull()
    const after = await s.call('GET', '/nodes/pve1/qemu/200/config', { current: true })
    expect(after.cores).toBe(4)
    expect(after.digest).not.toBe(before.digest)
    const stale = await s.error('PUT', '/nodes/pve1/qemu/200/config', { cores: 2, digest: before.digest })
    expect([stale.status, stale.message]).toEqual([500, 'checksum mismatch (file change by other user?)'])
    const r = await s.run('PUT', '/nodes/pve1/qemu/200/resize', { disk: 'scsi0', size: '+1G', digest: before.digest })
    expect(r.exitstatus).toBe('checksum mismatch (file change by other user?)')
    expect(await s.call('GET', '/nodes/pve1/qemu/200/pending')).toEqual(
      expect.not.arrayContaining([expect.objectContaining({ pending: expect.anything() })]),
    )
  })

  it('running VM: cores stay pending, tags/name apply, GET merges pending, current=1 does not', async () => {
    const s = await vm()
    await s.run('POST', '/nodes/pve1/qemu/200/status/start')
    await s.call('PUT', '/nodes/pve1/qemu/200/config', { cores: 4, tags: 'B;a', name: 'b' })
    const merged = await s.call('GET', '/nodes/pve1/qemu/200/config')
    const current = await s.call('GET', '/nodes/pve1/qemu/200/config', { current: 1 })
    expect([merged.cores, current.cores]).toEqual([4, 1])
    expect([current.tags, current.name]).toEqual(['a;b', 'b'])
    const pending = await s.call('GET', '/nodes/pve1/qemu/200/pending')
    expect(pending.find((r: { key: string }) => r.key === 'cores')).toEqual({ key: 'cores', value: 1, pending: 4 })
    expect(pending.find((r: { key: string }) => r.key === 'digest')).toEqual({ key: 'digest', value: merged.digest })
    expect(s.sim.configText(200)).toMatch(/\n\[PENDING\]\ncores: 4\n$/)
    const r = await s.run('POST', '/nodes/pve1/qemu/200/status/reboot')
    expect(r.exitstatus).toBe('OK')
    expect((await s.call('GET', '/nodes/pve1/qemu/200/config', { current: 1 })).cores).toBe(4)
    expect(s.sim.configText(200)).not.toContain('[PENDING]')
  })

  it('running VM: net hotplug applies and a missing macaddr is regenerated every time', async () => {
    const s = await vm()
    const mac0 = (await s.call('GET', '/nodes/pve1/qemu/200/config')).net0
    await s.run('POST', '/nodes/pve1/qemu/200/status/start')
    await s.call('PUT', '/nodes/pve1/qemu/200/config', { net0: 'virtio,bridge=vmbr1' })
    const c = await s.call('GET', '/nodes/pve1/qemu/200/config', { current: 1 })
    expect(c.net0).toMatch(/bridge=vmbr1$/)
    expect(c.net0).not.toBe(mac0)
  })

  it('delete: disk becomes unusedN, force frees it; unknown option and set+delete are 400', async () => {
    const s = await vm()
    await s.call('PUT', '/nodes/pve1/qemu/200/config', { delete: 'scsi0' })
    let c = await s.call('GET', '/nodes/pve1/qemu/200/config')
    expect(c.unused0).toBe('local-lvm:vm-200-disk-0')
    expect(c.scsi0).toBeUndefined()
    await s.call('PUT', '/nodes/pve1/qemu/200/config', { delete: 'unused0' })
    c = await s.call('GET', '/nodes/pve1/qemu/200/config')
    expect(c.unused0).toBeUndefined()
    expect(s.sim.storageContent('pve1', 'local-lvm')).toEqual([])
    const unknown = await s.error('PUT', '/nodes/pve1/qemu/200/config', { delete: 'foo' })
    expect([unknown.status, unknown.errors]).toEqual([400, { delete: `unknown option 'foo'` }])
    const both = await s.error('PUT', '/nodes/pve1/qemu/200/config', { delete: 'name', name: 'x' })
    expect(both.status).toBe(400)
    const empty = await s.error('PUT', '/nodes/pve1/qemu/200/config', {})
    expect(empty.message).toBe('no options specified')
  })

  it('revert drops pending values; POST config is an async qmconfig task whose log notes unset deletes', async () => {
    const s = await vm()
    await s.run('POST', '/nodes/pve1/qemu/200/status/start')
    await s.call('PUT', '/nodes/pve1/qemu/200/config', { cores: 3, sockets: 2 })
    await s.call('PUT', '/nodes/pve1/qemu/200/config', { revert: 'cores' })
    const c = await s.call('GET', '/nodes/pve1/qemu/200/config')
    expect([c.cores, c.sockets]).toEqual([1, 2])
    const r = await s.run('POST', '/nodes/pve1/qemu/200/config', { delete: 'vga' })
    expect(r.upid).toContain(':qmconfig:200:')
    expect(r.exitstatus).toBe('OK')
    expect(r.log).toContain(`cannot delete 'vga' - not set in current configuration!`)
    expect(r.log[0]).toBe('update VM 200: -delete vga')
  })

  it("flock contention: sync write 500 can't lock file; a start task fails with it", async () => {
    const s = await vm()
    s.sim.setFlockContention(200, true)
    const e = await s.error('PUT', '/nodes/pve1/qemu/200/config', { cores: 2 })
    expect(e.message).toBe(`can't lock file '/var/lock/qemu-server/lock-200.conf' - got timeout`)
    const r = await s.run('POST', '/nodes/pve1/qemu/200/status/start')
    expect(r.exitstatus).toBe(`can't lock file '/var/lock/qemu-server/lock-200.conf' - got timeout`)
    s.sim.setFlockContention(200, false)
    expect(await s.call('PUT', '/nodes/pve1/qemu/200/config', { cores: 2 })).toBeNull()
  })
})

describe('power, resize, clone, template, destroy', () => {
  async function vm() {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', {
      vmid: 300,
      name: 'src',
      scsi0: 'local-lvm:4',
      net0: 'virtio,bridge=vmbr0',
      ide2: 'local-lvm:cloudinit',
    })
    return s
  }

  it('start twice: second task fails `already running`; stop of stopped VM is OK; reboot of stopped VM is 500', async () => {
    const s = await vm()
    expect((await s.run('POST', '/nodes/pve1/qemu/300/status/start')).exitstatus).toBe('OK')
    expect((await s.run('POST', '/nodes/pve1/qemu/300/status/start')).exitstatus).toBe('VM 300 already running')
    expect((await s.run('POST', '/nodes/pve1/qemu/300/status/stop')).exitstatus).toBe('OK')
    expect((await s.run('POST', '/nodes/pve1/qemu/300/status/stop')).exitstatus).toBe('OK')
    expect((await s.error('POST', '/nodes/pve1/qemu/300/status/reboot')).message).toBe('VM 300 not running')
  })

  it('shutdown timeout without forceStop fails; with forceStop it terminates', async () => {
    const s = await vm()
    await s.run('POST', '/nodes/pve1/qemu/300/status/start')
    s.sim.setIgnoresShutdown(300, true)
    const upid = await s.call('POST', '/nodes/pve1/qemu/300/status/shutdown', { timeout: 30 })
    s.advance(29_000)
    expect(s.sim.tasks().find((t) => t.upid === upid)?.status).toBe('running')
    s.advance(1_000)
    expect(s.sim.tasks().find((t) => t.upid === upid)?.exitstatus).toBe('VM quit/powerdown failed - got timeout')
    const r = await s.run('POST', '/nodes/pve1/qemu/300/status/shutdown', { forceStop: 1 })
    expect(r.exitstatus).toBe('OK')
    expect(r.log).toContain('VM still running - terminating now with SIGTERM')
    expect(s.sim.guest(300)?.status).toBe('stopped')
  })

  it('resize grows with + and absolute forms, shrink and missing disk fail inside the task', async () => {
    const s = await vm()
    expect((await s.run('PUT', '/nodes/pve1/qemu/300/resize', { disk: 'scsi0', size: '+2G' })).exitstatus).toBe('OK')
    expect((await s.call('GET', '/nodes/pve1/qemu/300/config')).scsi0).toBe('local-lvm:vm-300-disk-0,size=6G')
    expect((await s.run('PUT', '/nodes/pve1/qemu/300/resize', { disk: 'scsi0', size: '10G' })).exitstatus).toBe('OK')
    expect((await s.run('PUT', '/nodes/pve1/qemu/300/resize', { disk: 'scsi0', size: '10G' })).exitstatus).toBe('OK')
    expect((await s.run('PUT', '/nodes/pve1/qemu/300/resize', { disk: 'scsi0', size: '5G' })).exitstatus).toBe(
      'shrinking disks is not supported',
    )
    expect((await s.run('PUT', '/nodes/pve1/qemu/300/resize', { disk: 'scsi1', size: '5G' })).exitstatus).toBe(
      `disk 'scsi1' does not exist`,
    )
    expect((await s.run('PUT', '/nodes/pve1/qemu/300/resize', { disk: 'ide2', size: '5G' })).exitstatus).toBe(
      `you can't resize a cdrom`,
    )
  })

  it('template renames disks to base-, then a linked clone gets new MACs/uuid and `lock: clone` while copying', async () => {
    const s = await vm()
    const src = await s.call('GET', '/nodes/pve1/qemu/300/config')
    const t = await s.run('POST', '/nodes/pve1/qemu/300/template')
    expect(t.upid).toContain(':qmtemplate:300:')
    const tc = await s.call('GET', '/nodes/pve1/qemu/300/config')
    expect([tc.template, tc.scsi0]).toEqual([1, 'local-lvm:base-300-disk-0,size=4G'])
    expect((await s.error('POST', '/nodes/pve1/qemu/300/template')).message).toBe(
      `you can't convert a template to a template`,
    )
    expect((await s.run('POST', '/nodes/pve1/qemu/300/status/start')).exitstatus).toBe(
      `you can't start a vm if it's a template`,
    )
    const upid = await s.call('POST', '/nodes/pve1/qemu/300/clone', { newid: 301 })
    expect(upid).toContain(':qmclone:300:')
    const during = await s.call('GET', '/nodes/pve1/qemu/301/config')
    expect([during.lock, during.description]).toEqual(['clone', 'qmclone temporary file'])
    expect(s.sim.configText(301)).toBe('#qmclone temporary file\nlock: clone\n')
    expect((await s.error('PUT', '/nodes/pve1/qemu/301/config', { cores: 2 })).message).toBe('VM is locked (clone)')
    s.advance(1000)
    const cc = await s.call('GET', '/nodes/pve1/qemu/301/config')
    expect(cc.name).toBe('Copy-of-VM-src')
    expect(cc.template).toBeUndefined()
    expect(cc.scsi0).toBe('local-lvm:vm-301-disk-0,size=4G')
    // clone_disk records every new volume's size, the cloud-init drive's too
    expect(cc.ide2).toBe('local-lvm:vm-301-cloudinit,media=cdrom,size=4M')
    expect(cc.net0).not.toBe(src.net0)
    expect(cc.smbios1).not.toBe(src.smbios1)
    expect(cc.vmgenid).not.toBe(src.vmgenid)
    const storage = await s.error('POST', '/nodes/pve1/qemu/300/clone', { newid: 302, storage: 'local-zfs' })
    expect(storage.message).toBe(`parameter 'storage' not allowed for linked clones`)
    const exists = await s.error('POST', '/nodes/pve1/qemu/300/clone', { newid: 301 })
    expect(exists.message).toBe(`unable to create VM 301: config file already exists`)
  })

  it('full clone of a normal VM by default; linked clone of a non-template refused', async () => {
    const s = await vm()
    const linked = await s.error('POST', '/nodes/pve1/qemu/300/clone', { newid: 310, full: 0 })
    expect(linked.message).toBe(`Linked clone feature is not supported for 'local-lvm:vm-300-disk-0' (scsi0)`)
    await s.run('POST', '/nodes/pve1/qemu/300/clone', { newid: 310, name: 'copy', storage: 'local-zfs' })
    expect((await s.call('GET', '/nodes/pve1/qemu/310/config')).scsi0).toBe('local-zfs:vm-310-disk-0,size=4G')
  })

  it('destroy holds `lock: destroyed`, frees owned disks, and protection refuses', async () => {
    const s = await vm()
    await s.call('PUT', '/nodes/pve1/qemu/300/config', { protection: 1 })
    expect((await s.error('DELETE', '/nodes/pve1/qemu/300')).message).toBe(
      `can't remove VM 300 - protection mode enabled`,
    )
    await s.call('PUT', '/nodes/pve1/qemu/300/config', { delete: 'protection' })
    // a config lock fails qemu's destroy inside the task, and leaves the guest as it was
    s.sim.setLock(300, 'backup')
    expect((await s.run('DELETE', '/nodes/pve1/qemu/300')).exitstatus).toBe('VM is locked (backup)')
    expect(s.sim.guest(300)?.lock).toBe('backup')
    s.sim.setLock(300, null)
    const upid = await s.call('DELETE', '/nodes/pve1/qemu/300', { purge: 1, 'destroy-unreferenced-disks': 1 })
    expect(upid).toContain(':qmdestroy:300:')
    expect((await s.call('GET', '/nodes/pve1/qemu/300/config')).lock).toBe('destroyed')
    s.advance(1000)
    expect((await s.error('GET', '/nodes/pve1/qemu/300/config')).status).toBe(500)
    expect(s.sim.storageContent('pve1', 'local-lvm')).toEqual([])
  })
})

describe('drives: unused re-attach, one cloud-init drive, drift', () => {
  it('re-attaching an unusedN volume removes the unused entry and keeps the size', async () => {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 400, scsi0: 'local-lvm:4', scsi1: 'local-lvm:2' })
    await s.call('PUT', '/nodes/pve1/qemu/400/config', { delete: 'scsi1' })
    expect((await s.call('GET', '/nodes/pve1/qemu/400/config')).unused0).toBe('local-lvm:vm-400-disk-1')
    await s.call('PUT', '/nodes/pve1/qemu/400/config', { scsi2: 'local-lvm:vm-400-disk-1,discard=on' })
    const c = await s.call('GET', '/nodes/pve1/qemu/400/config')
    expect(c.unused0).toBeUndefined()
    expect(c.scsi2).toBe('local-lvm:vm-400-disk-1,discard=on,size=2G')
  })

  it('a second cloud-init drive is refused', async () => {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 401, scsi1: 'local-lvm:cloudinit' })
    const e = await s.error('PUT', '/nodes/pve1/qemu/401/config', { ide2: 'local-lvm:cloudinit' })
    expect(e.message).toBe(`ide2 - cloud-init drive is already attached at 'scsi1'`)
  })

  it('drift edits change the file (and digest) without pending; tags are normalised like qm set', async () => {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 402, name: 'a' })
    await s.run('POST', '/nodes/pve1/qemu/402/status/start')
    const before = (await s.call('GET', '/nodes/pve1/qemu/402/config')).digest
    s.sim.driftSet(402, 'cores', '8')
    s.sim.driftSet(402, 'tags', 'X,a')
    s.sim.driftDelete(402, 'name')
    const c = await s.call('GET', '/nodes/pve1/qemu/402/config', { current: 1 })
    expect([c.cores, c.tags, c.name]).toEqual([8, 'a;x', undefined])
    expect(c.digest).not.toBe(before)
    expect(s.sim.guest(402)?.pending).toEqual({})
  })
})

describe('hotplug matrix for a running VM (default hotplug=network,disk,usb)', () => {
  async function running(extra: Record<string, unknown> = {}) {
    const s = makeSim()
    s.sim.addVolume('pve1', 'local', { filename: 'a.iso', content: 'iso' })
    s.sim.addVolume('pve1', 'local', { filename: 'b.iso', content: 'iso' })
    await s.run('POST', '/nodes/pve1/qemu', {
      vmid: 500,
      scsi0: 'local-lvm:4',
      ide2: 'local:iso/a.iso,media=cdrom',
      memory: '2048',
      ...extra,
    })
    await s.run('POST', '/nodes/pve1/qemu/500/status/start')
    return s
  }
  const current = async (s: Awaited<ReturnType<typeof running>>) =>
    s.call('GET', '/nodes/pve1/qemu/500/config', { current: 1 })
  const pendingKeys = async (s: Awaited<ReturnType<typeof running>>) =>
    ((await s.call('GET', '/nodes/pve1/qemu/500/pending')) as { key: string; pending?: unknown; delete?: number }[])
      .filter((r) => r.pending !== undefined || r.delete !== undefined)
      .map((r) => r.key)

  it('scsi/virtio disks hot-add; sata/ide disks and disk option changes go pending', async () => {
    const s = await running()
    await s.call('PUT', '/nodes/pve1/qemu/500/config', {
      scsi1: 'local-lvm:1',
      virtio0: 'local-lvm:1',
      sata0: 'local-lvm:1',
    })
    const c = await current(s)
    expect([c.scsi1, c.virtio0, c.sata0]).toEqual([
      'local-lvm:vm-500-disk-2,size=1G',
      'local-lvm:vm-500-disk-3,size=1G',
      undefined,
    ]) // sata0 took disk-1 (sorted key order)
    expect(await pendingKeys(s)).toEqual(['sata0'])
    await s.call('PUT', '/nodes/pve1/qemu/500/config', { scsi0: 'local-lvm:vm-500-disk-0,discard=on' })
    expect(await pendingKeys(s)).toEqual(['sata0', 'scsi0'])
  })

  it('cdrom media changes live; memory needs memory hotplug and NUMA; balloon and cpulimit are live', async () => {
    const s = await running()
    await s.call('PUT', '/nodes/pve1/qemu/500/config', {
      ide2: 'local:iso/b.iso,media=cdrom',
      memory: '4096',
      cpulimit: '2',
      balloon: 1024,
    })
    const c = await current(s)
    expect([c.ide2, c.memory, c.cpulimit, c.balloon]).toEqual([
      'local:iso/b.iso,media=cdrom,size=2G',
      '2048',
      '2',
      1024,
    ])
    expect(await pendingKeys(s)).toEqual(['memory'])
    const h = await running({ hotplug: 'network,disk,memory,cpu', numa: 1 })
    await h.call('PUT', '/nodes/pve1/qemu/500/config', { memory: '4096', vcpus: 1 })
    expect([(await current(h)).memory, (await current(h)).vcpus]).toEqual(['4096', 1])
    const too = await h.error('PUT', '/nodes/pve1/qemu/500/config', { balloon: 8192 })
    expect(too.message).toBe('balloon value too large (must be smaller than assigned memory)')
  })

  it('hotplug=0: even network changes and scsi deletes wait for a restart', async () => {
    const s = await running({ hotplug: '0', net0: 'virtio,bridge=vmbr0' })
    await s.call('PUT', '/nodes/pve1/qemu/500/config', { net0: 'virtio,bridge=vmbr9', delete: 'scsi0' })
    // deleting a boot device rewrites the boot order too, and that waits as well
    expect(await pendingKeys(s)).toEqual(['boot', 'net0', 'scsi0'])
    expect(s.sim.configText(500)).toMatch(/\[PENDING\]\nboot: order=ide2;net0\ndelete: scsi0\nnet0: virtio=/)
    await s.run('POST', '/nodes/pve1/qemu/500/status/stop')
    await s.run('POST', '/nodes/pve1/qemu/500/status/start')
    const c = await current(s)
    expect(c.net0).toMatch(/bridge=vmbr9$/)
    expect([c.scsi0, c.unused0, c.boot]).toEqual([undefined, 'local-lvm:vm-500-disk-0', 'order=ide2;net0'])
  })

  it('boot order follows device deletes and new cdroms; an explicit order must name existing devices', async () => {
    const s = makeSim()
    s.sim.addVolume('pve1', 'local', { filename: 'a.iso', content: 'iso' })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 510, scsi0: 'local-lvm:1', net0: 'virtio,bridge=vmbr0' })
    expect((await s.call('GET', '/nodes/pve1/qemu/510/config')).boot).toBe('order=scsi0;net0')
    await s.call('PUT', '/nodes/pve1/qemu/510/config', { ide2: 'local:iso/a.iso,media=cdrom' })
    expect((await s.call('GET', '/nodes/pve1/qemu/510/config')).boot).toBe('order=scsi0;net0;ide2')
    await s.call('PUT', '/nodes/pve1/qemu/510/config', { delete: 'net0' })
    expect((await s.call('GET', '/nodes/pve1/qemu/510/config')).boot).toBe('order=scsi0;ide2')
    const bad = await s.error('PUT', '/nodes/pve1/qemu/510/config', { boot: 'order=scsi0;virtio3' })
    expect(bad.message).toBe(`invalid bootorder: device 'virtio3' does not exist'`)
    const both = await s.error('PUT', '/nodes/pve1/qemu/510/config', { cores: 2, revert: 'cores' })
    expect(both.errors).toEqual({ delete: `you can't use '-cores' and -revert cores' at the same time` })
  })

  it('POST config with background_delay returns null once the task is done, 500 when it failed', async () => {
    const s = makeSim({ taskDurationMs: 500 })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 501 })
    expect(await s.call('POST', '/nodes/pve1/qemu/501/config', { cores: 2, background_delay: 5 })).toBeNull()
    expect((await s.call('GET', '/nodes/pve1/qemu/501/config')).cores).toBe(2)
    s.sim.setTaskBehaviour('qmconfig', { fail: 'boom' })
    const e = await s.error('POST', '/nodes/pve1/qemu/501/config', { cores: 3, background_delay: 5 })
    expect(e.message).toBe('failed to update VM 501: boom')
  })

  it('the cdrom alias and /pending masking of cipassword', async () => {
    const s = makeSim()
    s.sim.addVolume('pve1', 'local', { filename: 'a.iso', content: 'iso' })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 502, cdrom: 'local:iso/a.iso', cipassword: 'one' })
    expect((await s.call('GET', '/nodes/pve1/qemu/502/config')).ide2).toBe('local:iso/a.iso,media=cdrom,size=2G')
    await s.run('POST', '/nodes/pve1/qemu/502/status/start')
    await s.call('PUT', '/nodes/pve1/qemu/502/config', { cores: 4 })
    const rows = await s.call('GET', '/nodes/pve1/qemu/502/pending')
    expect(rows.find((r: { key: string }) => r.key === 'cipassword')).toEqual({
      key: 'cipassword',
      value: '**********',
    })
  })
})

describe('flock during long operations', () => {
  it('parallel clones of a stopped template share its flock; a config write meanwhile times out', async () => {
    const s = makeSim({ taskDurationMs: 5000 })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 9000, scsi0: 'local-lvm:2' })
    await s.run('POST', '/nodes/pve1/qemu/9000/template')
    await s.call('POST', '/nodes/pve1/qemu/9000/clone', { newid: 101 })
    await s.call('POST', '/nodes/pve1/qemu/9000/clone', { newid: 102 })
    const e = await s.error('PUT', '/nodes/pve1/qemu/9000/config', { description: 'x' })
    expect(e.message).toBe(`can't lock file '/var/lock/qemu-server/lock-9000.conf' - got timeout`)
    s.advance(5000)
    expect(await s.call('PUT', '/nodes/pve1/qemu/9000/config', { description: 'x' })).toBeNull()
    expect((await s.call('GET', '/nodes/pve1/qemu/102/config')).scsi0).toBe('local-lvm:vm-102-disk-0,size=2G')
    const content = s.sim.storageContent('pve1', 'local-lvm')
    // LvmThinPlugin list_images: a linked clone records no base, so none is listed
    const clone = content.find((v) => v.volid === 'local-lvm:vm-101-disk-0')
    expect(clone).toMatchObject({ vmid: 101 })
    expect(clone).not.toHaveProperty('parent')
  })

  it('linked clones on dir storage nest under the base volume; destroy_vm refuses the template while they exist', async () => {
    const s = makeSim()
    await addDirStorage(s)
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 9001, scsi0: 'vmdir:2,format=qcow2' })
    await s.run('POST', '/nodes/pve1/qemu/9001/template')
    expect((await s.call('GET', '/nodes/pve1/qemu/9001/config')).scsi0).toBe(
      'vmdir:9001/base-9001-disk-0.qcow2,size=2G',
    )
    await s.run('POST', '/nodes/pve1/qemu/9001/clone', { newid: 103, name: 'linked' })
    expect((await s.call('GET', '/nodes/pve1/qemu/103/config')).scsi0).toBe(
      'vmdir:9001/base-9001-disk-0.qcow2/103/vm-103-disk-0.qcow2,size=2G',
    )
    // Plugin list_images: the parent is qemu-img's backing file name, relative to the image's directory
    expect(s.sim.storageContent('pve1', 'vmdir').find((v) => v.vmid === 103)).toMatchObject({
      parent: '../9001/base-9001-disk-0.qcow2',
    })
    // qemu-server destroy_vm: the template is refused before anything is removed
    const d = await s.run('DELETE', '/nodes/pve1/qemu/9001')
    expect(d.exitstatus).toBe(`base volume 'vmdir:9001/base-9001-disk-0.qcow2' is still in use by linked cloned`)
    expect(s.sim.guest(9001)?.config.template).toBe('1')
    expect(s.sim.guest(9001)?.config.lock).toBeUndefined()
    // destroying the clone frees only its own volume; then the template goes
    await s.run('DELETE', '/nodes/pve1/qemu/103')
    expect(s.sim.storageContent('pve1', 'vmdir').map((v) => v.volid)).toEqual(['vmdir:9001/base-9001-disk-0.qcow2'])
    expect((await s.run('DELETE', '/nodes/pve1/qemu/9001')).exitstatus).toBe('OK')
    expect(s.sim.storageContent('pve1', 'vmdir')).toEqual([])
  })
})

describe('secret canaries never leave the model', () => {
  it('cipassword set through POST config is hidden in the task log, the file, GET and /pending', async () => {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 600 })
    await s.run('POST', '/nodes/pve1/qemu/600/status/start')
    const canary = 'CANARY-pw-7f3a'
    const r = await s.run('POST', '/nodes/pve1/qemu/600/config', { cipassword: canary, cores: 2 })
    expect(r.log.join('\n')).toContain('-cipassword <hidden>')
    const everything = [
      r.log.join('\n'),
      s.sim.configText(600) ?? '',
      JSON.stringify(await s.call('GET', '/nodes/pve1/qemu/600/config')),
      JSON.stringify(await s.call('GET', '/nodes/pve1/qemu/600/pending')),
      JSON.stringify(s.sim.tasks()),
    ].join('\n')
    expect(everything).not.toContain(canary)
  })
})

describe('pending drives', () => {
  it('a disk allocated for a running VM that stays pending becomes unusedN when reverted', async () => {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 700, scsi0: 'local-lvm:1' })
    await s.run('POST', '/nodes/pve1/qemu/700/status/start')
    await s.call('PUT', '/nodes/pve1/qemu/700/config', { sata1: 'local-lvm:2' })
    expect(s.sim.guest(700)?.pending.sata1).toBe('local-lvm:vm-700-disk-1,size=2G')
    await s.call('PUT', '/nodes/pve1/qemu/700/config', { revert: 'sata1' })
    const g = s.sim.guest(700)
    expect([g?.pending.sata1, g?.config.unused0]).toEqual([undefined, 'local-lvm:vm-700-disk-1'])
    expect(s.sim.storageContent('pve1', 'local-lvm')).toHaveLength(2)
  })
})

describe('flock held by a running task', () => {
  it('a start of the source while its clone copies fails inside the task with the flock timeout', async () => {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 800, scsi0: 'local-lvm:1' })
    s.sim.setTaskBehaviour('qmclone', { durationMs: 5000 })
    await s.call('POST', '/nodes/pve1/qemu/800/clone', { newid: 801 })
    const start = await s.call('POST', '/nodes/pve1/qemu/800/status/start')
    s.advance(1000)
    const t = s.sim.tasks().find((x) => x.upid === start)
    expect(t?.exitstatus).toBe(`can't lock file '/var/lock/qemu-server/lock-800.conf' - got timeout`)
    s.advance(4000)
    expect(s.sim.guest(801)?.lock).toBeUndefined()
    expect((await s.run('POST', '/nodes/pve1/qemu/800/status/start')).exitstatus).toBe('OK')
  })
})
