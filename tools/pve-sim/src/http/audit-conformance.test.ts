/**
 * Conformance over raw HTTP for what the third audit of the endpoints ProxOps calls found (docs/simulator-model.md,
 * "Endpoint audit"): each test names the PVE function it follows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { apidocForTests } from '../apidoc/test-data.js'
import { apiRequest, form, okDataOf, raw, waitTask, type RawResponse } from './test-support/raw.js'

let sim: Simulator
let auth: Record<string, string>
let template: string
const req = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> =>
  apiRequest(sim, auth, method, path, params)
const data = okDataOf
const failure = (r: RawResponse): [number, string, Record<string, string> | undefined] => {
  const body = r.json as { message?: string; errors?: Record<string, string> }
  return [r.status, (body.message ?? '').trimEnd(), body.errors]
}
/** run a task-returning call to its end: [exitstatus, log lines] */
async function task(method: string, path: string, params: Record<string, string>): Promise<[string, string[]]> {
  const upid = data<string>(await req(method, path, params))
  const st = await waitTask(sim, auth, 'pve1', upid)
  const log = data<{ t: string }[]>(
    await req('GET', `/nodes/pve1/tasks/${encodeURIComponent(upid)}/log`, { limit: '1000' }),
  )
  return [String(st.exitstatus), log.map((l) => l.t)]
}
const download = (params: Record<string, string>, storage = 'local') =>
  req('POST', `/nodes/pve1/storage/${storage}/download-url`, { url: 'https://images.example/file', ...params })

beforeAll(async () => {
  sim = await startSimulator({ taskDurationMs: 10, resourcesLagMs: 0, authFailureDelayMs: 0, log: () => {} })
  auth = { Authorization: sim.token.header }
  template = sim.control.addVolume('pve1', 'local', {
    filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
    content: 'vztmpl',
  })
  sim.control.addVolume('pve1', 'local', { filename: 'debian-12.iso', content: 'iso' })
})
afterAll(async () => {
  await sim?.close()
})

describe('PVE::GuestHelpers::config_with_pending_array (GET .../pending)', () => {
  it('lists the digest once, next to every key of the config, with value, pending and delete (1, or 2 when forced)', async () => {
    const [st] = await task('POST', '/nodes/pve1/qemu', { vmid: '700', sata1: 'local-lvm:1', cores: '1', start: '1' })
    expect(st).toBe('OK')
    // sata disks do not hot-unplug: both deletions wait, the second one forced
    data(await req('PUT', '/nodes/pve1/qemu/700/config', { delete: 'sata1' }))
    data(await req('PUT', '/nodes/pve1/qemu/700/config', { delete: 'cores', force: '1' }))
    data(await req('PUT', '/nodes/pve1/qemu/700/config', { sockets: '2' }))
    const rows = data<Record<string, unknown>[]>(await req('GET', '/nodes/pve1/qemu/700/pending'))
    const config = data<Record<string, unknown>>(await req('GET', '/nodes/pve1/qemu/700/config'))
    expect(rows.filter((r) => r.key === 'digest')).toEqual([{ key: 'digest', value: config.digest }])
    expect(rows.find((r) => r.key === 'sata1')).toMatchObject({ key: 'sata1', delete: 1 })
    expect(rows.find((r) => r.key === 'sockets')).toEqual({ key: 'sockets', pending: 2 })
    expect(rows.find((r) => r.key === 'cores')).toEqual({ key: 'cores', value: 1, delete: 2 })
  })

  it('a pending deletion of a key the config no longer has reads delete 2 whether forced or not', async () => {
    // an admin removes the line from the main section by hand while the unforced deletion still waits
    sim.control.driftDelete(700, 'sata1')
    const rows = data<Record<string, unknown>[]>(await req('GET', '/nodes/pve1/qemu/700/pending'))
    expect(rows.filter((r) => r.key === 'sata1')).toEqual([{ key: 'sata1', delete: 2 }])
  })
})

