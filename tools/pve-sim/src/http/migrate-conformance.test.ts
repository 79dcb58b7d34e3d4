/**
 * Guest migration over raw HTTP, each test named after the PVE function it follows: qemu-server PVE::API2::Qemu
 * migrate_vm_precondition and migrate_vm, PVE::QemuMigrate (prepare, scan_local_volumes, phase1..3),
 * PVE::QemuMigrate::Helpers::check_local_resources, QemuServer check_storage_availability; pve-container
 * PVE::API2::LXC migrate_vm_precondition and migrate_vm, PVE::LXC::Migrate; pve-common JSONSchema parse_idmap;
 * pve-manager API2/Cluster.pm resources. HA-driven migration is in ha-migrate-conformance.test.ts.
 */
import { afterAll, beforeAll, describe as suite, expect, it } from 'vitest'
import { apidocForTests } from '../apidoc/test-data.js'
import { startSimulator, type Simulator } from '../index.js'
import { apiRequest, okData, type RawResponse, waitTask } from './test-support/raw.js'

// the parameters and the permission entries come from the PVE API schema: without it the file skips
const describe = suite.skipIf(!apidocForTests())

let sim: Simulator
let root: Record<string, string>
const call = (
  method: string,
  path: string,
  params?: Record<string, string>,
  auth: Record<string, string> = root,
): Promise<RawResponse> => {
  return apiRequest(sim, auth, method, path, params)
}
const ok = okData
const failure = async (r: Promise<RawResponse>): Promise<[number, string, unknown]> => {
  const res = await r
  const body = res.json as { message?: string; errors?: unknown }
  return [res.status, (body.message ?? '').trimEnd(), body.errors]
}
/** a task of `node` to its end: its exit status and the log lines without their timestamps */
async function task(node: string, r: Promise<RawResponse>): Promise<{ exitstatus: string; log: string[] }> {
  const upid = await ok<string>(r)
  const status = await waitTask(sim, root, node, upid)
  const log = await ok<{ t: string }[]>(call('GET', `/nodes/${node}/tasks/${encodeURIComponent(upid)}/log`))
  return {
    exitstatus: String(status.exitstatus),
    log: log.map((l) => l.t.replace(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d /, '')),
  }
}
const createVm = async (vmid: number, extra: Record<string, string> = {}) =>
  expect(
    (await task('pve1', call('POST', '/nodes/pve1/qemu', { vmid: String(vmid), memory: '512', ...extra }))).exitstatus,
  ).toBe('OK')
const createCt = async (vmid: number, extra: Record<string, string> = {}) =>
  expect(
    (
      await task(
        'pve1',
        call('POST', '/nodes/pve1/lxc', {
          vmid: String(vmid),
          ostemplate: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
          rootfs: 'local-lvm:1',
          ...extra,
        }),
      )
    ).exitstatus,
  ).toBe('OK')
const resource = async (vmid: number): Promise<Record<string, unknown> | undefined> =>
  (await ok<Record<string, unknown>[]>(call('GET', '/cluster/resources', { type: 'vm' }))).find((r) => r.vmid === vmid)
const volumes = async (node: string, storage: string): Promise<string[]> =>
  (await ok<{ volid: string }[]>(call('GET', `/nodes/${node}/storage/${storage}/content`))).map((v) => v.volid)
const guestsOn = async (node: string, type: 'qemu' | 'lxc'): Promise<number[]> =>
  (await ok<{ vmid: number }[]>(call('GET', `/nodes/${node}/${type}`))).map((g) => g.vmid).sort()
async function token(userid: string): Promise<Record<string, string>> {
  await ok(call('POST', '/access/users', { userid }))
  const t = await ok<Record<string, string>>(
    call('POST', `/access/users/${encodeURIComponent(userid)}/token/tok`, { privsep: '0' }),
  )
  return { Authorization: `PVEAPIToken=${t['full-tokenid']}=${t.value}` }
}
const grant = (path: string, roles: string, users: string) =>
  ok(call('PUT', '/access/acl', { path, roles, users, propagate: '1' }))

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 30, resourcesLagMs: 0, log: () => {} })
  root = { Authorization: sim.token.header }
  sim.control.addVolume('pve1', 'local', { filename: 'debian-12-standard_12.7-1_amd64.tar.zst', content: 'vztmpl' })
  sim.control.addVolume('pve1', 'local', { filename: 'debian-13.iso', content: 'iso' })
  await ok(
    call('POST', '/storage', {
      storage: 'nas',
      type: 'nfs',
      server: '10.0.0.9',
      export: '/vms',
      content: 'images,rootdir',
    }),
  )
  await ok(
    call('POST', '/storage', { storage: 'only1', type: 'dir', path: '/srv/only1', content: 'images', nodes: 'pve1' }),
  )
})
afterAll(async () => {
  await sim.close()
})

