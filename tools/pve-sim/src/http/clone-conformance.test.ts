/**
 * Guest clones over raw HTTP, each test named after the function it follows: pve-container
 * PVE::API2::LXC clone_vm (set_lock, create_and_lock_config, copy_volume, vdisk_clone), PVE::API2::LXC::Snapshot
 * snapshot (reserved names), qemu-server PVE::API2::Qemu clone_vm ($load_and_check, check_storage_access_clone,
 * clone_disk), and pve-storage volume_has_feature.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { apiRequest, dataOf, waitTask, type RawResponse } from './test-support/raw.js'

let sim: Simulator
let auth: Record<string, string>
let template: string
const req = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> =>
  apiRequest(sim, auth, method, path, params)
const data = dataOf
const message = (r: RawResponse) => (r.json as { message?: string } | undefined)?.message
type Conf = Record<string, unknown>
const config = async (type: string, vmid: number): Promise<Conf> =>
  data<Conf>(await req('GET', `/nodes/pve1/${type}/${vmid}/config`))

/** a task-returning call: its final status */
async function run(method: string, path: string, params?: Record<string, string>): Promise<Record<string, unknown>> {
  const r = await req(method, path, params)
  expect(r.status, r.body).toBe(200)
  return waitTask(sim, auth, 'pve1', data<string>(r))
}
async function ok(method: string, path: string, params?: Record<string, string>): Promise<void> {
  expect((await run(method, path, params)).exitstatus).toBe('OK')
}
const ct = (vmid: number, extra: Record<string, string> = {}) =>
  ok('POST', '/nodes/pve1/lxc', { vmid: String(vmid), ostemplate: template, rootfs: 'local-lvm:2', ...extra })

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 20, resourcesLagMs: 0, log: () => {} })
  auth = { Authorization: sim.token.header }
  template = sim.control.addVolume('pve1', 'local', {
    filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
    content: 'vztmpl',
  })
  sim.control.addVolume('pve1', 'local', { filename: 'debian-13.iso', content: 'iso' })
  const storages: Record<string, string>[] = [
    { storage: 'nas', type: 'nfs', server: '10.0.0.9', export: '/vms', content: 'images,rootdir' },
    { storage: 'only1', type: 'nfs', server: '10.0.0.9', export: '/one', content: 'images,rootdir', nodes: 'pve1' },
  ]
  for (const s of storages) expect((await req('POST', '/storage', s)).status).toBe(200)
})
afterAll(async () => {
  await sim.close()
})
beforeEach(() => {
  sim.control.setTaskBehaviour('vzclone', null)
  sim.control.setTaskBehaviour('qmclone', null)
})