describe('PVE::API2::Storage::Status download_url', () => {
  it('normalises the filename as normalize_content_filename does (backslashes, a trailing slash leaves nothing)', async () => {
    const [st, log] = await task('POST', '/nodes/pve1/storage/local/download-url', {
      url: 'https://images.example/a.iso',
      content: 'iso',
      filename: 'C:\\isos\\my image.ISO',
    })
    expect(st).toBe('OK')
    expect(log[0]).toBe('downloading https://images.example/a.iso to /var/lib/vz/template/iso/my_image.ISO')
    expect(failure(await download({ content: 'iso', filename: 'isos/' }))).toEqual([
      400,
      'Parameter verification failed.',
      { filename: 'wrong file extension' },
    ])
  })

  it('checks each content type with its own pattern and message', async () => {
    // [^/]+$ISO_EXT_RE_0: a name before the extension
    expect(failure(await download({ content: 'iso', filename: '.iso' }))[2]).toEqual({
      filename: 'wrong file extension',
    })
    // $VZTMPL_EXT_RE_1 is case-insensitive and takes a plain .tar since pve-storage 9.0.15
    expect((await download({ content: 'vztmpl', filename: 'alpine.TAR.XZ' })).status).toBe(200)
    expect((await download({ content: 'vztmpl', filename: 'oci-image.tar' })).status).toBe(200)
    expect(failure(await download({ content: 'vztmpl', filename: 'alpine.tar.lzo' }))[2]).toEqual({
      filename: 'wrong file extension',
    })
    // $UPLOAD_IMPORT_EXT_RE_1: case-sensitive, no .ovf, and its own message
    for (const filename of ['disk.QCOW2', 'vm.ovf', 'cloud.img'])
      expect(failure(await download({ content: 'import', filename }))[2]).toEqual({
        filename: 'invalid filename or wrong extension',
      })
  })

  it('checks the filename before activate_storage: an offline storage answers the filename error first', async () => {
    sim.control.setStorageOnline('local', false)
    try {
      expect(failure(await download({ content: 'iso', filename: 'x.qcow2' }))[0]).toBe(400)
      expect(failure(await download({ content: 'iso', filename: 'x.iso' }))).toEqual([
        500,
        `storage 'local' is not online`,
        undefined,
      ])
    } finally {
      sim.control.setStorageOnline('local', true)
    }
  })

  it('decompresses ISO images only, with a known decompressor (decompressor_info), inside the worker', async () => {
    const [gz, gzLog] = await task('POST', '/nodes/pve1/storage/local/download-url', {
      url: 'https://images.example/b.iso.gz',
      content: 'iso',
      filename: 'b.iso',
      compression: 'gz',
    })
    expect(gz).toBe('OK')
    expect(gzLog.some((l) => /^decompressing \/var\/lib\/vz\/template\/iso\/b\.iso\.tmp_dwnl\.\d+ to /.test(l))).toBe(
      true,
    )
    expect(
      (
        await task('POST', '/nodes/pve1/storage/local/download-url', {
          url: 'https://images.example/c.iso.xz',
          content: 'iso',
          filename: 'c.iso',
          compression: 'xz',
        })
      )[0],
    ).toBe('no decompression method found')
    expect(
      (
        await task('POST', '/nodes/pve1/storage/local/download-url', {
          url: 'https://images.example/d.tar.gz',
          content: 'vztmpl',
          filename: 'd.tar.gz',
          compression: 'gz',
        })
      )[0],
    ).toBe('decompression not supported for vztmpl')
  })

  it('logs and compares checksums as download_file_from_url does (lower-cased, the expected one quoted as sent)', async () => {
    const url = 'https://images.example/e.iso'
    sim.control.setRemoteFile(url, { content: 'e-bytes' })
    const sha = sim.control.remoteChecksum(url, 'sha256')
    const [first, log] = await task('POST', '/nodes/pve1/storage/local/download-url', {
      url,
      content: 'iso',
      filename: 'e.iso',
      checksum: sha.toUpperCase(),
      'checksum-algorithm': 'sha256',
    })
    expect(first).toBe('OK')
    expect(log).toContain('calculating checksum...OK, checksum verified')
    const [again, againLog] = await task('POST', '/nodes/pve1/storage/local/download-url', {
      url,
      content: 'iso',
      filename: 'e.iso',
      checksum: sha,
      'checksum-algorithm': 'sha256',
    })
    expect(again).toBe('OK')
    expect(againLog).toContain(
      'calculating checksum of existing file...OK, got correct file already, no need to download',
    )
    const [bad] = await task('POST', '/nodes/pve1/storage/local/download-url', {
      url,
      content: 'iso',
      filename: 'e.iso',
      checksum: 'AB'.repeat(32),
      'checksum-algorithm': 'sha256',
    })
    expect(bad).toBe(`checksum mismatch: got '${sha}' != expect '${'AB'.repeat(32)}', aborting`)
  })

  it('verify-certificates=0 is what lets wget fetch from a server whose certificate does not verify', async () => {
    const url = 'https://selfsigned.example/f.iso'
    sim.control.setRemoteFile(url, { content: 'f-bytes', untrustedCertificate: true })
    const [st, log] = await task('POST', '/nodes/pve1/storage/local/download-url', {
      url,
      content: 'iso',
      filename: 'f.iso',
    })
    expect(st).toBe("download failed: To connect to selfsigned.example insecurely, use `--no-check-certificate'.")
    expect(log).toContain('  Self-signed certificate encountered.')
    const [ok] = await task('POST', '/nodes/pve1/storage/local/download-url', {
      url,
      content: 'iso',
      filename: 'f.iso',
      'verify-certificates': '0',
    })
    expect(ok).toBe('OK')
  })
})

