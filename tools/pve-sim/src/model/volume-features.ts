/**
 * PVE::Storage::volume_has_feature as each storage plugin answers it: a feature is listed per volume state
 * (`current`, `base`, or `snap` when a snapshot name is given) and, for the file-based plugins (Plugin.pm for
 * dir/nfs/cifs, LVMPlugin), per image format. Base or not is the last part of the volume name, as each
 * plugin's parse_volname decides it: a linked clone `base-100-disk-0/vm-101-disk-0` is an ordinary current
 * volume. A path that is not a storage volume (a bind mount, a device) has no feature at all.
 */
import type { NodeState } from './cluster.js'
import { splitVolid, type StorageType } from './storage.js'

export type VolumeFeature = 'snapshot' | 'clone' | 'copy' | 'rename'
type State = 'current' | 'base' | 'snap'

/** LvmThinPlugin, ZFSPoolPlugin, RBDPlugin: every format */
const BLOCK_FEATURES: Partial<Record<StorageType, Record<VolumeFeature, readonly State[]>>> = {
  lvmthin: { snapshot: ['current'], clone: ['base', 'snap'], copy: ['base', 'current', 'snap'], rename: ['current'] },
  zfspool: { snapshot: ['current', 'snap'], clone: ['base'], copy: ['base', 'current'], rename: ['current'] },
  rbd: {
    snapshot: ['current', 'snap'],
    clone: ['base', 'snap'],
    copy: ['base', 'current', 'snap'],
    rename: ['current'],
  },
}

/** Plugin.pm (dir, nfs, cifs, cephfs) and LVMPlugin: per state, the formats that have the feature */
const FILE_FEATURES: Record<'file' | 'lvm', Record<VolumeFeature, Partial<Record<State, readonly string[]>>>> = {
  file: {
    snapshot: { current: ['qcow2'], snap: ['qcow2'] },
    clone: { base: ['qcow2', 'raw', 'vmdk'] },
    copy: { base: ['qcow2', 'raw', 'vmdk'], current: ['qcow2', 'raw', 'vmdk'], snap: ['qcow2'] },
    rename: { current: ['qcow2', 'raw', 'vmdk'] },
  },
  lvm: {
    snapshot: { current: ['qcow2'], snap: ['qcow2'] },
    clone: {},
    copy: { base: ['qcow2', 'raw'], current: ['qcow2', 'raw'], snap: ['qcow2'] },
    rename: { current: ['qcow2', 'raw'] },
  },
}

/**
 * volume_has_feature. `validTargetFormats` is the option pve-container passes for a linked clone
 * (`raw`, `subvol`): Plugin.pm's clone_image always makes a qcow2 image, so it answers no there.
 */
export function volumeHasFeature(
  node: Pick<NodeState, 'storage'>,
  feature: VolumeFeature,
  volid: string | undefined,
  snapname?: string,
  opts: { validTargetFormats?: readonly string[] } = {},
): boolean {
  const split = volid === undefined ? undefined : splitVolid(volid)
  const def = split && node.storage.def(split[0])
  if (!split || !def) return false
  const volname = split[1]
  const base = /^base(vol)?-/.test(volname.split('/').pop() ?? '')
  const state: State = snapname ? 'snap' : base ? 'base' : 'current'
  const block = BLOCK_FEATURES[def.type]
  if (block) return block[feature].includes(state)
  const family = def.type === 'lvm' ? 'lvm' : 'file'
  if (family === 'file' && feature === 'clone' && opts.validTargetFormats && !opts.validTargetFormats.includes('qcow2'))
    return false
  const format = node.storage.get(volid as string)?.format ?? (volname.endsWith('.qcow2') ? 'qcow2' : 'raw')
  return FILE_FEATURES[family][feature][state]?.includes(format) ?? false
}