describe('qemu-server migrate_vm_precondition', () => {
  it('a stopped VM: allowed nodes, every other node in not_allowed_nodes (empty when allowed), its local disks with their attributes', async () => {
    await createVm(100, { scsi0: 'local-lvm:1', ide2: 'local:iso/debian-13.iso,media=cdrom', scsi1: 'nas:1' })
    const pre = await ok<Record<string, unknown>>(call('GET', '/nodes/pve1/qemu/100/migrate'))
    expect(pre).toEqual({
      running: 0,
      allowed_nodes: ['pve2', 'pve3'],
      not_allowed_nodes: { pve2: {}, pve3: {} },
      local_disks: [
        expect.objectContaining({
          volid: 'local-lvm:vm-100-disk-0',
          cdrom: 0,
          is_attached: 1,
          size: 1024 ** 3,
          drivename: 'scsi0',
        }),
        expect.objectContaining({ volid: 'local:iso/debian-13.iso', cdrom: 1, is_attached: 1, drivename: 'ide2' }),
      ],
      local_resources: [],
      'mapped-resources': [],
      'mapped-resource-info': {},
      'has-dbus-vmstate': 1,
    })
  })

  it('check_local_resources: a raw hostpci and a serial device block, a mapped hostpci is missing on every node; check_local_storage_availability names a storage the node lacks', async () => {
    await createVm(101, { scsi0: 'only1:1' })
    sim.control.driftSet(101, 'hostpci0', '0000:01:00.0')
    sim.control.driftSet(101, 'hostpci1', 'mapping=gpu')
    sim.control.driftSet(101, 'serial0', '/dev/ttyS0')
    sim.control.driftSet(101, 'serial1', 'socket')
    const pre = await ok<Record<string, unknown>>(call('GET', '/nodes/pve1/qemu/101/migrate'))
    expect(pre.local_resources).toEqual(['hostpci0', 'serial0'])
    expect(pre['mapped-resources']).toEqual(['hostpci1'])
    expect(pre['mapped-resource-info']).toEqual({ hostpci1: { name: 'gpu' } })
    expect(pre.allowed_nodes).toEqual([])
    expect(pre.not_allowed_nodes).toEqual({
      pve2: { unavailable_storages: ['only1'], 'unavailable-resources': ['hostpci1'] },
      pve3: { unavailable_storages: ['only1'], 'unavailable-resources': ['hostpci1'] },
    })
  })

  it('answers for a locked VM with PVE::AbstractConfig check_lock', async () => {
    sim.control.setLock(101, 'backup')
    expect(await failure(call('GET', '/nodes/pve1/qemu/101/migrate'))).toEqual([
      500,
      'VM is locked (backup)',
      undefined,
    ])
    sim.control.setLock(101, null)
  })
})

