import { createHash } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { makeSim } from '../test-support/sim.js'
import { normaliseFilename } from './artifacts.js'

const URL = 'https://cloud.example/debian-12-genericcloud-amd64.qcow2'

describe('storages and content', () => {
  it('per-node storages with sorted content lists and types; `local` holds no guest disks, as a fresh install', async () => {
    const s = makeSim()
    const list = await s.call('GET', '/nodes/pve1/storage')
    expect(list.map((x: { storage: string; type: string; content: string }) => [x.storage, x.type, x.content])).toEqual(
      [
        ['local', 'dir', 'backup,import,iso,vztmpl'],
        ['local-lvm', 'lvmthin', 'images,rootdir'],
        ['local-zfs', 'zfspool', 'images,rootdir'],
      ],
    )
    const old = makeSim({ pveVersion: '8.4' })
    expect((await old.call('GET', '/nodes/pve1/storage'))[0]).toMatchObject({
      storage: 'local',
      content: 'backup,iso,vztmpl',
    })
    // qemu-server check_storage_access: a new disk needs a storage with `images` content
    expect((await s.error('POST', '/nodes/pve1/qemu', { vmid: 100, scsi0: 'local:1' })).errors).toEqual({
      storage: `storage 'local' does not support vm images`,
    })
    const iso = await s.call('GET', '/nodes/pve1/storage', { content: 'iso' })
    expect(iso.map((x: { storage: string }) => x.storage)).toEqual(['local'])
  })

  it('content listing: volid forms with content/format, filter by content and vmid', async () => {
    const s = makeSim()
    await s.call('POST', '/storage', {
      storage: 'vmdir',
      type: 'dir',
      path: '/srv/vmdir',
      content: 'images,iso,vztmpl',
    })
    s.sim.addVolume('pve1', 'vmdir', { filename: 'debian.iso', content: 'iso', size: 100 })
    s.sim.addVolume('pve1', 'vmdir', { filename: 'deb.tar.zst', content: 'vztmpl', size: 100 })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, scsi0: 'vmdir:1' })
    const items = await s.call('GET', '/nodes/pve1/storage/vmdir/content')
    expect(
      items.map((i: { volid: string; content: string; format: string }) => [i.volid, i.content, i.format]),
    ).toEqual([
      ['vmdir:100/vm-100-disk-0.raw', 'images', 'raw'],
      ['vmdir:iso/debian.iso', 'iso', 'iso'],
      ['vmdir:vztmpl/deb.tar.zst', 'vztmpl', 'tzst'],
    ])
    expect(await s.call('GET', '/nodes/pve1/storage/vmdir/content', { vmid: 100 })).toHaveLength(1)
    expect(await s.call('GET', '/nodes/pve1/storage/vmdir/content', { content: 'iso' })).toHaveLength(1)
  })

  it('content listing follows PVE::Storage::volume_list: an unfiltered listing runs qemu-img info on every image, content= only its type', async () => {
    const s = makeSim()
    await s.call('POST', '/storage', {
      storage: 'vmdir',
      type: 'dir',
      path: '/srv/vmdir',
      content: 'images,rootdir,iso',
    })
    s.sim.addVolume('pve1', 'vmdir', { filename: 'Zeta.iso', content: 'iso', size: 100 })
    s.sim.addVolume('pve1', 'vmdir', { filename: 'alpha.iso', content: 'iso', size: 100 })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, scsi0: 'vmdir:1', scsi1: 'vmdir:1' })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 101, scsi0: 'local-lvm:1' })
    const before = s.sim.imageInfoRuns()
    const all = await s.call('GET', '/nodes/pve1/storage/vmdir/content')
    // list_volumes walks rootdir and images separately: list_images inspects both disks in each pass
    expect(s.sim.imageInfoRuns() - before).toBe(4)
    // sorted by lower-cased volid
    expect(all.map((i: { volid: string }) => i.volid)).toEqual([
      'vmdir:100/vm-100-disk-0.raw',
      'vmdir:100/vm-100-disk-1.raw',
      'vmdir:iso/alpha.iso',
      'vmdir:iso/Zeta.iso',
    ])
    const iso = await s.call('GET', '/nodes/pve1/storage/vmdir/content', { content: 'iso' })
    expect(iso.map((i: { volid: string }) => i.volid)).toEqual(['vmdir:iso/alpha.iso', 'vmdir:iso/Zeta.iso'])
    expect(s.sim.imageInfoRuns() - before).toBe(4)
    // a content type the storage is not configured for lists nothing; block storages cost no qemu-img runs
    expect(await s.call('GET', '/nodes/pve1/storage/vmdir/content', { content: 'vztmpl' })).toEqual([])
    expect(await s.call('GET', '/nodes/pve1/storage/local-lvm/content')).toHaveLength(1)
    expect(s.sim.imageInfoRuns() - before).toBe(4)
    // with a vmid: iso files are not listed, and only that guest's images are inspected
    const mine = await s.call('GET', '/nodes/pve1/storage/vmdir/content', { vmid: 100, content: 'images' })
    expect(mine).toHaveLength(2)
    expect(await s.call('GET', '/nodes/pve1/storage/vmdir/content', { vmid: 100, content: 'iso' })).toEqual([])
    expect(s.sim.imageInfoRuns() - before).toBe(6)
  })
})

