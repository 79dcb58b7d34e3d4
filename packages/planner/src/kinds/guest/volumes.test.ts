import { fc, test } from '@fast-check/vitest'
import { formatSize } from '@proxops/pve-client/wire'
import { parseQuantity, type QemuManifest } from '@proxops/schema'
import { manifest } from '../../testing/manifest.js'
import { describe, expect, it } from 'vitest'
import {
  adoptVolume,
  BIND_MOUNT,
  createVolume,
  DISK,
  EFI_DISK,
  firmwareVolumesOwned,
  isCreateForm,
  MOUNT_POINT,
  ROOT_FS,
  sizeBytes,
  TPM_STATE,
  volumeBytes,
  volumeKindOf,
  volumeOwned,
  type VolumeKind,
} from './volumes.js'

const MiB = 1024 ** 2
const gaps = () => {
  const list: [string, string, string][] = []
  return { list, gap: (field: string, value: string, note: string) => void list.push([field, value, note]) }
}

describe('one size reader', () => {
  it("reads PVE's disk sizes (format_size output and bare bytes), and nothing else", () => {
    expect(sizeBytes('32G')).toBe(32 * 1024 ** 3)
    expect(sizeBytes('528K')).toBe(528 * 1024)
    expect(sizeBytes('1000')).toBe(1000)
    expect(sizeBytes('1.5G')).toBe(1.5 * 1024 ** 3)
    for (const bad of ['8g', '8 G', '', '-1', '1P', 'size']) expect(sizeBytes(bad)).toBeUndefined()
    expect(sizeBytes(undefined)).toBeUndefined()
  })

  it('knows a create form (an allocation the executor never writes over a live volume) in every volume slot', () => {
    for (const [type, key, value] of [
      ['qemu', 'scsi0', 'local-lvm:8,iothread=1'],
      ['qemu', 'virtio1', 'local-lvm:0,import-from=local:import/a.qcow2'],
      ['qemu', 'ide2', 'local-lvm:cloudinit'],
      ['qemu', 'efidisk0', 'local-lvm:1,efitype=4m'],
      ['lxc', 'rootfs', 'volume=local-lvm:8'],
      ['lxc', 'mp0', 'local-lvm:0.5,mp=/d'],
    ] as const)
      expect(isCreateForm(type, key, value)).toBe(true)
    for (const [type, key, value] of [
      ['qemu', 'scsi0', 'local-lvm:vm-1-disk-0,size=8G'],
      ['qemu', 'ide2', 'none,media=cdrom'],
      ['qemu', 'net0', 'local-lvm:8'],
      ['lxc', 'mp1', '/srv/a,mp=/a'],
      ['lxc', 'memory', 'local-lvm:8'],
    ] as const)
      expect(isCreateForm(type, key, value)).toBe(false)
  })

  it('reads the size of a live slot by its kind (the executor confirms a resize with it)', () => {
    expect(volumeBytes('qemu', 'scsi0', 'local-lvm:vm-1-disk-0,iothread=1,size=40G')).toBe(40 * 1024 ** 3)
    expect(volumeBytes('lxc', 'mp0', 'volume=local-lvm:vm-1-disk-1,mp=/d,size=1536M')).toBe(1536 * MiB)
    expect(volumeBytes('lxc', 'rootfs', 'local-lvm:vm-1-disk-0')).toBeUndefined()
    expect(volumeBytes('qemu', 'net0', 'virtio=BC:24:11:00:00:01,bridge=vmbr0')).toBeUndefined()
  })
})

