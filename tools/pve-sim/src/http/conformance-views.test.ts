/**
 * Conformance over raw HTTPS for the hotplug routing of NICs and the snapshot, status, task and resource
 * views. Each test names the PVE function it follows (qemu-server, pve-container, pve-guest-common,
 * pve-manager).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { form, raw, waitTask, type RawResponse } from './test-support/raw.js'

let sim: Simulator
let auth: Record<string, string>
const req = (
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> =>
  raw(sim, method, `/api2/json${path}`, { ...opts, headers: { ...auth, ...(opts.headers ?? {}) } })
const formReq = (method: string, path: string, params: Record<string, string>): Promise<RawResponse> => {
  const f = form(params)
  return req(method, path, { headers: f.headers, body: f.body })
}
const data = <T = Record<string, unknown>>(r: RawResponse): T => (r.json as { data: T }).data
async function task(r: RawResponse, node = 'pve1'): Promise<Record<string, unknown>> {
  expect(r.status, r.body).toBe(200)
  return waitTask(sim, auth, node, data<string>(r))
}
async function ok(r: RawResponse, node = 'pve1'): Promise<void> {
  const st = await task(r, node)
  expect(st.exitstatus).toBe('OK')
}
const config = async (vmid: number, type = 'qemu'): Promise<Record<string, unknown>> =>
  data(await req('GET', `/nodes/pve1/${type}/${vmid}/config`))
const pending = async (vmid: number): Promise<Record<string, unknown>[]> =>
  data(await req('GET', `/nodes/pve1/qemu/${vmid}/pending`))

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 10, resourcesLagMs: 0, log: () => {} })
  auth = { Authorization: sim.token.header }
})
afterAll(async () => {
  await sim.close()
})

describe('qemu-server vmconfig_update_net', () => {
  it('re-links bridge, tag, firewall and rate live without network hotplug; a model change waits', async () => {
    const mac = 'BC:24:11:00:00:42'
    await ok(
      await formReq('POST', '/nodes/pve1/qemu', {
        vmid: '300',
        memory: '512',
        hotplug: 'disk',
        net0: `virtio=${mac},bridge=vmbr0`,
      }),
    )
    await ok(await formReq('POST', '/nodes/pve1/qemu/300/status/start', {}))
    const live = `virtio=${mac},bridge=vmbr1,firewall=1,rate=10,tag=5`
    expect((await formReq('PUT', '/nodes/pve1/qemu/300/config', { net0: live })).status).toBe(200)
    expect((await config(300)).net0).toBe(live)
    expect((await pending(300)).find((p) => p.key === 'net0')).toEqual({ key: 'net0', value: live })
    // a new model needs an unplug (vm_deviceunplug), which needs `network` in hotplug: it stays pending
    const e1000 = `e1000=${mac},bridge=vmbr1`
    expect((await formReq('PUT', '/nodes/pve1/qemu/300/config', { net0: e1000 })).status).toBe(200)
    expect((await pending(300)).find((p) => p.key === 'net0')).toEqual({ key: 'net0', value: live, pending: e1000 })
  })
})

describe('pve-guest-common PVE::AbstractConfig snapshots (qemu-server and pve-container snapshot handlers)', () => {
  const snap = (vmid: number, type = 'qemu') => `/nodes/pve1/${type}/${vmid}/snapshot`
  const list = async (vmid: number, type = 'qemu') =>
    data<Record<string, unknown>[]>(await req('GET', snap(vmid, type)))

  it('snapshot_create: a [name] section in the config (digest changes), parent set, `current` last in the list', async () => {
    await ok(
      await formReq('POST', '/nodes/pve1/qemu', {
        vmid: '310',
        memory: '1024',
        scsi0: 'local-lvm:2',
        description: 'the vm',
      }),
    )
    const before = await config(310)
    expect(await list(310)).toEqual([
      { name: 'current', digest: before.digest, running: 0, description: 'You are here!' },
    ])
    await ok(await formReq('POST', snap(310), { snapname: 'first', description: 'before upgrade' }))
    const after = await config(310)
    expect(after.parent).toBe('first')
    expect(after.digest).not.toBe(before.digest)
    expect(after.lock).toBeUndefined()
    const text = sim.control.configText(310) ?? ''
    expect(text).toMatch(/\nparent: first\n/)
    expect(text).toMatch(/\n\[first\]\n#before upgrade\n/)
    expect(text.slice(text.indexOf('[first]'))).toMatch(/\nsnaptime: \d+\n/)
    const items = await list(310)
    expect(items).toEqual([
      { name: 'first', snaptime: expect.any(Number), vmstate: 0, description: 'before upgrade' },
      { name: 'current', digest: after.digest, running: 0, parent: 'first', description: 'You are here!' },
    ])
    // the snapshot keeps the config it copied, without description, lock or digest of its own
    const sc = data(await req('GET', `${snap(310)}/first/config`))
    expect(sc).toMatchObject({
      memory: '1024',
      scsi0: before.scsi0,
      description: 'before upgrade',
      snaptime: expect.any(Number),
    })
    expect(sc.digest).toBeUndefined()
    expect(data(await req('GET', '/nodes/pve1/qemu/310/config?snapshot=first'))).toMatchObject({
      memory: '1024',
      digest: after.digest,
    })
    expect(data(await req('GET', `${snap(310)}/first`))).toEqual([{ cmd: 'rollback' }, { cmd: 'config' }])
    // a second snapshot chains onto the first
    await ok(await formReq('POST', snap(310), { snapname: 'second' }))
    expect((await list(310)).find((s) => s.name === 'second')).toMatchObject({ parent: 'first', description: '' })
    expect((await config(310)).parent).toBe('second')
  })

  it('snapshot handlers: reserved and used names, templates and locks', async () => {
    const r = await formReq('POST', snap(310), { snapname: 'current' })
    expect([r.status, (r.json as { message?: string }).message]).toEqual([
      500,
      `unable to use snapshot name 'current' (reserved name)\n`,
    ])
    expect((await formReq('POST', snap(310), { snapname: 'Pending' })).status).toBe(500)
    expect((await task(await formReq('POST', snap(310), { snapname: 'first' }))).exitstatus).toBe(
      `snapshot name 'first' already used`,
    )
    sim.control.setLock(310, 'backup')
    expect((await task(await formReq('POST', snap(310), { snapname: 'third' }))).exitstatus).toBe(
      'VM is locked (backup)',
    )
    sim.control.setLock(310, null)
    expect((await list(310)).map((s) => s.name)).toEqual(['first', 'second', 'current'])
    expect((await task(await req('DELETE', `${snap(310)}/nope`))).exitstatus).toBe(`snapshot 'nope' does not exist`)
    const missing = await req('GET', `${snap(310)}/nope/config`)
    expect([missing.status, (missing.json as { message?: string }).message]).toEqual([
      500,
      `snapshot 'nope' does not exist\n`,
    ])
  })

  it('has_feature(snapshot): a guest with a volume that cannot snapshot (raw on dir, a bind mount) cannot be snapshotted', async () => {
    const storages = data<{ storage: string; type: string }[]>(await req('GET', '/nodes/pve1/storage?content=images'))
    const dir = storages.find((s) => s.type === 'dir')
    if (dir) {
      await ok(
        await formReq('POST', '/nodes/pve1/qemu', {
          vmid: '311',
          memory: '512',
          scsi0: `local-lvm:1`,
          scsi1: `${dir.storage}:1,format=raw`,
        }),
      )
      const st = await task(await formReq('POST', snap(311), { snapname: 's1' }))
      expect(st.exitstatus).toBe('snapshot feature is not available')
      expect(await config(311)).not.toHaveProperty('lock')
      expect(sim.control.configText(311)).not.toContain('[s1]')
    }
    sim.control.addVolume('pve1', 'local', { content: 'vztmpl', filename: 'debian-12-standard_12.7-1_amd64.tar.zst' })
    await ok(
      await formReq('POST', '/nodes/pve1/lxc', {
        vmid: '312',
        ostemplate: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
        rootfs: 'local-lvm:2',
      }),
    )
    // bind mounts are root@pam-only through the API: the admin adds one on the host
    sim.control.driftSet(312, 'mp0', '/srv/data,mp=/data')
    expect((await task(await formReq('POST', snap(312, 'lxc'), { snapname: 's1' }))).exitstatus).toBe(
      'snapshot feature is not available',
    )
    await ok(
      await formReq('PUT', '/nodes/pve1/lxc/312/config', { delete: 'mp0' }).then(async (r) => {
        expect(r.status, r.body).toBe(200)
        return formReq('POST', snap(312, 'lxc'), { snapname: 's1' })
      }),
    )
    const v = await formReq('POST', snap(312, 'lxc'), { snapname: 'vzdump' })
    expect([v.status, (v.json as { message?: string }).message]).toEqual([
      500,
      `unable to use snapshot name 'vzdump' (reserved name)\n`,
    ])
    expect((await list(312, 'lxc'))[0]).toEqual({ name: 's1', snaptime: expect.any(Number), description: '' })
  })

  it('volume_has_feature(snapshot) reads parse_volname: a linked clone on zfspool is a current volume and snapshots; its template base does not', async () => {
    await ok(await formReq('POST', '/nodes/pve1/qemu', { vmid: '315', memory: '512', scsi0: 'local-zfs:1' }))
    await ok(await formReq('POST', '/nodes/pve1/qemu/315/template', {}))
    await ok(await formReq('POST', '/nodes/pve1/qemu/315/clone', { newid: '316', full: '0' }))
    expect((await config(316)).scsi0).toMatch(/^local-zfs:base-315-disk-0\/vm-316-disk-0,/)
    expect((await task(await formReq('POST', snap(316), { snapname: 'before' }))).exitstatus).toBe('OK')
    expect((await list(316)).map((s) => s.name)).toEqual(['before', 'current'])
  })

  it('snapshot_rollback: stops the guest, restores the snapshot config and sizes, drops pending, new vmgenid, start=1 starts', async () => {
    const before = await config(310)
    await ok(await formReq('POST', '/nodes/pve1/qemu/310/status/start', {}))
    await ok(await formReq('PUT', '/nodes/pve1/qemu/310/resize', { disk: 'scsi0', size: '+1G' }))
    await ok(
      await formReq('POST', '/nodes/pve1/qemu/310/config', {
        memory: '2048',
        scsi1: 'local-lvm:1',
        description: 'changed',
      }),
    )
    expect((await config(310)).memory).toBe('2048')
    await ok(await formReq('POST', `${snap(310)}/first/rollback`, {}))
    const after = await config(310)
    const status = data(await req('GET', '/nodes/pve1/qemu/310/status/current'))
    expect(status.status).toBe('stopped')
    expect(after).toMatchObject({ memory: '1024', scsi0: before.scsi0, parent: 'first', description: 'changed' })
    expect(after.vmgenid).not.toBe(before.vmgenid)
    // the disk added after the snapshot is kept as unused
    expect(after.scsi1).toBeUndefined()
    expect(String(after.unused0)).toMatch(/^local-lvm:vm-310-disk-1$/)
    expect(await pending(310)).not.toContainEqual(expect.objectContaining({ pending: expect.anything() }))
    const vol = data<{ volid: string; size: number }[]>(
      await req('GET', '/nodes/pve1/storage/local-lvm/content?vmid=310'),
    ).find((x) => x.volid === String(before.scsi0).split(',')[0])
    expect(vol?.size).toBe(2 * 1024 ** 3)
    await ok(await formReq('POST', `${snap(310)}/second/rollback`, { start: '1' }))
    expect(data(await req('GET', '/nodes/pve1/qemu/310/status/current')).status).toBe('running')
    expect((await config(310)).parent).toBe('second')
  })

  it('snapshot_delete: the section goes, children and the config get the parent, a deleted one is unknown', async () => {
    const before = (await config(310)).digest
    await ok(await req('DELETE', `${snap(310)}/first`))
    expect((await list(310)).map((s) => [s.name, s.parent])).toEqual([
      ['second', undefined],
      ['current', 'second'],
    ])
    expect((await config(310)).digest).not.toBe(before)
    expect(sim.control.configText(310)).not.toContain('[first]')
    await ok(await req('DELETE', `${snap(310)}/second`))
    expect(await config(310)).not.toHaveProperty('parent')
    expect(await list(310)).toEqual([expect.objectContaining({ name: 'current', running: 1 })])
  })

  it('ZFSPoolPlugin volume_rollback_is_possible: only the most recent snapshot of a zfs volume can be rolled back to', async () => {
    await ok(await formReq('POST', '/nodes/pve1/qemu', { vmid: '313', memory: '512', scsi0: 'local-zfs:1' }))
    await ok(await formReq('POST', snap(313), { snapname: 'snap-a' }))
    await ok(await formReq('POST', snap(313), { snapname: 'snap-b' }))
    const st = await task(await formReq('POST', `${snap(313)}/snap-a/rollback`, {}))
    expect(st.exitstatus).toBe(`can't rollback, 'snap-a' is not most recent snapshot on 'local-zfs:vm-313-disk-0'`)
    await ok(await formReq('POST', `${snap(313)}/snap-b/rollback`, {}))
  })

  it('template (qemu-server and pve-container): a guest with snapshots cannot become a template', async () => {
    const r = await formReq('POST', '/nodes/pve1/qemu/313/template', {})
    expect([r.status, (r.json as { message?: string }).message]).toEqual([
      500,
      'unable to create template, because VM contains snapshots\n',
    ])
    const ct = await formReq('POST', '/nodes/pve1/lxc/312/template', {})
    expect([ct.status, (ct.json as { message?: string }).message]).toEqual([
      500,
      'unable to create template, because CT contains snapshots\n',
    ])
  })

  it('update_snapshot_config: sets the description synchronously', async () => {
    await ok(await formReq('POST', snap(313), { snapname: 'snap-c' }))
    const r = await formReq('PUT', `${snap(313)}/snap-c/config`, { description: 'tested' })
    expect([r.status, r.json]).toEqual([200, { data: null }])
    expect(data(await req('GET', `${snap(313)}/snap-c/config`)).description).toBe('tested')
  })
})

describe('qemu-server vmstatus, vm_status and vmlist', () => {
  it('vmlist without full has no QMP fields; with full=1 every VM has qmpstatus, a running one the QMP part', async () => {
    await ok(
      await formReq('POST', '/nodes/pve1/qemu', {
        vmid: '320',
        memory: '2048',
        cores: '2',
        sockets: '2',
        scsi0: 'local-lvm:3',
        net0: 'virtio,bridge=vmbr0',
        net1: 'virtio,bridge=vmbr0',
        serial0: 'socket',
        balloon: '1024',
        tags: 'web',
      }),
    )
    await ok(
      await formReq('POST', '/nodes/pve1/qemu', { vmid: '321', memory: '512', balloon: '0', scsi0: 'local-lvm:1' }),
    )
    const plain = data<Record<string, unknown>[]>(await req('GET', '/nodes/pve1/qemu')).find((v) => v.vmid === 321)
    expect(plain).toMatchObject({
      status: 'stopped',
      name: 'VM 321',
      maxdisk: 1024 ** 3,
      cpus: 1,
      maxmem: 512 * 1024 ** 2,
      disk: 0,
    })
    expect(plain).not.toHaveProperty('qmpstatus')
    expect(plain).not.toHaveProperty('diskread')
    expect(plain).not.toHaveProperty('pid')
    const full = data<Record<string, unknown>[]>(await req('GET', '/nodes/pve1/qemu?full=1')).find(
      (v) => v.vmid === 321,
    )
    expect(full?.qmpstatus).toBe('stopped')

    await ok(await formReq('POST', '/nodes/pve1/qemu/320/status/start', {}))
    const st = data(await req('GET', '/nodes/pve1/qemu/320/status/current'))
    expect(st).toMatchObject({
      vmid: 320,
      status: 'running',
      qmpstatus: 'running',
      pid: expect.any(Number),
      cpus: 4,
      maxmem: 2048 * 1024 ** 2,
      maxdisk: 3 * 1024 ** 3,
      balloon_min: 1024 * 1024 ** 2,
      shares: 1000,
      serial: 1,
      tags: 'web',
      ha: { managed: 0 },
      'running-qemu': expect.stringMatching(/^\d+\.\d+\.\d+$/),
      'running-machine': expect.stringMatching(/^pc-i440fx-\d+\.\d+\+pve0$/),
      nics: { tap320i0: { netin: 0, netout: 0 }, tap320i1: { netin: 0, netout: 0 } },
      blockstat: { scsi0: expect.objectContaining({ rd_bytes: 0, wr_bytes: 0 }) },
      diskread: 0,
      diskwrite: 0,
      balloon: 2048 * 1024 ** 2,
      ballooninfo: { actual: 2048 * 1024 ** 2, max_mem: 2048 * 1024 ** 2 },
      'proxmox-support': expect.objectContaining({ 'pbs-dirty-bitmap': true }),
      pressurecpusome: 0,
      memhost: expect.any(Number),
    })
    expect(st).not.toHaveProperty('template')
    // query-balloon needs a balloon device: `balloon: 0` has none
    await ok(await formReq('POST', '/nodes/pve1/qemu/321/status/start', {}))
    const nb = data(await req('GET', '/nodes/pve1/qemu/321/status/current'))
    expect(nb).not.toHaveProperty('ballooninfo')
    expect(nb).not.toHaveProperty('balloon_min')
  })

  it('vm_status: a paused VM is running with qmpstatus paused, and /cluster/resources shows pvestatd status paused', async () => {
    await ok(await formReq('POST', '/nodes/pve1/qemu/320/status/suspend', {}))
    expect(data(await req('GET', '/nodes/pve1/qemu/320/status/current'))).toMatchObject({
      status: 'running',
      qmpstatus: 'paused',
    })
    const res = data<Record<string, unknown>[]>(await req('GET', '/cluster/resources?type=vm')).find(
      (r) => r.vmid === 320,
    )
    expect(res?.status).toBe('paused')
    await ok(await formReq('POST', '/nodes/pve1/qemu/320/status/resume', {}))
  })

  it('vm_status: vga adds spice (qxl, virtio) and clipboard (null when unset); agent is 1 when enabled', async () => {
    await ok(await formReq('POST', '/nodes/pve1/qemu', { vmid: '322', memory: '512', vga: 'qxl', agent: 'enabled=1' }))
    const st = data(await req('GET', '/nodes/pve1/qemu/322/status/current'))
    expect(st).toMatchObject({ spice: 1, clipboard: null, agent: 1, qmpstatus: 'stopped', maxdisk: 0 })
    expect((await formReq('PUT', '/nodes/pve1/qemu/322/config', { vga: 'std,clipboard=vnc' })).status).toBe(200)
    const st2 = data(await req('GET', '/nodes/pve1/qemu/322/status/current'))
    expect(st2.clipboard).toBe('vnc')
    expect(st2).not.toHaveProperty('spice')
  })
})

describe('pve-container vmstatus', () => {
  it('maxswap is the configured swap (512 MiB, the create_vm default), cpus is cores or cpulimit, the name has no whitespace', async () => {
    sim.control.addVolume('pve1', 'local', { content: 'vztmpl', filename: 'alpine-3.20-default_20240908_amd64.tar.xz' })
    await ok(
      await formReq('POST', '/nodes/pve1/lxc', {
        vmid: '330',
        ostemplate: 'local:vztmpl/alpine-3.20-default_20240908_amd64.tar.xz',
        rootfs: 'local-lvm:2',
        cpulimit: '2',
        hostname: 'ct330',
      }),
    )
    const st = data(await req('GET', '/nodes/pve1/lxc/330/status/current'))
    expect(st).toMatchObject({
      type: 'lxc',
      vmid: 330,
      status: 'stopped',
      name: 'ct330',
      cpus: 2,
      maxswap: 512 * 1024 ** 2,
      maxdisk: 2 * 1024 ** 3,
      ha: { managed: 0 },
    })
    expect(st).not.toHaveProperty('qmpstatus')
  })
})

describe('pve-manager API2/Tasks.pm node_tasks', () => {
  it('lists finished tasks by default, names a token apart (user, tokenid), counts total, filters users case-insensitively', async () => {
    // the start is held, so it is still running whenever the lists are read
    sim.control.setTaskBehaviour('qmstart', { hold: true })
    const upid = data<string>(await formReq('POST', '/nodes/pve1/qemu/321/status/stop', {}))
    await waitTask(sim, auth, 'pve1', upid)
    const slow = data<string>(await formReq('POST', '/nodes/pve1/qemu/322/status/start', {}))
    const archive = await req('GET', '/nodes/pve1/tasks?limit=2')
    const items = data<Record<string, unknown>[]>(archive)
    expect(items.map((t) => t.upid)).not.toContain(slow)
    expect(items).toHaveLength(2)
    expect(items[0]).toMatchObject({
      upid,
      user: 'root@pam',
      tokenid: 'proxops',
      status: 'OK',
      type: 'qmstop',
      id: '321',
      endtime: expect.any(Number),
    })
    const total = (archive.json as { total?: number }).total
    expect(total).toBeGreaterThan(10)
    const active = data<Record<string, unknown>[]>(await req('GET', '/nodes/pve1/tasks?source=active'))
    expect(active).toEqual([
      expect.objectContaining({ upid: slow, status: 'RUNNING', user: 'root@pam', tokenid: 'proxops' }),
    ])
    expect(active[0]).not.toHaveProperty('endtime')
    const all = data<Record<string, unknown>[]>(await req('GET', '/nodes/pve1/tasks?source=all&limit=1'))
    expect(all[0]?.upid).toBe(slow)
    expect((await req('GET', '/nodes/pve1/tasks?userfilter=ROOT@PAM&limit=1')).json).toMatchObject({ total })
    // the tokenid is not part of the user the filter looks at; a zero total is left out of the envelope
    expect((await req('GET', '/nodes/pve1/tasks?userfilter=proxops')).json).toEqual({ data: [] })
    expect(data<unknown[]>(await req('GET', '/nodes/pve1/tasks?statusfilter=OK&typefilter=qmstop'))).toEqual([
      expect.objectContaining({ upid }),
    ])
    sim.control.setTaskBehaviour('qmstart', null)
  })
})

describe('pve-manager API2/Cluster.pm resources', () => {
  it('guests in vmid string order with lock and tags even before pvestatd saw them; nodes; storages per storage then node; local network zones', async () => {
    await ok(await formReq('POST', '/nodes/pve2/qemu', { vmid: '1000', memory: '512' }), 'pve2')
    sim.control.setResourcesLag(60_000)
    await ok(await formReq('POST', '/nodes/pve1/qemu', { vmid: '105', memory: '512', tags: 'fresh' }))
    const all = data<Record<string, unknown>[]>(await req('GET', '/cluster/resources'))
    sim.control.setResourcesLag(0)
    const vms = all.filter((r) => r.type === 'qemu' || r.type === 'lxc').map((r) => String(r.vmid))
    expect(vms).toEqual([...vms].sort())
    expect(vms.indexOf('1000')).toBeLessThan(vms.indexOf('105'))
    expect(all.find((r) => r.vmid === 105)).toEqual({
      id: 'qemu/105',
      vmid: 105,
      node: 'pve1',
      type: 'qemu',
      status: 'unknown',
      tags: 'fresh',
    })
    const types = all.map((r) => r.type)
    expect(types.lastIndexOf('qemu')).toBeLessThan(types.indexOf('node'))
    expect(types.lastIndexOf('node')).toBeLessThan(types.indexOf('storage'))
    const node = all.find((r) => r.type === 'node')
    expect(node).toMatchObject({
      id: 'node/pve1',
      node: 'pve1',
      status: 'online',
      level: '',
      'cgroup-mode': 2,
      maxcpu: expect.any(Number),
    })
    expect(node).not.toHaveProperty('ssl_fingerprint')
    const storages = all.filter((r) => r.type === 'storage').map((r) => r.id)
    expect(storages.slice(0, 3)).toEqual(['storage/pve1/local', 'storage/pve2/local', 'storage/pve3/local'])
    expect(all.filter((r) => r.type === 'network')).toEqual(
      ['pve1', 'pve2', 'pve3'].map((n) => ({
        id: `network/${n}/zone/localnetwork`,
        type: 'network',
        'network-type': 'zone',
        network: 'localnetwork',
        node: n,
        status: 'ok',
      })),
    )
    const vm = data<Record<string, unknown>[]>(await req('GET', '/cluster/resources?type=vm')).find(
      (r) => r.vmid === 320,
    )
    expect(vm).toMatchObject({
      name: 'VM 320',
      status: 'running',
      template: 0,
      maxcpu: 4,
      memhost: expect.any(Number),
      diskread: 0,
    })
  })
})