describe('download-url', () => {
  it('normalises the filename (path stripped, odd characters to _)', () => {
    expect(normaliseFilename('../a/b c+d.iso')).toBe('b_c_d.iso')
    expect(normaliseFilename('ok-1.2_3.qcow2')).toBe('ok-1.2_3.qcow2')
    // PVE::Storage::normalize_content_filename: chomp, then everything up to the last slash or backslash goes
    expect(normaliseFilename('C:\\isos\\a b.iso\n')).toBe('a_b.iso')
    expect(normaliseFilename('isos/')).toBe('')
  })

  it('normalise_content_filename (property): only safe characters, idempotent, the name after the last separator', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (name) => {
        const out = normaliseFilename(name)
        expect(out).toMatch(/^[a-zA-Z0-9_.-]*$/)
        expect(normaliseFilename(out)).toBe(out)
        const chomped = name.replace(/\n$/, '')
        if (/^[a-zA-Z0-9_.-]*$/.test(chomped)) expect(out).toBe(chomped)
        // nothing after the last separator of the first line survives in front of the result
        const firstLine = chomped.split('\n')[0] ?? ''
        const cut = Math.max(firstLine.lastIndexOf('/'), firstLine.lastIndexOf('\\'))
        expect(out.length).toBe(chomped.length - cut - 1)
      }),
    )
  })

  it('immediate errors: wrong extension (400), block storage, content not configured', async () => {
    const s = makeSim()
    const ext = await s.error('POST', '/nodes/pve1/storage/local/download-url', {
      url: URL,
      filename: 'x.qcow2',
      content: 'iso',
    })
    expect([ext.status, ext.errors]).toEqual([400, { filename: 'wrong file extension' }])
    const vz = await s.error('POST', '/nodes/pve1/storage/local/download-url', {
      url: URL,
      filename: 'x.zip',
      content: 'vztmpl',
    })
    expect(vz.status).toBe(400)
    const lvm = await s.error('POST', '/nodes/pve1/storage/local-lvm/download-url', {
      url: URL,
      filename: 'x.iso',
      content: 'iso',
    })
    expect(lvm.message).toBe(`can't upload to storage type 'lvmthin', not a file based storage!`)
    const imp = await s.error('POST', '/nodes/pve1/storage/local/download-url', {
      url: URL,
      filename: 'x.img',
      content: 'import',
    })
    expect(imp.errors).toEqual({ filename: 'invalid filename or wrong extension' })
  })

  it('downloads into the content dir; a second run refuses to override, a matching checksum is OK, a wrong one fails', async () => {
    const s = makeSim()
    s.sim.setRemoteFile(URL, { content: 'qcow2-bytes', size: 3 * 1024 ** 3 })
    const sha = createHash('sha256').update('qcow2-bytes').digest('hex')
    expect(s.sim.remoteChecksum(URL, 'sha256')).toBe(sha)
    const first = await s.run('POST', '/nodes/pve1/storage/local/download-url', {
      url: URL,
      filename: 'debian-12.qcow2',
      content: 'import',
    })
    expect(first.upid).toContain(':download:debian-12.qcow2:')
    expect(first.exitstatus).toBe('OK')
    expect(s.sim.storageContent('pve1', 'local')).toEqual([
      expect.objectContaining({
        volid: 'local:import/debian-12.qcow2',
        content: 'import',
        format: 'qcow2',
        size: 3 * 1024 ** 3,
      }),
    ])
    const again = await s.run('POST', '/nodes/pve1/storage/local/download-url', {
      url: URL,
      filename: 'debian-12.qcow2',
      content: 'import',
    })
    expect(again.exitstatus).toBe(`refusing to override existing file '/var/lib/vz/import/debian-12.qcow2'`)
    const same = await s.run('POST', '/nodes/pve1/storage/local/download-url', {
      url: URL,
      filename: 'debian-12.qcow2',
      content: 'import',
      checksum: sha,
      'checksum-algorithm': 'sha256',
    })
    expect(same.exitstatus).toBe('OK')
    expect(same.log).toContain(
      'calculating checksum of existing file...OK, got correct file already, no need to download',
    )
    const bad = await s.run('POST', '/nodes/pve1/storage/local/download-url', {
      url: URL,
      filename: 'debian-12.qcow2',
      content: 'import',
      checksum: 'ab'.repeat(32),
      'checksum-algorithm': 'sha256',
    })
    expect(bad.exitstatus).toBe(`checksum mismatch: got '${sha}' != expect '${'ab'.repeat(32)}', aborting`)
  })

  it('checksum mismatch of a fresh download fails inside the task and leaves no file; unreachable URL fails', async () => {
    const s = makeSim()
    const r = await s.run('POST', '/nodes/pve1/storage/local/download-url', {
      url: URL,
      filename: 'a.iso',
      content: 'iso',
      checksum: '00',
      'checksum-algorithm': 'md5',
    })
    expect(r.exitstatus).toMatch(/^checksum mismatch: got '[0-9a-f]{32}' != expect '00'$/)
    expect(s.sim.storageContent('pve1', 'local')).toEqual([])
    s.sim.setRemoteFile('https://down.example/x.iso', { error: '404 Not Found' })
    const down = await s.run('POST', '/nodes/pve1/storage/local/download-url', {
      url: 'https://down.example/x.iso',
      filename: 'x.iso',
      content: 'iso',
    })
    expect(down.exitstatus).toBe('download failed: 404 Not Found')
  })

  it('a downloaded import image feeds import-from with its virtual size', async () => {
    const s = makeSim()
    s.sim.setRemoteFile(URL, { content: 'x', size: 3 * 1024 ** 3 })
    await s.run('POST', '/nodes/pve1/storage/local/download-url', {
      url: URL,
      filename: 'img.qcow2',
      content: 'import',
    })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, scsi0: 'local-lvm:0,import-from=local:import/img.qcow2' })
    expect((await s.call('GET', '/nodes/pve1/qemu/100/config')).scsi0).toBe('local-lvm:vm-100-disk-0,size=3G')
  })
})

