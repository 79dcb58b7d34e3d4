/**
 * Data-loss guards for volume-bearing slots (VM disks, EFI/TPM, LXC rootfs and mount points). A slot that
 * holds a live volume is never written in its create form (`local-lvm:32` would allocate a new volume and
 * orphan the old one): pool changes and shrinks are anomalies, growth is a resize, option changes are
 * live-form rewrites that keep PVE's volume id.
 */
import { formatSize, parseSize } from '@proxops/pve-client/wire'
import { anomaly, type Outcome } from './fields.js'
import type { SlotToken } from './tokens.js'

/** An empty slot: absent, empty or `none` (`none,media=cdrom` included). */
export function isEmptySlot(live: string | undefined): boolean {
  if (live === undefined) return true
  const comma = live.indexOf(',')
  const head = (comma === -1 ? live : live.slice(0, comma)).trim()
  return head === '' || head === 'none'
}

/** The storage pool of a volume id (`local-lvm:vm-100-disk-0` -> `local-lvm`); undefined for a path. */
export function poolOf(volume: string): string | undefined {
  if (volume.startsWith('/')) return undefined
  const i = volume.indexOf(':')
  return i > 0 ? volume.slice(0, i) : undefined
}

/** The size PVE reports: the `size=` token, or a bare create form `local-lvm:8` (GiB). */
export function liveSizeBytes(volume: string, sizeToken: string | undefined): number | undefined {
  if (sizeToken !== undefined) {
    try {
      return parseSize(sizeToken)
    } catch {
      return undefined
    }
  }
  const rest = volume.slice(volume.indexOf(':') + 1)
  if (/^\d+(\.\d+)?$/.test(rest)) return Math.round(Number(rest) * 1024 ** 3)
  return undefined
}

const isBareForm = (volume: string): boolean => /^[^:/]+:\d+(\.\d+)?$/.test(volume)

/**
 * Compares a live volume with the desired pool and size. Returns anomalies (pool change, shrink, a bare form
 * of another size) or a grow-only resize; [] when pool and size agree (or a size is unknown).
 */
export function guardVolume(
  slot: string,
  field: string,
  volume: string,
  sizeToken: string | undefined,
  storage: string,
  desiredBytes: number | undefined,
  canResize: boolean,
): Outcome[] {
  const pool = poolOf(volume)
  if (pool !== storage) {
    return [
      anomaly(
        'volume-pool',
        `${slot} holds volume ${volume} on storage ${pool ?? '(path)'} but ${field} wants storage ${storage}; proxops will not recreate a live volume (move it with PVE's move-disk, then re-run)`,
      ),
    ]
  }
  if (desiredBytes === undefined) return []
  const live = liveSizeBytes(volume, sizeToken)
  if (live === undefined || live === desiredBytes) return []
  if (desiredBytes < live) {
    return [
      anomaly(
        'volume-shrink',
        `${slot} is ${formatSize(live)} on PVE but ${field} asks for ${formatSize(desiredBytes)}; shrinking is not supported: proxops will not write it (grow the manifest size or recreate the volume by hand)`,
      ),
    ]
  }
  if (!canResize || isBareForm(volume)) {
    return [
      anomaly(
        'volume-shrink',
        `${slot} is ${formatSize(live)} on PVE but ${field} asks for ${formatSize(desiredBytes)}; proxops will not resize this slot`,
      ),
    ]
  }
  return [{ t: 'resize', size: formatSize(desiredBytes), after: formatSize(desiredBytes) }]
}

/** A VM disk's option tokens (qemu-server's drive options), after the volume. */
export const DISK_TOKENS: readonly SlotToken[] = [
  { token: 'iothread', field: 'iothread', codec: 'present' },
  { token: 'discard', field: 'discard', codec: 'string', liveDefault: 'ignore' },
  { token: 'ssd', field: 'ssd', codec: 'bit' },
  { token: 'aio', field: 'aio', codec: 'string' },
]

/** A container mount point's tokens (pve-container's mount point format), after the volume. */
export const MOUNT_TOKENS: readonly SlotToken[] = [
  { token: 'mp', field: 'mount-point', codec: 'string', createDefault: (slot) => `/mnt/${slot}` },
  { token: 'ro', field: 'options.read-only', codec: 'bit' },
  { token: 'backup', field: 'options.backup', codec: 'bit', liveDefault: '1' },
  { token: 'acl', field: 'options.acl', codec: 'bit' },
  { token: 'quota', field: 'options.quota', codec: 'bit' },
  { token: 'shared', field: 'options.shared', codec: 'bit' },
  { token: 'mountoptions', field: 'options.mount-options', codec: 'string' },
]

/** A container bind mount's tokens, after the host path. */
export const BIND_TOKENS: readonly SlotToken[] = [
  { token: 'mp', field: 'mount-point', codec: 'string' },
  { token: 'ro', field: 'read-only', codec: 'bit' },
]

/** A VM's EFI disk tokens, after the volume (`ms-cert`, `size` and the others are PVE's, kept). */
export const EFI_TOKENS: readonly SlotToken[] = [
  { token: 'efitype', field: 'template', codec: 'string' },
  {
    token: 'pre-enrolled-keys',
    field: 'secure-boot',
    codec: 'choice',
    choices: { enabled: '1', disabled: '0' },
    liveDefault: '0',
  },
]

/** A VM's PCI passthrough tokens, after the host device (`x-vga`, `rombar`, `mdev` are PVE's, kept). */
export const PCI_TOKENS: readonly SlotToken[] = [{ token: 'pcie', field: 'pcie', codec: 'bit' }]