describe('qemu-server create_vm (check_pool_exist, check_storage_access, check_drive_param, create_disks)', () => {
  it('checks the pool and the drives before the vmid (create_and_lock_config)', async () => {
    expect((await task('POST', '/nodes/pve1/qemu', { vmid: '710' }))[0]).toBe('OK')
    expect(failure(await req('POST', '/nodes/pve1/qemu', { vmid: '710', pool: 'nope' }))[0]).toBe(403)
    expect(failure(await req('POST', '/nodes/pve1/qemu', { vmid: '710', ide2: 'local:iso/debian-12.iso' }))).toEqual([
      400,
      'Parameter verification failed.',
      { ide2: `explicit 'media=cdrom' is required for iso images` },
    ])
    expect(failure(await req('POST', '/nodes/pve1/qemu', { vmid: '710' }))[1]).toBe(
      `unable to create VM 710 - VM 710 already exists on node 'pve1'`,
    )
  })

  it('reads a volume type from its name: no images content and a template as a disk are 400s', async () => {
    expect(failure(await req('POST', '/nodes/pve1/qemu', { vmid: '711', scsi0: 'local:4' }))[2]).toEqual({
      storage: `storage 'local' does not support vm images`,
    })
    expect(failure(await req('POST', '/nodes/pve1/qemu', { vmid: '711', scsi1: template }))[2]).toEqual({
      scsi1: `content type needs to be 'images' or 'iso'`,
    })
    expect(failure(await req('POST', '/nodes/pve1/qemu', { vmid: '711', scsi1: 'local:vm-711-disk-0' }))[1]).toBe(
      `unable to parse directory volume name 'vm-711-disk-0'`,
    )
  })

  it('vdisk_alloc checks no content type: a cloud-init drive may go to a storage without images', async () => {
    expect((await task('POST', '/nodes/pve1/qemu', { vmid: '715', ide2: 'local:cloudinit' }))[0]).toBe('OK')
    expect(data<Record<string, unknown>>(await req('GET', '/nodes/pve1/qemu/715/config')).ide2).toBe(
      'local:715/vm-715-cloudinit.qcow2,media=cdrom',
    )
  })

  it('looks volumes up in the worker: a missing one fails the qmcreate task, and the config goes', async () => {
    const [st] = await task('POST', '/nodes/pve1/qemu', { vmid: '712', scsi1: 'local-lvm:vm-712-disk-7' })
    expect(st).toBe('unable to create VM 712 - volume local-lvm:vm-712-disk-7 does not exist')
    expect((await req('GET', '/nodes/pve1/qemu/712/config')).status).toBe(500)
  })

  it('logs each new disk with its printed value, gives an ISO on a cdrom its size, refuses a second cloud-init drive in the worker', async () => {
    const [st, log] = await task('POST', '/nodes/pve1/qemu', {
      vmid: '713',
      scsi0: 'local-lvm:2,iothread=1',
      ide2: 'local:iso/debian-12.iso,media=cdrom',
    })
    expect(st).toBe('OK')
    expect(log).toContain(`scsi0: successfully created disk 'local-lvm:vm-713-disk-0,iothread=1,size=2G'`)
    const conf = data<Record<string, unknown>>(await req('GET', '/nodes/pve1/qemu/713/config'))
    expect(conf.ide2).toMatch(/^local:iso\/debian-12\.iso,media=cdrom,size=\d+[KMGT]?$/)
    const [two] = await task('POST', '/nodes/pve1/qemu', {
      vmid: '714',
      ide2: 'local-lvm:cloudinit',
      scsi1: 'local-lvm:cloudinit',
    })
    expect(two).toBe(`unable to create VM 714 - scsi1 - cloud-init drive is already attached at 'ide2'`)
  })
})