describe('pve-container PVE::API2::LXC clone_vm', () => {
  it('a full clone of a running CT needs a snapshot; refused before forking, it leaves no lock and no target', async () => {
    await ct(500, { hostname: 'orig', net0: 'name=eth0,bridge=vmbr0' })
    await ok('POST', '/nodes/pve1/lxc/500/status/start')
    const r = await req('POST', '/nodes/pve1/lxc/500/clone', { newid: '501' })
    expect([r.status, message(r)]).toEqual([
      500,
      'Full clone of a running container is only possible from a snapshot\n',
    ])
    expect((await config('lxc', 500)).lock).toBeUndefined()
    expect((await req('GET', '/nodes/pve1/lxc/501/config')).status).toBe(500)
    const missing = await req('POST', '/nodes/pve1/lxc/500/clone', { newid: '501', snapname: 'nosuch' })
    expect(message(missing)).toBe("snapshot 'nosuch' does not exist\n")
    expect((await config('lxc', 500)).lock).toBeUndefined()
  })

  it("a clone from a snapshot takes the snapshot's config (its comment as description) and the volume's current size", async () => {
    await ok('POST', '/nodes/pve1/lxc/500/snapshot', { snapname: 'before', description: 'known good' })
    expect((await req('PUT', '/nodes/pve1/lxc/500/config', { hostname: 'changed', cores: '4' })).status).toBe(200)
    await ok('PUT', '/nodes/pve1/lxc/500/resize', { disk: 'rootfs', size: '+1G' })
    sim.control.setTaskBehaviour('vzclone', { hold: true })
    const upid = data<string>(await req('POST', '/nodes/pve1/lxc/500/clone', { newid: '501', snapname: 'before' }))
    // before forking: the source holds `lock: disk`, the target exists with `lock: create` and no volumes yet
    expect((await config('lxc', 500)).lock).toBe('disk')
    const during = await config('lxc', 501)
    expect([during.lock, during.hostname, during.rootfs]).toEqual(['create', 'orig', undefined])
    sim.control.setTaskBehaviour('vzclone', null)
    expect((await waitTask(sim, auth, 'pve1', upid)).exitstatus).toBe('OK')
    const clone = await config('lxc', 501)
    expect(clone).toMatchObject({
      hostname: 'orig',
      description: 'known good',
      rootfs: 'local-lvm:vm-501-disk-0,size=3G',
    })
    expect(clone).not.toHaveProperty('cores')
    expect(clone).not.toHaveProperty('lock')
    expect(clone).not.toHaveProperty('parent')
    expect(clone.net0).not.toBe((await config('lxc', 500)).net0)
    expect((await config('lxc', 500)).lock).toBeUndefined()
  })

  it('the source lock comes first (set_lock), then check_vmid_unused; a bind mount cannot be cloned', async () => {
    sim.control.setLock(500, 'backup')
    expect(message(await req('POST', '/nodes/pve1/lxc/500/clone', { newid: '501', snapname: 'before' }))).toBe(
      'CT is locked (backup)\n',
    )
    sim.control.setLock(500, null)
    expect(message(await req('POST', '/nodes/pve1/lxc/500/clone', { newid: '501', snapname: 'before' }))).toBe(
      "CT 501 already exists on node 'pve1'\n",
    )
    expect((await config('lxc', 500)).lock).toBeUndefined()
    await ct(505)
    sim.control.driftSet(505, 'mp0', '/srv/data,mp=/data')
    expect(message(await req('POST', '/nodes/pve1/lxc/505/clone', { newid: '506' }))).toBe(
      "unable to clone mountpoint 'mp0' (type bind)\n",
    )
    expect([(await config('lxc', 505)).lock, (await req('GET', '/nodes/pve1/lxc/506/config')).status]).toEqual([
      undefined,
      500,
    ])
  })

  it('linked clones need a base volume or a snapshot the storage can clone (volume_has_feature clone)', async () => {
    await ct(510)
    expect(message(await req('POST', '/nodes/pve1/lxc/510/clone', { newid: '511', full: '0' }))).toBe(
      "Linked clone feature for 'local-lvm:vm-510-disk-0' is not available\n",
    )
    await ok('POST', '/nodes/pve1/lxc/510/snapshot', { snapname: 's1' })
    await ok('PUT', '/nodes/pve1/lxc/510/resize', { disk: 'rootfs', size: '3G' })
    expect(
      message(await req('POST', '/nodes/pve1/lxc/510/clone', { newid: '511', full: '0', storage: 'local-lvm' })),
    ).toBe("parameter 'storage' not allowed for linked clones\n")
    // lvmthin clones a snapshot: the new volume has the size the volume had then
    await ok('POST', '/nodes/pve1/lxc/510/clone', { newid: '511', full: '0', snapname: 's1' })
    expect((await config('lxc', 511)).rootfs).toBe('local-lvm:vm-511-disk-0,size=2G')
    // ZFS clones only a base volume
    await ct(520, { rootfs: 'local-zfs:2' })
    await ok('POST', '/nodes/pve1/lxc/520/snapshot', { snapname: 's1' })
    expect(message(await req('POST', '/nodes/pve1/lxc/520/clone', { newid: '521', full: '0', snapname: 's1' }))).toBe(
      "Linked clone feature for 'local-zfs:subvol-520-disk-0' is not available\n",
    )
  })

  it('a full clone copies everything else of the current config, the raw lxc.* lines too', async () => {
    sim.control.setRawLxc(510, [['lxc.cgroup2.devices.allow', 'c 10:200 rwm']])
    await ok('POST', '/nodes/pve1/lxc/510/clone', { newid: '513', hostname: 'copy' })
    const clone = await config('lxc', 513)
    expect(clone).toMatchObject({ hostname: 'copy', lxc: [['lxc.cgroup2.devices.allow', 'c 10:200 rwm']] })
    expect(clone.rootfs).toBe('local-lvm:vm-513-disk-0,size=3G')
  })

  it("snapshot refuses the reserved name 'vzdump' at once; clone_vm does not check it", async () => {
    const snap = await req('POST', '/nodes/pve1/lxc/510/snapshot', { snapname: 'vzdump' })
    expect([snap.status, message(snap)]).toEqual([500, "unable to use snapshot name 'vzdump' (reserved name)\n"])
    expect(message(await req('POST', '/nodes/pve1/lxc/510/clone', { newid: '512', snapname: 'vzdump' }))).toBe(
      "snapshot 'vzdump' does not exist\n",
    )
  })
})