describe('volume kinds', () => {
  it('names the kind of each config key (a container mount point holding a path is a bind mount)', () => {
    expect(volumeKindOf('qemu', 'virtio3', 'x')).toBe(DISK)
    expect(volumeKindOf('qemu', 'efidisk0', 'x')).toBe(EFI_DISK)
    expect(volumeKindOf('qemu', 'tpmstate0', 'x')).toBe(TPM_STATE)
    expect(volumeKindOf('qemu', 'net0', 'x')).toBeUndefined()
    expect(volumeKindOf('lxc', 'rootfs', 'x')).toBe(ROOT_FS)
    expect(volumeKindOf('lxc', 'mp2', 'local-lvm:vm-1-disk-1,mp=/d')).toBe(MOUNT_POINT)
    expect(volumeKindOf('lxc', 'mp2', '/srv/a,mp=/a')).toBe(BIND_MOUNT)
    expect(volumeKindOf('lxc', 'mp2', 'volume=/srv/a,mp=/a')).toBe(BIND_MOUNT)
  })

  // qemu-server's tpmstate: the version is fixed when the state volume is created (PVE::QemuServer create_disks)
  it('reports a TPM version change as create-only, never a write; PVE assumes v1.2 when the token is absent', () => {
    const owned = (version: 'v1.2' | 'v2.0') =>
      volumeOwned({
        kind: TPM_STATE,
        slot: 'tpmstate0',
        field: 'spec.hardware.tpm',
        entry: { version },
        at: { storage: 'local-lvm' },
      })
    expect(owned('v2.0').create).toBe('local-lvm:1,version=v2.0')
    expect(owned('v1.2').compare('local-lvm:vm-1-disk-1,size=4M')).toEqual([])
    expect(owned('v2.0').compare('local-lvm:vm-1-disk-1,size=4M')).toEqual([
      {
        t: 'anomaly',
        code: 'create-only-option',
        message:
          'tpmstate0 is v1.2 on PVE but spec.hardware.tpm.version is v2.0; PVE cannot change a TPM version after creation (recreate required)',
      },
    ])
    expect(owned('v2.0').compare(undefined)).toEqual([
      { t: 'write', value: 'local-lvm:1,version=v2.0', after: 'local-lvm:1,version=v2.0', newSlot: true },
    ])
    const g = gaps()
    expect(adoptVolume(TPM_STATE, 'tpmstate0', 'local-lvm:vm-1-disk-1,size=4M', g.gap)?.entry).toEqual({
      version: 'v1.2',
    })
    expect(g.list).toEqual([])
  })

  it("allocates the TPM state on the EFI disk's storage, else the first disk's, else the cloud-init drive's, saying which", () => {
    const spec = (hardware: object, disks: object[], ci?: string) => {
      const m = manifest({
        kind: 'VM',
        metadata: { name: 'v' },
        spec: {
          node: 'pve1',
          vmid: 100,
          memory: '1GiB',
          cpu: { type: 'host', cores: 1 },
          // a VM without disks of its own is a clone (its disks come from the template)
          ...(disks.length > 0 ? { disks } : { clone: 'tpl' }),
          hardware,
        },
      }) as QemuManifest
      return [m.spec.hardware ?? {}, m.spec.disks, ci] as const
    }
    const run = (hw: object, disks: object[], ci?: string) => {
      const gaps: { field: string; note: string }[] = []
      const owned = firmwareVolumesOwned(...spec(hw, disks, ci), gaps)
      return { creates: owned.map((o) => `${o.key}=${String(o.create)}`), notes: gaps.map((g) => g.note) }
    }
    const disk = { storage: 'ceph', size: '8GiB' }
    const tpm = { version: 'v2.0' }
    expect(run({ 'efi-disk': { storage: 'local-lvm' }, tpm }, [disk])).toEqual({
      creates: ['efidisk0=local-lvm:1', 'tpmstate0=local-lvm:1,version=v2.0'],
      notes: [],
    })
    expect(run({ tpm }, [disk], 'nvme')).toEqual({
      creates: ['tpmstate0=ceph:1,version=v2.0'],
      notes: ["TPM state allocated on ceph (the first disk's storage)"],
    })
    expect(run({ tpm }, [], 'nvme')).toEqual({
      creates: ['tpmstate0=nvme:1,version=v2.0'],
      notes: ["TPM state allocated on nvme (the cloud-init drive's storage)"],
    })
    expect(run({ tpm }, []).creates).toEqual([])
    // qemu-server creates v1.2 without `version=`; ProxOps creates v2.0 when the manifest leaves it out
    expect(run({ tpm: {} }, [disk]).creates).toEqual(['tpmstate0=ceph:1,version=v2.0'])
  })

  it("adopts what PVE's tokens say and gaps the rest; an unreadable value is a gap, never a guess", () => {
    const g = gaps()
    expect(adoptVolume(EFI_DISK, 'efidisk0', 'local-lvm:vm-1-disk-2,efitype=4m,ms-cert=2023,size=528K', g.gap)).toEqual(
      {
        entry: { storage: 'local-lvm', template: '4m' },
      },
    )
    expect(adoptVolume(ROOT_FS, 'rootfs', 'local-lvm:vm-1-disk-0,acl=1,size=8G', g.gap)).toEqual({
      entry: { storage: 'local-lvm', size: '8GiB' },
    })
    expect(adoptVolume(DISK, 'scsi0', 'local-lvm:vm-1-disk-0,size=100', g.gap)).toEqual({
      entry: { storage: 'local-lvm' },
      missingSize: '100',
    })
    expect(adoptVolume(BIND_MOUNT, 'mp1', '/srv/a,mp=/a,ro=1', g.gap)?.entry).toEqual({
      'host-path': '/srv/a',
      'mount-point': '/a',
      'read-only': true,
    })
    expect(adoptVolume(DISK, 'scsi1', 'local-lvm:vm-1-disk-1,size=8G,size=9G', g.gap)).toBeUndefined()
    // a passthrough disk has no storage: the schema's storage check then lists the file INCOMPLETE
    expect(adoptVolume(DISK, 'virtio2', '/dev/sdb,size=4T', g.gap)?.entry).toEqual({
      storage: '/dev/sdb',
      size: '4TiB',
    })
    expect(g.list).toEqual([
      ['rootfs.acl', '1', 'root filesystem option not modelled'],
      ['scsi1', 'local-lvm:vm-1-disk-1,size=8G,size=9G', "disk not readable (PVE's property-string grammar)"],
      ['virtio2', '/dev/sdb,size=4T', 'disk is not a volume on a storage: not modelled'],
    ])
  })
})