describe('qemu-server migrate_vm: the checks before the fork answer at once', () => {
  it('the local node as target, a node the cluster lacks, a running VM without online', async () => {
    expect(await failure(call('POST', '/nodes/pve1/qemu/100/migrate', { target: 'pve1' }))).toEqual([
      400,
      'Parameter verification failed.',
      { target: 'target is local node.' },
    ])
    expect(await failure(call('POST', '/nodes/pve1/qemu/100/migrate', { target: 'pve9' }))).toEqual([
      500,
      "no such cluster node 'pve9'",
      undefined,
    ])
    await createVm(102, { scsi0: 'nas:1', start: '1' })
    expect(await failure(call('POST', '/nodes/pve1/qemu/102/migrate', { target: 'pve2' }))).toEqual([
      500,
      "can't migrate running VM without --online",
      undefined,
    ])
  })

  it('check_storage_availability: a disk on a storage the target lacks', async () => {
    expect(await failure(call('POST', '/nodes/pve1/qemu/101/migrate', { target: 'pve2' }))).toEqual([
      500,
      "storage 'only1' is not available on node 'pve2'",
      undefined,
    ])
  })

  it('parse_idmap and $check_storage_access_migrate: a bad map is a parameter error, a target storage must take images', async () => {
    expect(
      await failure(call('POST', '/nodes/pve1/qemu/100/migrate', { target: 'pve2', targetstorage: 'aa:bb,aa:cc' })),
    ).toEqual([
      400,
      'Parameter verification failed.',
      { targetstorage: "failed to parse storage map: duplicate mapping for source 'aa'" },
    ])
    expect(
      await failure(call('POST', '/nodes/pve1/qemu/100/migrate', { target: 'pve2', targetstorage: 'local' })),
    ).toEqual([500, "storage 'local' does not support vm images", undefined])
  })

  it('root@pam only: force, migration_type and migration_network (a token is never root@pam)', async () => {
    for (const [p, v] of [
      ['force', '1'],
      ['migration_type', 'insecure'],
      ['migration_network', '10.0.0.0/24'],
    ] as const)
      expect(await failure(call('POST', '/nodes/pve1/qemu/100/migrate', { target: 'pve2', [p]: v }))).toEqual([
        400,
        'Parameter verification failed.',
        { [p]: 'Only root may use this option.' },
      ])
  })

  it('permissions: VM.Migrate on the VM; a storage map needs VM.Config.Disk and Datastore.AllocateSpace on each target', async () => {
    const ops = await token('mover@pve')
    expect((await call('POST', '/nodes/pve1/qemu/100/migrate', { target: 'pve2' }, ops)).status).toBe(403)
    await grant('/vms/100', 'PVEVMUser', 'mover@pve')
    expect((await call('GET', '/nodes/pve1/qemu/100/migrate', undefined, ops)).status).toBe(403)
    await ok(call('POST', '/access/roles', { roleid: 'Mover', privs: 'VM.Migrate,VM.Audit' }))
    await grant('/vms/100', 'Mover', 'mover@pve')
    expect((await call('GET', '/nodes/pve1/qemu/100/migrate', undefined, ops)).status).toBe(200)
    const mapped = await call(
      'POST',
      '/nodes/pve1/qemu/100/migrate',
      { target: 'pve2', targetstorage: 'local-zfs' },
      ops,
    )
    expect([mapped.status, (mapped.json as { message: string }).message.trimEnd()]).toEqual([
      403,
      'Permission check failed (/vms/100, VM.Config.Disk)',
    ])
  })

  it('a VM on shared storage only: no task output of local disks, the volume stays where it is', async () => {
    await createVm(103, { scsi0: 'nas:1' })
    const { exitstatus, log } = await task('pve1', call('POST', '/nodes/pve1/qemu/103/migrate', { target: 'pve3' }))
    expect(exitstatus).toBe('OK')
    expect(log).toEqual([
      "starting migration of VM 103 to node 'pve3' (10.0.0.3)",
      'migration finished successfully (duration 00:00:00)',
      'TASK OK',
    ])
    expect((await ok<Record<string, string>>(call('GET', '/nodes/pve3/qemu/103/config'))).scsi0).toBe(
      'nas:103/vm-103-disk-0.raw,size=1G',
    )
  })
})