describe('qemu-server clone_vm ($load_and_check)', () => {
  it('checks the target storage before the target vmid, names the volume of a drive it cannot link', async () => {
    expect((await task('POST', '/nodes/pve1/qemu', { vmid: '730', scsi0: 'local-lvm:1' }))[0]).toBe('OK')
    expect((await task('POST', '/nodes/pve1/qemu', { vmid: '731' }))[0]).toBe('OK')
    expect(failure(await req('POST', '/nodes/pve1/qemu/730/clone', { newid: '731', storage: 'local' }))[2]).toEqual({
      storage: `storage 'local' does not support vm images`,
    })
    expect(failure(await req('POST', '/nodes/pve1/qemu/730/clone', { newid: '731' }))[1]).toBe(
      'unable to create VM 731: config file already exists',
    )
    expect(failure(await req('POST', '/nodes/pve1/qemu/730/clone', { newid: '732', full: '0' }))[1]).toBe(
      `Linked clone feature is not supported for 'local-lvm:vm-730-disk-0' (scsi0)`,
    )
    const [st, log] = await task('POST', '/nodes/pve1/qemu/730/clone', { newid: '732' })
    expect(st).toBe('OK')
    expect(log[0]).toBe('creating a clone of VM 730 with ID 732')
  })

  it('refuses a full clone of a running VM with TPM state', async () => {
    expect(
      (await task('POST', '/nodes/pve1/qemu', { vmid: '733', tpmstate0: 'local-lvm:1,version=v2.0', start: '1' }))[0],
    ).toBe('OK')
    expect(failure(await req('POST', '/nodes/pve1/qemu/733/clone', { newid: '734' }))[1]).toBe(
      'cannot clone TPM state while VM is running',
    )
  })
})

describe('qemu-server resize_vm', () => {
  it('measures the volume itself (volume_size_info), not the size= the config remembers; an equal size says nothing', async () => {
    expect(
      (await task('POST', '/nodes/pve1/qemu', { vmid: '740', scsi0: 'local-lvm:2', ide2: 'none,media=cdrom' }))[0],
    ).toBe('OK')
    // an admin edited the size= by hand: the volume is still 2 GiB
    sim.control.driftSet(740, 'scsi0', 'local-lvm:vm-740-disk-0,size=1G')
    const [same, log] = await task('PUT', '/nodes/pve1/qemu/740/resize', { disk: 'scsi0', size: '2G' })
    expect(same).toBe('OK')
    expect(log).toEqual(['TASK OK'])
    expect(data<Record<string, unknown>>(await req('GET', '/nodes/pve1/qemu/740/config')).scsi0).toBe(
      'local-lvm:vm-740-disk-0,size=1G',
    )
    expect((await task('PUT', '/nodes/pve1/qemu/740/resize', { disk: 'scsi0', size: '1536M' }))[0]).toBe(
      'shrinking disks is not supported',
    )
    expect((await task('PUT', '/nodes/pve1/qemu/740/resize', { disk: 'ide2', size: '+1G' }))[0]).toBe(
      `unable to parse volume ID 'none'`,
    )
  })
})

describe('qemu-server template (and pve-container template)', () => {
  it('qemu takes the config flock in the worker, so a held flock fails the qmtemplate task; pve-container answers at once', async () => {
    expect((await task('POST', '/nodes/pve1/qemu', { vmid: '750' }))[0]).toBe('OK')
    sim.control.setFlockContention(750, true)
    try {
      expect((await task('POST', '/nodes/pve1/qemu/750/template', {}))[0]).toBe(
        `can't lock file '/var/lock/qemu-server/lock-750.conf' - got timeout`,
      )
    } finally {
      sim.control.setFlockContention(750, false)
    }
    expect(
      (await task('POST', '/nodes/pve1/lxc', { vmid: '751', ostemplate: template, rootfs: 'local-lvm:1' }))[0],
    ).toBe('OK')
    sim.control.setFlockContention(751, true)
    try {
      expect(failure(await req('POST', '/nodes/pve1/lxc/751/template', {}))[1]).toBe(
        `can't lock file '/run/lock/lxc/pve-config-751.lock' - got timeout`,
      )
    } finally {
      sim.control.setFlockContention(751, false)
    }
  })
})