describe('allocate and delete volumes', () => {
  it('POST content allocates a named volume for its owner; DELETE content runs imgdel', async () => {
    const s = makeSim()
    expect(
      await s.call('POST', '/nodes/pve1/storage/local-lvm/content', {
        vmid: 100,
        filename: 'vm-100-disk-5',
        size: '1G',
      }),
    ).toBe('local-lvm:vm-100-disk-5')
    const bad = await s.error('POST', '/nodes/pve1/storage/local-lvm/content', {
      vmid: 100,
      filename: 'disk-x',
      size: '1G',
    })
    expect(bad.message).toBe(`illegal name 'disk-x' - should be 'vm-100-*'`)
    const info = await s.call(
      'GET',
      `/nodes/pve1/storage/local-lvm/content/${encodeURIComponent('local-lvm:vm-100-disk-5')}`,
    )
    expect(info).toMatchObject({ size: 1024 ** 3, format: 'raw', path: '/dev/pve/vm-100-disk-5' })
    const r = await s.run(
      'DELETE',
      `/nodes/pve1/storage/local-lvm/content/${encodeURIComponent('local-lvm:vm-100-disk-5')}`,
    )
    expect(r.upid).toContain(':imgdel:')
    expect(s.sim.storageContent('pve1', 'local-lvm')).toEqual([])
  })
})
