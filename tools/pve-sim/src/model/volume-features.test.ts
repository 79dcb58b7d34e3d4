/**
 * pve-storage volume_has_feature, per plugin (LvmThinPlugin, ZFSPoolPlugin, RBDPlugin, Plugin.pm, LVMPlugin):
 * which volume state (current, base, a snapshot) and format allow a snapshot, a linked clone or a copy.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { defaultStorages, NodeStorage, StorageConfig, type StorageDef } from './storage.js'
import { volumeHasFeature, type VolumeFeature } from './volume-features.js'

const extra = (id: string, type: StorageDef['type']): StorageDef => ({
  id,
  type,
  content: ['images', 'rootdir'],
  total: 1024 ** 4,
  shared: type === 'rbd',
  extra: {},
})
const node = {
  storage: new NodeStorage(
    'pve1',
    new StorageConfig([...defaultStorages('9.1'), extra('dir', 'dir'), extra('ceph', 'rbd'), extra('thick', 'lvm')]),
  ),
}
const has = (feature: VolumeFeature, volid: string, snap?: string, opts = {}) =>
  volumeHasFeature(node, feature, volid, snap, opts)

describe('volume_has_feature', () => {
  it('lvmthin and rbd clone a base volume or a snapshot; zfs only a base; nothing clones a current volume', () => {
    expect(has('clone', 'local-lvm:base-100-disk-0')).toBe(true)
    expect(has('clone', 'local-lvm:vm-100-disk-0', 's1')).toBe(true)
    expect(has('clone', 'ceph:vm-100-disk-0', 's1')).toBe(true)
    expect(has('clone', 'local-zfs:base-100-disk-0')).toBe(true)
    expect(has('clone', 'local-zfs:vm-100-disk-0', 's1')).toBe(false)
    for (const v of [
      'local-lvm:vm-100-disk-0',
      'local-zfs:subvol-100-disk-0',
      'ceph:vm-100-disk-0',
      'dir:100/vm-100-disk-0.qcow2',
    ])
      expect(has('clone', v)).toBe(false)
  })

  it('file storages: any base image clones for qemu, none for pve-container (it wants raw or subvol)', () => {
    expect(has('clone', 'dir:100/base-100-disk-0.raw')).toBe(true)
    expect(has('clone', 'dir:100/base-100-disk-0.qcow2', undefined, { validTargetFormats: ['raw', 'subvol'] })).toBe(
      false,
    )
    expect(has('copy', 'dir:100/vm-100-disk-0.raw', 's1')).toBe(false)
    expect(has('copy', 'dir:100/vm-100-disk-0.qcow2', 's1')).toBe(true)
    expect(has('snapshot', 'dir:100/vm-100-disk-0.qcow2')).toBe(true)
    expect(has('snapshot', 'thick:vm-100-disk-0')).toBe(false)
    expect(has('clone', 'thick:base-100-disk-0')).toBe(false)
  })

  it('a linked clone of a base volume is a current volume; a bind mount path has no feature', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<VolumeFeature>('snapshot', 'clone', 'copy'),
        fc.constantFrom('local-lvm', 'local-zfs', 'ceph'),
        (f, sid) => {
          expect(has(f, `${sid}:base-100-disk-0/vm-101-disk-0`)).toBe(has(f, `${sid}:vm-101-disk-0`))
          expect(has(f, '/srv/data')).toBe(false)
          // a snapshot of a base volume never exists: the snapshot state alone decides
          expect(has(f, `${sid}:base-100-disk-0`, 's')).toBe(has(f, `${sid}:vm-100-disk-0`, 's'))
        },
      ),
    )
  })
})