describe('qemu-server PVE::API2::Qemu clone_vm', () => {
  it("a clone from a snapshot takes the snapshot's config; a full copy gets the volume's current size", async () => {
    await ok('POST', '/nodes/pve1/qemu', { vmid: '600', name: 'vmsrc', cores: '1', scsi0: 'local-lvm:1' })
    await ok('POST', '/nodes/pve1/qemu/600/snapshot', { snapname: 'base', description: 'golden' })
    expect((await req('PUT', '/nodes/pve1/qemu/600/config', { cores: '2' })).status).toBe(200)
    await ok('PUT', '/nodes/pve1/qemu/600/resize', { disk: 'scsi0', size: '2G' })
    const st = await run('POST', '/nodes/pve1/qemu/600/clone', { newid: '601', snapname: 'base' })
    expect(st.exitstatus).toBe('OK')
    const clone = await config('qemu', 601)
    expect(clone).toMatchObject({
      name: 'Copy-of-VM-vmsrc',
      cores: 1,
      description: 'golden',
      scsi0: 'local-lvm:vm-601-disk-0,size=2G',
    })
    expect(clone).not.toHaveProperty('parent')
    expect(clone).not.toHaveProperty('snaptime')
    // lvmthin can also clone the snapshot linked: the size the volume had then
    await ok('POST', '/nodes/pve1/qemu/600/clone', { newid: '602', snapname: 'base', full: '0' })
    expect((await config('qemu', 602)).scsi0).toBe('local-lvm:vm-602-disk-0,size=1G')
    expect(message(await req('POST', '/nodes/pve1/qemu/600/clone', { newid: '603', snapname: 'nope' }))).toBe(
      "snapshot 'nope' does not exist\n",
    )
  })

  it('ZFS copies no snapshot and clones no current volume: the messages name the volume and the drive', async () => {
    await ok('POST', '/nodes/pve1/qemu', { vmid: '610', scsi0: 'local-zfs:1' })
    await ok('POST', '/nodes/pve1/qemu/610/snapshot', { snapname: 'snap' })
    expect(message(await req('POST', '/nodes/pve1/qemu/610/clone', { newid: '611', snapname: 'snap' }))).toBe(
      "Full clone feature is not supported for a snapshot of 'local-zfs:vm-610-disk-0' (scsi0)\n",
    )
    expect(message(await req('POST', '/nodes/pve1/qemu/610/clone', { newid: '611', full: '0' }))).toBe(
      "Linked clone feature is not supported for 'local-zfs:vm-610-disk-0' (scsi0)\n",
    )
  })

  it('a full clone of a running VM cannot copy its TPM state unless it clones a snapshot', async () => {
    await ok('POST', '/nodes/pve1/qemu', { vmid: '630', scsi0: 'local-lvm:1', tpmstate0: 'local-lvm:1,version=v2.0' })
    await ok('POST', '/nodes/pve1/qemu/630/status/start')
    expect(message(await req('POST', '/nodes/pve1/qemu/630/clone', { newid: '631' }))).toBe(
      'cannot clone TPM state while VM is running\n',
    )
    await ok('POST', '/nodes/pve1/qemu/630/snapshot', { snapname: 'live' })
    await ok('POST', '/nodes/pve1/qemu/630/clone', { newid: '631', snapname: 'live' })
    expect((await config('qemu', 631)).tpmstate0).toBe('local-lvm:vm-631-disk-1,size=4M,version=v2.0')
  })

  it('the source flock is taken by the worker: contention fails the qmclone task and creates no target', async () => {
    sim.control.setFlockContention(600, true)
    const st = await run('POST', '/nodes/pve1/qemu/600/clone', { newid: '620' })
    expect(st.exitstatus).toBe("can't lock file '/var/lock/qemu-server/lock-600.conf' - got timeout")
    expect((await req('GET', '/nodes/pve1/qemu/620/config')).status).toBe(500)
    sim.control.setFlockContention(600, false)
  })
})