describe('PVE::QemuMigrate: an offline migration', () => {
  it('copies the local disks to the same storage id on the target, moves the config, frees the source, and the lists follow', async () => {
    await createVm(110, { scsi0: 'local-lvm:1', scsi1: 'nas:1' })
    sim.control.setTaskBehaviour('qmigrate', { hold: true })
    const upid = await ok<string>(call('POST', '/nodes/pve1/qemu/110/migrate', { target: 'pve2' }))
    // phase1 writes `lock: migrate` and lock_vm holds the config lock for the whole migration
    expect((await ok<Record<string, string>>(call('GET', '/nodes/pve1/qemu/110/config'))).lock).toBe('migrate')
    expect((await resource(110))?.lock).toBe('migrate')
    expect(await failure(call('PUT', '/nodes/pve1/qemu/110/config', { description: 'x' }))).toEqual([
      500,
      "can't lock file '/var/lock/qemu-server/lock-110.conf' - got timeout",
      undefined,
    ])
    expect(await failure(call('POST', '/nodes/pve1/qemu/110/migrate', { target: 'pve3' }))).toEqual([
      500,
      'VM is locked (migrate)',
      undefined,
    ])
    sim.control.setTaskBehaviour('qmigrate', null)
    const status = await waitTask(sim, root, 'pve1', upid)
    expect([status.type, status.exitstatus]).toEqual(['qmigrate', 'OK'])
    const log = (await ok<{ t: string }[]>(call('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/log`))).map(
      (l) => l.t,
    )
    expect(log.map((l) => l.replace(/^\S+ \S+ /, '').replace(/\d\d:\d\d:\d\d\)$/, 'D)'))).toEqual([
      "starting migration of VM 110 to node 'pve2' (10.0.0.2)",
      "found local disk 'local-lvm:vm-110-disk-0' (attached)",
      'copying local disk images',
      "volume 'local-lvm:vm-110-disk-0' is 'local-lvm:vm-110-disk-0' on the target",
      'migration finished successfully (duration D)',
      'TASK OK',
    ])
    expect(log[0]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d starting migration/)
    const conf = await ok<Record<string, string>>(call('GET', '/nodes/pve2/qemu/110/config'))
    expect(conf.lock).toBeUndefined()
    expect([conf.scsi0, conf.scsi1]).toEqual(['local-lvm:vm-110-disk-0,size=1G', 'nas:110/vm-110-disk-0.raw,size=1G'])
    expect(await failure(call('GET', '/nodes/pve1/qemu/110/config'))).toEqual([
      500,
      "Configuration file 'nodes/pve1/qemu-server/110.conf' does not exist",
      undefined,
    ])
    expect(await volumes('pve2', 'local-lvm')).toContain('local-lvm:vm-110-disk-0')
    expect(await volumes('pve1', 'local-lvm')).not.toContain('local-lvm:vm-110-disk-0')
    expect(await guestsOn('pve2', 'qemu')).toContain(110)
    expect(await guestsOn('pve1', 'qemu')).not.toContain(110)
    expect(await resource(110)).toMatchObject({ node: 'pve2', status: 'stopped' })
  })

  it('targetstorage maps the local storages: the disk arrives on the mapped storage, named as that plugin names it', async () => {
    await createVm(111, { scsi0: 'local-lvm:1' })
    const { exitstatus } = await task(
      'pve1',
      call('POST', '/nodes/pve1/qemu/111/migrate', { target: 'pve2', targetstorage: 'local-lvm:local-zfs' }),
    )
    expect(exitstatus).toBe('OK')
    expect((await ok<Record<string, string>>(call('GET', '/nodes/pve2/qemu/111/config'))).scsi0).toBe(
      'local-zfs:vm-111-disk-0,size=1G',
    )
    expect(await volumes('pve2', 'local-zfs')).toContain('local-zfs:vm-111-disk-0')
  })

  it('scan_local_volumes: a local ISO in a CD drive refuses (a failed task whose log gives the reason), nothing moves', async () => {
    const { exitstatus, log } = await task('pve1', call('POST', '/nodes/pve1/qemu/100/migrate', { target: 'pve2' }))
    expect(exitstatus).toBe('migration aborted')
    expect(log).toEqual([
      "starting migration of VM 100 to node 'pve2' (10.0.0.2)",
      "found local disk 'local-lvm:vm-100-disk-0' (attached)",
      "found local disk 'local:iso/debian-13.iso' (attached)",
      "can't migrate local disk 'local:iso/debian-13.iso': local cdrom image",
      "ERROR: Problem found while scanning volumes - can't migrate VM - check log",
      'aborting phase 1 - cleanup resources',
      "ERROR: migration aborted (duration 00:00:00): Problem found while scanning volumes - can't migrate VM - check log",
      'TASK ERROR: migration aborted',
    ])
    const conf = await ok<Record<string, string>>(call('GET', '/nodes/pve1/qemu/100/config'))
    expect(conf.lock).toBeUndefined()
    expect(await volumes('pve2', 'local-lvm')).not.toContain('local-lvm:vm-100-disk-0')
  })

  it('scan_local_volumes: a snapshot on local LVM-thin is a non-migratable snapshot', async () => {
    await createVm(112, { scsi0: 'local-lvm:1' })
    expect((await task('pve1', call('POST', '/nodes/pve1/qemu/112/snapshot', { snapname: 'before' }))).exitstatus).toBe(
      'OK',
    )
    const { exitstatus, log } = await task('pve1', call('POST', '/nodes/pve1/qemu/112/migrate', { target: 'pve2' }))
    expect(exitstatus).toBe('migration aborted')
    expect(log).toContain("can't migrate local disk 'local-lvm:vm-112-disk-0': non-migratable snapshot exists")
  })

  it('prepare: local devices refuse before phase 1 (no `starting migration`, no lock)', async () => {
    await createVm(113, { scsi0: 'nas:1' })
    sim.control.driftSet(113, 'hostpci0', '0000:01:00.0')
    const { exitstatus, log } = await task('pve1', call('POST', '/nodes/pve1/qemu/113/migrate', { target: 'pve2' }))
    expect(exitstatus).toBe('migration aborted')
    expect(log).toEqual([
      "ERROR: migration aborted (duration 00:00:00): can't migrate VM which uses local devices: hostpci0",
      'TASK ERROR: migration aborted',
    ])
  })

  it('prepare: a target node that is down cannot be reached over ssh', async () => {
    sim.control.setNodeOnline('pve3', false)
    try {
      const { exitstatus, log } = await task('pve1', call('POST', '/nodes/pve1/qemu/112/migrate', { target: 'pve3' }))
      expect(exitstatus).toBe('migration aborted')
      expect(log[0]).toBe(
        "ERROR: migration aborted (duration 00:00:00): Can't connect to destination address using public key",
      )
    } finally {
      sim.control.setNodeOnline('pve3', true)
    }
  })
})

describe('PVE::QemuMigrate: an online migration', () => {
  it('a running VM with a local disk needs with-local-disks: without it the scan refuses', async () => {
    await createVm(120, { scsi0: 'local-lvm:1', start: '1' })
    const { exitstatus, log } = await task(
      'pve1',
      call('POST', '/nodes/pve1/qemu/120/migrate', { target: 'pve2', online: '1' }),
    )
    expect(exitstatus).toBe('migration aborted')
    expect(log).toContain(
      "can't migrate local disk 'local-lvm:vm-120-disk-0': can't live migrate attached local disks without with-local-disks option",
    )
    expect((await resource(120))?.status).toBe('running')
  })

  it('with with-local-disks the disk is mirrored to the target and the VM runs on there', async () => {
    const { exitstatus, log } = await task(
      'pve1',
      call('POST', '/nodes/pve1/qemu/120/migrate', { target: 'pve2', online: '1', 'with-local-disks': '1' }),
    )
    expect(exitstatus).toBe('OK')
    expect(log).toEqual(
      expect.arrayContaining([
        'conntrack state migration not supported or disabled, active connections might get dropped',
        "starting VM 120 on remote node 'pve2'",
        "volume 'local-lvm:vm-120-disk-0' is 'local-lvm:vm-120-disk-0' on the target",
        'scsi0: start migration to nbd:unix:/run/qemu-server/120_nbd.migrate:exportname=drive-scsi0',
        'starting online/live migration on unix:/run/qemu-server/120.migrate',
        'migration status: completed',
      ]),
    )
    expect(await resource(120)).toMatchObject({ node: 'pve2', status: 'running' })
    expect((await ok<Record<string, unknown>>(call('GET', '/nodes/pve2/qemu/120/status/current'))).status).toBe(
      'running',
    )
  })

  it('scan_local_volumes: a running VM with a snapshot on a local disk refuses, where the same VM stopped moves', async () => {
    // zfspool takes a snapshot along offline; online, the non-replicated snapshot refuses whatever the storage
    await createVm(121, { scsi0: 'local-zfs:1', start: '1' })
    expect((await task('pve1', call('POST', '/nodes/pve1/qemu/121/snapshot', { snapname: 'keep' }))).exitstatus).toBe(
      'OK',
    )
    const online = await task(
      'pve1',
      call('POST', '/nodes/pve1/qemu/121/migrate', { target: 'pve2', online: '1', 'with-local-disks': '1' }),
    )
    expect(online.exitstatus).toBe('migration aborted')
    expect(online.log).toContain(
      "can't migrate local disk 'local-zfs:vm-121-disk-0': online storage migration not possible if non-replicated snapshot exists",
    )
    expect(await resource(121)).toMatchObject({ node: 'pve1', status: 'running' })
    expect((await task('pve1', call('POST', '/nodes/pve1/qemu/121/status/stop'))).exitstatus).toBe('OK')
    const offline = await task('pve1', call('POST', '/nodes/pve1/qemu/121/migrate', { target: 'pve2' }))
    expect(offline.exitstatus).toBe('OK')
    expect(await resource(121)).toMatchObject({ node: 'pve2' })
  })
})

describe('pve-container migrate_vm and PVE::LXC::Migrate', () => {
  it('migrate_vm_precondition (PVE 9): running, allowed-nodes, not-allowed-nodes', async () => {
    await createCt(200)
    expect((await task('pve1', call('POST', '/nodes/pve1/lxc/200/status/start'))).exitstatus).toBe('OK')
    expect(await ok(call('GET', '/nodes/pve1/lxc/200/migrate'))).toEqual({
      running: 1,
      'allowed-nodes': ['pve2', 'pve3'],
      'not-allowed-nodes': {},
    })
  })

  it('a running container needs restart (or online) at once; online fails in prepare', async () => {
    expect(await failure(call('POST', '/nodes/pve1/lxc/200/migrate', { target: 'pve2' }))).toEqual([
      500,
      "can't migrate running container without --online or --restart",
      undefined,
    ])
    const { exitstatus, log } = await task(
      'pve1',
      call('POST', '/nodes/pve1/lxc/200/migrate', { target: 'pve2', online: '1' }),
    )
    expect([exitstatus, log[0]]).toEqual([
      'migration aborted',
      'ERROR: migration aborted (duration 00:00:00): lxc live migration is currently not implemented',
    ])
  })

  it('restart=1 shuts the container down, migrates its volume and starts it on the target', async () => {
    sim.control.setTaskBehaviour('vzmigrate', { hold: true })
    const upid = await ok<string>(call('POST', '/nodes/pve1/lxc/200/migrate', { target: 'pve2', restart: '1' }))
    expect(await resource(200)).toMatchObject({ node: 'pve1', status: 'stopped', lock: 'migrate' })
    sim.control.setTaskBehaviour('vzmigrate', null)
    const status = await waitTask(sim, root, 'pve1', upid)
    expect(status.exitstatus).toBe('OK')
    const log = (await ok<{ t: string }[]>(call('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/log`))).map((l) =>
      l.t.replace(/^\S+ \S+ /, '').replace(/\d\d:\d\d:\d\d\)$/, 'D)'),
    )
    expect(log).toEqual([
      'shutdown CT 200',
      "starting migration of CT 200 to node 'pve2' (10.0.0.2)",
      "found local volume 'local-lvm:vm-200-disk-0' (in current VM config)",
      "volume 'local-lvm:vm-200-disk-0' is 'local-lvm:vm-200-disk-0' on the target",
      'start final cleanup',
      'start container on target node',
      "# /usr/bin/ssh -e none -o 'BatchMode=yes' -o 'HostKeyAlias=pve2' -o 'UserKnownHostsFile=/etc/pve/nodes/pve2/ssh_known_hosts' -o 'GlobalKnownHostsFile=none' root@10.0.0.2 pct start 200",
      'migration finished successfully (duration D)',
      'TASK OK',
    ])
    expect(await resource(200)).toMatchObject({ node: 'pve2', status: 'running' })
    expect(await guestsOn('pve2', 'lxc')).toEqual([200])
  })

  it('prepare: a local bind mount point cannot move', async () => {
    await createCt(201)
    sim.control.driftSet(201, 'mp0', '/srv/data,mp=/data')
    const { exitstatus, log } = await task('pve1', call('POST', '/nodes/pve1/lxc/201/migrate', { target: 'pve2' }))
    expect([exitstatus, log[0]]).toEqual([
      'migration aborted',
      "ERROR: migration aborted (duration 00:00:00): cannot migrate local bind mount point 'mp0'",
    ])
  })

  it('target-storage must take CT rootdirs', async () => {
    expect(
      await failure(call('POST', '/nodes/pve1/lxc/201/migrate', { target: 'pve2', 'target-storage': 'local' })),
    ).toEqual([500, "storage 'local' does not support CT rootdirs", undefined])
  })
})