/** What PVE stores for a create form: its own volume name and `size=` printed by format_size. */
function stored(kind: VolumeKind, create: string, bytes: number): string {
  const [head, ...tokens] = create.split(',')
  if (kind === BIND_MOUNT) return create
  const storage = head!.split(':')[0]!
  return [`${storage}:vm-1-disk-0`, ...tokens, `size=${formatSize(bytes)}`].join(',')
}

describe('create, compare and adopt read one declaration', () => {
  it('writes the create heads PVE allocates from: a size in GiB, an import, a placeholder for PVE-sized kinds, a host path', () => {
    const d = { iothread: true }
    expect(createVolume(DISK, { storage: 'local-lvm', bytes: 1536 * MiB }, d, 'scsi0')).toBe('local-lvm:1.5,iothread=1')
    expect(
      createVolume(
        DISK,
        { storage: 'local-lvm', bytes: 8 * 1024 ** 3, importFrom: 'local:import/a.qcow2' },
        {},
        'scsi0',
      ),
    ).toBe('local-lvm:0,import-from=local:import/a.qcow2')
    expect(createVolume(EFI_DISK, { storage: 'local-lvm' }, { template: '4m' }, 'efidisk0')).toBe(
      'local-lvm:1,efitype=4m',
    )
    expect(createVolume(BIND_MOUNT, { hostPath: '/srv/a' }, { 'mount-point': '/a' }, 'mp1')).toBe('/srv/a,mp=/a')
    expect(createVolume(MOUNT_POINT, { storage: 'ceph', bytes: 8 * 1024 ** 3 }, {}, 'mp3')).toBe('ceph:8,mp=/mnt/mp3')
  })

  const entries = {
    disk: fc.record({
      storage: fc.constantFrom('local-lvm', 'ceph'),
      interface: fc.constantFrom('scsi0', 'sata1'),
      iothread: fc.option(fc.boolean(), { nil: undefined }),
      discard: fc.option(fc.constantFrom('on', 'ignore'), { nil: undefined }),
      ssd: fc.option(fc.boolean(), { nil: undefined }),
      aio: fc.option(fc.constantFrom('native', 'io_uring'), { nil: undefined }),
    }),
    mount: fc.record({
      storage: fc.constantFrom('local-lvm', 'ceph'),
      slot: fc.constantFrom('mp0', 'mp7'),
      'mount-point': fc.constantFrom('/data', '/srv/x'),
      options: fc.option(
        fc.record(
          { 'read-only': fc.boolean(), backup: fc.boolean(), 'mount-options': fc.constantFrom('noatime') },
          {
            requiredKeys: [],
          },
        ),
        { nil: undefined },
      ),
    }),
  }
  const strip = (o: object) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>

  test.prop([
    fc.oneof(fc.constant(DISK), fc.constant(MOUNT_POINT)),
    entries.disk,
    entries.mount,
    fc.integer({ min: 1, max: 1 << 20 }),
  ])('an entry created, stored by PVE and adopted back compares equal to itself', (kind, disk, mount, mib) => {
    const entry = strip(kind === DISK ? disk : mount)
    const slot = String(kind === DISK ? entry.interface : entry.slot)
    const bytes = mib * MiB
    const storage = String(entry.storage)
    const create = createVolume(kind, { storage, bytes }, entry, slot)
    const live = stored(kind, create, bytes)
    const g = gaps()
    const adopted = adoptVolume(kind, slot, live, g.gap)
    expect(g.list).toEqual([])
    expect(adopted?.missingSize).toBeUndefined()
    const size = parseQuantity(adopted?.entry.size)
    expect(size.ok && size.bytes).toBe(bytes)
    // the adopted entry (as the schema would parse it) compares equal with the live value
    const back = { ...adopted!.entry, size: bytes }
    const owned = volumeOwned({ kind, slot, field: 'f', entry: back, at: { storage, bytes } })
    expect(owned.compare(live)).toEqual([])
    // and the declared entry itself: only PVE-defaulted tokens may differ (none are written)
    expect(volumeOwned({ kind, slot, field: 'f', entry, at: { storage, bytes } }).compare(live)).toEqual([])
  })
})