describe('cross-node clones (target): qemu judges the source disks, pve-container the storages the copies go to', () => {
  const guests = async (node: string, type: string): Promise<number[]> =>
    data<{ vmid: number }[]>(await req('GET', `/nodes/${node}/${type}`))
      .map((g) => g.vmid)
      .sort()

  it('qemu-server clone_vm: with `storage`, the storage must be enabled on the target node and shared', async () => {
    await ok('POST', '/nodes/pve1/qemu', { vmid: '700', scsi0: 'nas:1', ide2: 'none,media=cdrom' })
    const clone = (params: Record<string, string>) =>
      req('POST', '/nodes/pve1/qemu/700/clone', { newid: '701', ...params })
    expect(message(await clone({ target: 'pve2', storage: 'local-lvm' }))).toBe(
      "can't clone to non-shared storage 'local-lvm'\n",
    )
    expect(message(await clone({ target: 'pve2', storage: 'only1' }))).toBe(
      "storage 'only1' is not available on node 'pve2'\n",
    )
    expect(message(await clone({ target: 'nosuch' }))).toBe("no such cluster node 'nosuch'\n")
    expect(await guests('pve2', 'qemu')).toEqual([])
  })

  it('qemu-server clone_vm (check_storage_access_clone): a VM on shared storage is cloned, and its config moves to the target', async () => {
    const st = await run('POST', '/nodes/pve1/qemu/700/clone', { newid: '701', target: 'pve2' })
    expect(st.exitstatus).toBe('OK')
    expect(await guests('pve2', 'qemu')).toEqual([701])
    expect((await req('GET', '/nodes/pve1/qemu/701/config')).status).toBe(500)
    const conf = data<Conf>(await req('GET', '/nodes/pve2/qemu/701/config'))
    expect([conf.scsi0, conf.ide2]).toEqual(['nas:701/vm-701-disk-0.raw,size=1G', 'none,media=cdrom'])
    // the copy is on the shared storage, seen from the target node
    const onPve2 = data<{ volid: string }[]>(await req('GET', '/nodes/pve2/storage/nas/content')).map((v) => v.volid)
    expect(onPve2).toContain('nas:701/vm-701-disk-0.raw')
  })

  it('qemu-server clone_vm: an ISO or a disk on local storage refuses the target node, even with a shared `storage`', async () => {
    await ok('POST', '/nodes/pve1/qemu', {
      vmid: '705',
      scsi0: 'nas:1',
      ide2: 'local:iso/debian-13.iso,media=cdrom',
    })
    expect(message(await req('POST', '/nodes/pve1/qemu/705/clone', { newid: '706', target: 'pve2' }))).toBe(
      "can't clone VM to node 'pve2' (VM uses local storage)\n",
    )
    await ok('POST', '/nodes/pve1/qemu', { vmid: '707', scsi0: 'local-lvm:1' })
    const r = await req('POST', '/nodes/pve1/qemu/707/clone', { newid: '708', target: 'pve2', storage: 'nas' })
    expect([r.status, message(r)]).toEqual([500, "can't clone VM to node 'pve2' (VM uses local storage)\n"])
    // the local node as target is no target at all
    await ok('POST', '/nodes/pve1/qemu/707/clone', { newid: '708', target: 'pve1' })
    expect(await guests('pve2', 'qemu')).toEqual([701])
  })

  it('qemu-server check_storage_access_clone: a drive on a storage that is not configured dies in storage_config', async () => {
    await ok('POST', '/nodes/pve1/qemu', { vmid: '709', scsi0: 'nas:1' })
    sim.control.driftSet(709, 'scsi1', 'gone:vm-709-disk-0,size=1G')
    expect(message(await req('POST', '/nodes/pve1/qemu/709/clone', { newid: '710' }))).toBe(
      "storage 'gone' does not exist\n",
    )
  })

  it("pve-container clone_vm: the copies' storage decides; a refusal leaves no lock and no target", async () => {
    await ct(720)
    const r = await req('POST', '/nodes/pve1/lxc/720/clone', { newid: '721', target: 'pve2' })
    expect([r.status, message(r)]).toEqual([500, "can't clone CT to node 'pve2' (CT uses local storage)\n"])
    expect((await config('lxc', 720)).lock).toBeUndefined()
    expect((await req('GET', '/nodes/pve1/lxc/721/config')).status).toBe(500)
    expect(
      message(await req('POST', '/nodes/pve1/lxc/720/clone', { newid: '721', target: 'pve2', storage: 'local-lvm' })),
    ).toBe("can't clone to non-shared storage 'local-lvm'\n")
    // onto a shared storage the local CT goes to the other node
    await ok('POST', '/nodes/pve1/lxc/720/clone', { newid: '721', target: 'pve2', storage: 'nas', hostname: 'moved' })
    expect(await guests('pve2', 'lxc')).toEqual([721])
    const conf = data<Conf>(await req('GET', '/nodes/pve2/lxc/721/config'))
    expect([conf.rootfs, conf.hostname, conf.lock]).toEqual(['nas:721/vm-721-disk-0.raw,size=2G', 'moved', undefined])
    expect((await config('lxc', 720)).lock).toBeUndefined()
  })

  it('pve-container clone_vm: a CT on shared storage needs no `storage`', async () => {
    await ct(725, { rootfs: 'nas:1' })
    await ok('POST', '/nodes/pve1/lxc/725/clone', { newid: '726', target: 'pve3' })
    expect(await guests('pve3', 'lxc')).toEqual([726])
    expect(data<Conf>(await req('GET', '/nodes/pve3/lxc/726/config')).rootfs).toBe('nas:726/vm-726-disk-0.raw,size=1G')
  })
})