describe('pve-storage PVE::API2::Storage::Content index (each plugin list_images)', () => {
  it('lists images with the keys their plugin gives them', async () => {
    expect(
      (await task('POST', '/nodes/pve1/qemu', { vmid: '760', scsi0: 'local-lvm:1', scsi1: 'local-zfs:1' }))[0],
    ).toBe('OK')
    const lvm = data<Record<string, unknown>[]>(
      await req('GET', '/nodes/pve1/storage/local-lvm/content', { vmid: '760' }),
    )
    expect(lvm).toEqual([
      {
        volid: 'local-lvm:vm-760-disk-0',
        content: 'images',
        format: 'raw',
        size: 1024 ** 3,
        vmid: 760,
        ctime: expect.any(Number),
      },
    ])
    const zfs = data<Record<string, unknown>[]>(
      await req('GET', '/nodes/pve1/storage/local-zfs/content', { vmid: '760' }),
    )
    expect(zfs).toEqual([
      {
        volid: 'local-zfs:vm-760-disk-0',
        content: 'images',
        name: 'vm-760-disk-0',
        size: 1024 ** 3,
        parent: null,
        format: 'raw',
        vmid: 760,
      },
    ])
  })
})

describe('pve-container create_vm', () => {
  it('fills in hostname, memory and swap ("set some defaults")', async () => {
    const [st] = await task('POST', '/nodes/pve1/lxc', { vmid: '720', ostemplate: template, rootfs: 'local-lvm:2' })
    expect(st).toBe('OK')
    expect(data<Record<string, unknown>>(await req('GET', '/nodes/pve1/lxc/720/config'))).toMatchObject({
      hostname: 'CT720',
      memory: 512,
      swap: 512,
    })
  })

  it('check_volume_access reads the template type from its name; the worker finds out that the file is missing', async () => {
    expect(
      failure(
        await req('POST', '/nodes/pve1/lxc', {
          vmid: '721',
          ostemplate: 'local:iso/debian-12.iso',
          rootfs: 'local-lvm:2',
        }),
      )[1],
    ).toBe(`unable to use volume local:iso/debian-12.iso - content type needs to be 'vztmpl'`)
    const [st] = await task('POST', '/nodes/pve1/lxc', {
      vmid: '721',
      ostemplate: 'local:vztmpl/gone.tar.zst',
      rootfs: 'local-lvm:2',
    })
    expect(st).toBe(`unable to create CT 721 - can't find file 'local:vztmpl/gone.tar.zst'`)
  })

  it('$check_and_activate_storage runs for every mount point storage before the worker', async () => {
    expect(
      failure(await req('POST', '/nodes/pve1/lxc', { vmid: '722', ostemplate: template, rootfs: 'local:2' }))[2],
    ).toEqual({ storage: `storage 'local' does not support container directories` })
    sim.control.setStorageOnline('local-zfs', false)
    try {
      expect(
        failure(
          await req('POST', '/nodes/pve1/lxc', {
            vmid: '722',
            ostemplate: template,
            rootfs: 'local-lvm:2',
            mp0: 'local-zfs:1,mp=/data',
          }),
        )[1],
      ).toBe(`storage 'local-zfs' is not online`)
    } finally {
      sim.control.setStorageOnline('local-zfs', true)
    }
  })
})

describe('pve-container PVE::API2::LXC::Snapshot list', () => {
  it('shows the snapstate of a snapshot still being taken', async () => {
    sim.control.setTaskBehaviour('vzsnapshot', { hold: true })
    try {
      data(await req('POST', '/nodes/pve1/lxc/720/snapshot', { snapname: 'before' }))
      const list = data<Record<string, unknown>[]>(await req('GET', '/nodes/pve1/lxc/720/snapshot'))
      expect(list.find((s) => s.name === 'before')).toMatchObject({ name: 'before', snapstate: 'prepare' })
    } finally {
      sim.control.setTaskBehaviour('vzsnapshot', null)
    }
  })
})

describe('pve-manager PVE::API2::Cluster get_status and PVE::API2::Nodes::Nodeinfo status', () => {
  it('the cluster is quorate while more than half of the nodes are online', async () => {
    const quorate = async () =>
      data<Record<string, unknown>[]>(await req('GET', '/cluster/status')).find((e) => e.type === 'cluster')?.quorate
    expect(await quorate()).toBe(1)
    sim.control.setNodeOnline('pve2', false)
    try {
      expect(await quorate()).toBe(1)
      sim.control.setNodeOnline('pve3', false)
      expect(await quorate()).toBe(0)
    } finally {
      sim.control.setNodeOnline('pve2', true)
      sim.control.setNodeOnline('pve3', true)
    }
  })

  it('node status has every key the handler sets, with read_cpuinfo captures as strings', async () => {
    const st = data<Record<string, unknown>>(await req('GET', '/nodes/pve1/status'))
    for (const k of ['uptime', 'idle', 'loadavg', 'kversion', 'current-kernel', 'boot-info', 'cpuinfo', 'cpu', 'wait'])
      expect(st).toHaveProperty(k)
    for (const k of ['memory', 'ksm', 'swap', 'pveversion', 'rootfs']) expect(st).toHaveProperty(k)
    expect(st.cpuinfo).toMatchObject({ user_hz: 100, hvm: '1', mhz: expect.stringMatching(/^\d+\.\d+$/) })
    expect(st.swap).toEqual({ total: expect.any(Number), used: expect.any(Number), free: expect.any(Number) })
  })
})

// the ACL checks come from the PVE API schema: without it (a fresh clone) this part skips
describe.skipIf(!apidocForTests())('pve-manager PVE::API2::Nodes index and API2Tools extract_node_stats', () => {
  it('an offline node keeps its sizes but no usage; a caller without Sys.Audit on a node sees no figures', async () => {
    sim.control.setNodeOnline('pve3', false)
    try {
      const pve3 = data<Record<string, unknown>[]>(await req('GET', '/nodes')).find((n) => n.node === 'pve3')
      expect(pve3).toMatchObject({ status: 'offline', maxcpu: expect.any(Number), maxmem: expect.any(Number) })
      expect(pve3).not.toHaveProperty('uptime')
      expect(pve3).not.toHaveProperty('mem')
    } finally {
      sim.control.setNodeOnline('pve3', true)
    }
    data(await req('POST', '/access/users', { userid: 'viewer@pve' }))
    const created = data<Record<string, unknown>>(
      await req('POST', '/access/users/viewer@pve/token/ro', { privsep: '0' }),
    )
    data(await req('PUT', '/access/acl', { path: '/nodes/pve1', roles: 'PVEAuditor', users: 'viewer@pve' }))
    const viewer = { Authorization: `PVEAPIToken=${String(created['full-tokenid'])}=${String(created.value)}` }
    const nodes = (
      (await raw(sim, 'GET', '/api2/json/nodes', { headers: viewer })).json as { data: Record<string, unknown>[] }
    ).data
    expect(nodes.find((n) => n.node === 'pve1')).toHaveProperty('maxmem')
    const pve2 = nodes.find((n) => n.node === 'pve2')
    expect(pve2).toMatchObject({ node: 'pve2', status: 'online', type: 'node', level: '' })
    for (const k of ['uptime', 'cpu', 'mem', 'disk', 'maxcpu', 'maxmem', 'maxdisk']) expect(pve2).not.toHaveProperty(k)
  })
})

describe.skipIf(!apidocForTests())('pve-access-control create_ticket (RPCEnvironment compute_api_permission)', () => {
  it("a user's ticket carries the privileges it holds per area, not root's", async () => {
    data(await req('POST', '/access/users', { userid: 'deployer@pve', password: 'secret-pass' }))
    data(await req('PUT', '/access/acl', { path: '/vms/700', roles: 'PVEVMUser', users: 'deployer@pve' }))
    const login = await raw(sim, 'POST', '/api2/json/access/ticket', {
      ...form({ username: 'deployer@pve', password: 'secret-pass' }),
    })
    const cap = data<{ cap: Record<string, Record<string, number>> }>(login).cap
    expect(cap.vms).toMatchObject({ 'VM.Audit': 1, 'VM.PowerMgmt': 1, 'VM.Console': 1 })
    expect(cap.vms).not.toHaveProperty(['VM.Allocate'])
    for (const area of ['access', 'storage', 'nodes', 'sdn', 'dc', 'mapping']) expect(cap[area]).toEqual({})
  })
})
