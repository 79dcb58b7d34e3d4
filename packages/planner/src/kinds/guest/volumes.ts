/**
 * The volume slots of both guest kinds (VM disks, the EFI disk, the TPM state, a container's root filesystem,
 * mount points and bind mounts), each kind declared once (`VolumeKind`: the key holding the volume, its option
 * tokens, the tokens PVE sets itself, whether it has a size of the manifest's) for create, compare and adopt.
 *
 * Data-loss guards: a slot that holds a live volume is never written in its create form (`local-lvm:32` would
 * allocate a new volume and orphan the old one): a pool change is a disk move where PVE has one (VM disks, the EFI
 * disk, a container's root filesystem and mount points), else an anomaly; shrinks are anomalies, growth is a
 * resize, option changes are live-form rewrites that keep PVE's volume id.
 */
import { formatSize, parseSize } from '@proxops/pve-client/wire'
import { formatGiB, formatQuantity, type ContainerManifest, type VmDisk, type VmHardware } from '@proxops/schema'
import { anomaly, NONE, parsePS, rewrite, scalar, withTokens, write, type Outcome, type Owned } from './fields.js'
import type { GapSink } from './table.js'
import { adoptTokens, changedTokens, createTokens, fieldOf, tokenDiffers, type SlotToken } from './tokens.js'

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

/** A PVE size (`32G`, `528K`, bare bytes) as bytes, through pve-client's parser; undefined when it is not one. */
export function sizeBytes(size: string | undefined): number | undefined {
  if (size === undefined) return undefined
  try {
    return parseSize(size)
  } catch {
    return undefined
  }
}

/** The size PVE reports: the `size=` token, or a bare create form `local-lvm:8` (GiB). */
export function liveSizeBytes(volume: string, sizeToken: string | undefined): number | undefined {
  if (sizeToken !== undefined) return sizeBytes(sizeToken)
  const rest = volume.slice(volume.indexOf(':') + 1)
  if (/^\d+(\.\d+)?$/.test(rest)) return Math.round(Number(rest) * 1024 ** 3)
  return undefined
}

/** A create form's head (`local-lvm:8`): PVE has not allocated the volume (a create form read back, a test model). */
export const isBareForm = (volume: string): boolean => /^[^:/]+:\d+(\.\d+)?$/.test(volume)

/**
 * Compares a live volume with the desired pool and size. Returns a move to the desired pool (a `movable` slot
 * holding a volume PVE allocated), anomalies (another pool where no move is possible, shrink, a bare form of
 * another size) or a grow-only resize; [] when pool and size agree (or a size is unknown). A moved volume keeps
 * its size: a resize, if any, follows the move.
 */
export function guardVolume(
  slot: string,
  field: string,
  volume: string,
  sizeToken: string | undefined,
  storage: string,
  desiredBytes: number | undefined,
  canResize: boolean,
  movable = false,
): Outcome[] {
  const pool = poolOf(volume)
  if (pool !== storage) {
    if (!movable || pool === undefined || isBareForm(volume)) {
      return [
        anomaly(
          'volume-pool',
          `${slot} holds volume ${volume} on storage ${pool ?? '(path)'} but ${field} wants storage ${storage}; proxops will not recreate a live volume, and PVE moves no such volume to another storage (move it by hand, then re-run)`,
        ),
      ]
    }
    return [
      { t: 'move', volume, from: pool, storage },
      ...guardSize(slot, field, volume, sizeToken, desiredBytes, canResize),
    ]
  }
  return guardSize(slot, field, volume, sizeToken, desiredBytes, canResize)
}

/** the size half of guardVolume: a shrink or a bare form of another size is an anomaly, growth a resize */
function guardSize(
  slot: string,
  field: string,
  volume: string,
  sizeToken: string | undefined,
  desiredBytes: number | undefined,
  canResize: boolean,
): Outcome[] {
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

/** A VM's TPM state tokens, after the volume: the version is chosen at creation only. */
export const TPM_TOKENS: readonly SlotToken[] = [
  {
    token: 'version',
    field: 'version',
    codec: 'choice',
    choices: { 'v1.2': 'v1.2', 'v2.0': 'v2.0' },
    // qemu-server's default (v1.2) is not what ProxOps creates (v2.0): adopt writes it out
    liveDefault: 'v1.2',
    adoptDefault: true,
    createDefault: () => 'v2.0',
    createOnly: 'a TPM version',
  },
]

/** One kind of volume slot, declared once. */
export interface VolumeKind {
  /** what messages and adopt's gaps call it */
  what: string
  /** the property-string key that holds the volume: qemu-server's `file`, pve-container's `volume` */
  head: 'file' | 'volume'
  /**
   * what the volume gives the manifest entry: its `storage` (the pool, guarded), a bind mount's `host-path`,
   * or nothing (the TPM state's storage is derived, not declared)
   */
  headField?: 'storage' | 'host-path'
  /** the entry has a size of its own: compared, grown by resize, adopted (else PVE sizes the volume itself) */
  sized: boolean
  /** the entry's option tokens */
  tokens: readonly SlotToken[]
  /** tokens PVE sets itself: kept on a rewrite, neither adopted nor a gap */
  pveTokens: readonly string[]
  /** tokens printed right after the volume on a rewrite (pve-container prints `mp` first) */
  order?: readonly string[]
  /** PVE moves it to another storage (qemu-server move_vm_disk, pve-container move_volume): a pool change is a move */
  movable?: true
}

/** qemu-server's drive keys (disks, CD drives, the cloud-init drive): `ide<N>`, `sata<N>`, `scsi<N>`, `virtio<N>`. */
export const QEMU_DRIVE_KEY = /^(ide|sata|scsi|virtio)(\d+)$/

/** A VM disk (a qemu-server drive that is not a CD drive nor the cloud-init drive). */
export const DISK: VolumeKind = {
  what: 'disk',
  head: 'file',
  headField: 'storage',
  sized: true,
  tokens: DISK_TOKENS,
  pveTokens: ['size', 'media'],
  movable: true,
}
/** `efidisk0`: PVE sizes the EFI vars volume for its firmware. */
export const EFI_DISK: VolumeKind = {
  what: 'EFI disk',
  head: 'file',
  headField: 'storage',
  sized: false,
  tokens: EFI_TOKENS,
  pveTokens: ['size', 'ms-cert', 'format'],
  movable: true,
}
/** `tpmstate0`: PVE sizes it; its storage is the EFI disk's or the first disk's. */
export const TPM_STATE: VolumeKind = {
  what: 'TPM state',
  head: 'file',
  sized: false,
  tokens: TPM_TOKENS,
  pveTokens: ['size'],
}
/** A container's `rootfs` (pve-container's rootfs format; its options are not modelled). */
export const ROOT_FS: VolumeKind = {
  what: 'root filesystem',
  head: 'volume',
  headField: 'storage',
  sized: true,
  tokens: [],
  pveTokens: ['size'],
  movable: true,
}
/** `mp<N>` holding a volume on a storage. */
export const MOUNT_POINT: VolumeKind = {
  what: 'mount point',
  head: 'volume',
  headField: 'storage',
  sized: true,
  tokens: MOUNT_TOKENS,
  pveTokens: ['size'],
  order: ['mp'],
  movable: true,
}
/** `mp<N>` holding a host path. */
export const BIND_MOUNT: VolumeKind = {
  what: 'bind mount',
  head: 'volume',
  headField: 'host-path',
  sized: false,
  tokens: BIND_TOKENS,
  pveTokens: [],
  order: ['mp'],
}

/** The volume kind of a config key holding `value` (an LXC `mp<N>` is a bind mount when it holds a path). */
export function volumeKindOf(type: 'qemu' | 'lxc', key: string, value: string): VolumeKind | undefined {
  if (type === 'qemu') {
    if (key === 'efidisk0') return EFI_DISK
    if (key === 'tpmstate0') return TPM_STATE
    return QEMU_DRIVE_KEY.test(key) ? DISK : undefined
  }
  if (key === 'rootfs') return ROOT_FS
  if (!/^mp\d+$/.test(key)) return undefined
  return (parsePS(value, 'volume')?.volume ?? value).startsWith('/') ? BIND_MOUNT : MOUNT_POINT
}

/**
 * A value asking PVE to allocate a new volume in a volume slot (`local-lvm:8`, `volume=local-lvm:8`,
 * `local-lvm:0,import-from=...`, `local-lvm:cloudinit`): the executor never writes one over a live volume.
 */
export function isCreateForm(type: 'qemu' | 'lxc', key: string, value: string): boolean {
  const kind = volumeKindOf(type, key, value)
  const head = kind && parsePS(value, kind.head)?.[kind.head]
  return head !== undefined && (isBareForm(head) || /^[^:/]+:cloudinit$/.test(head))
}

/** The bytes a live volume slot reports (its `size=`), read as plan reads it; undefined when it has none. */
export function volumeBytes(type: 'qemu' | 'lxc', key: string, value: string): number | undefined {
  const kind = volumeKindOf(type, key, value)
  const p = kind && parsePS(value, kind.head)
  const volume = kind && p?.[kind.head]
  return volume === undefined ? undefined : liveSizeBytes(volume, p?.size)
}

/** Where a create form puts the volume: allocated on a storage (an image imported there), or a host path. */
export type VolumeAt = { storage: string; bytes?: number; importFrom?: string } | { hostPath: string }

/**
 * The create form of a volume slot. Its head asks PVE to allocate `<storage>:<GiB>` (qemu-server's and
 * pve-container's new-volume syntax; the `1` of an unsized kind is a placeholder, as PVE sizes an EFI disk for its
 * firmware and a TPM state itself), to import `<storage>:0,import-from=<volume>`, or names a bind mount's host
 * path; the entry's tokens follow.
 */
export function createVolume(kind: VolumeKind, at: VolumeAt, entry: object, slot: string): string {
  const head =
    'hostPath' in at
      ? at.hostPath
      : at.importFrom !== undefined
        ? `${at.storage}:0,import-from=${at.importFrom}`
        : `${at.storage}:${kind.sized ? formatGiB(at.bytes ?? 0) : '1'}`
  return withTokens(head, createTokens(kind.tokens, entry, slot))
}

export interface VolumeSlot {
  kind: VolumeKind
  /** the config key */
  slot: string
  /** the manifest path */
  field: string
  /** the manifest entry the tokens read */
  entry: object
  /** where the create form puts it; its storage is guarded (headField `storage`), its size grown */
  at: VolumeAt
  /** an anomaly when the live volume is another kind of content (a CD where a disk is declared, a path) */
  check?(volume: string, live: Readonly<Record<string, string>>): Outcome | undefined
}

/**
 * The owned key of a volume slot: an empty slot gets the create form; a live volume is checked (kind, pool,
 * size, create-only tokens) and its declared tokens rewritten in the live form, PVE's other tokens kept.
 */
export function volumeOwned(v: VolumeSlot): Owned {
  const { kind, slot, field, at } = v
  const create = createVolume(kind, at, v.entry, slot)
  // an image-seeded disk takes the image's size: the pool only is compared
  const bytes = 'storage' in at && kind.sized && at.importFrom === undefined ? at.bytes : undefined
  const storage = 'storage' in at && kind.headField === 'storage' ? at.storage : undefined
  return {
    key: slot,
    field,
    create,
    ...(kind.headField === 'host-path' ? {} : { volume: true }),
    compare: (live) => {
      if (isEmptySlot(live)) return [write(create, create, true)]
      const p = parsePS(live as string, kind.head)
      const volume = p?.[kind.head]
      if (!p || volume === undefined) return [anomaly('invalid-live', `${slot}: cannot read PVE's value`)]
      const wrong = v.check?.(volume, p)
      if (wrong) return [wrong]
      const out: Outcome[] =
        storage === undefined
          ? []
          : guardVolume(slot, field, volume, p.size, storage, bytes, kind.sized, kind.movable === true)
      if (out.some((o) => o.t === 'anomaly')) return out
      for (const t of kind.tokens) {
        if (t.createOnly === undefined || !tokenDiffers(t, v.entry, p)) continue
        const now = p[t.token] ?? t.liveDefault
        return [
          anomaly(
            'create-only-option',
            `${slot} is ${now} on PVE but ${field}.${t.field} is ${String(fieldOf(v.entry, t.field))}; PVE cannot change ${t.createOnly} after creation (recreate required)`,
          ),
        ]
      }
      const changes = changedTokens(kind.tokens, v.entry, p)
      if (Object.keys(changes).length > 0) out.unshift(write(rewrite(p, changes, kind.head, kind.order)))
      return out.length > 0 ? out : NONE
    },
  }
}

/**
 * adopt: a live volume slot as the manifest entry plan() would compare equal (storage or host path, size,
 * tokens); tokens nobody declares are gaps. `missingSize` is set when a sized kind reports no whole-MiB size;
 * undefined when the value cannot be read (a gap).
 */
export function adoptVolume(
  kind: VolumeKind,
  slot: string,
  value: string,
  gap: GapSink,
): { entry: Record<string, unknown>; missingSize?: string } | undefined {
  const p = parsePS(value, kind.head)
  const volume = p?.[kind.head]
  if (!p || volume === undefined) {
    gap(slot, value, `${kind.what} not readable (PVE's property-string grammar)`)
    return undefined
  }
  const entry: Record<string, unknown> = {}
  if (kind.headField === 'storage') {
    const storage = poolOf(volume)
    // not a volume on a storage (a host device, a path): kept as it is, so the schema's storage check names it
    entry.storage = storage ?? volume
    if (storage === undefined) gap(slot, value, `${kind.what} is not a volume on a storage: not modelled`)
  } else if (kind.headField === 'host-path') entry['host-path'] = volume
  let missingSize: string | undefined
  if (kind.sized) {
    const bytes = sizeBytes(p.size)
    if (bytes !== undefined && bytes % 1024 ** 2 === 0) entry.size = formatQuantity(bytes)
    else missingSize = p.size ?? 'none'
  }
  adoptTokens(kind.tokens, p, entry, slot, gap, kind.what, [kind.head, ...kind.pveTokens])
  return missingSize === undefined ? { entry } : { entry, missingSize }
}

/**
 * The disks of a VM: each `spec.disks[]` entry on its interface, and the SCSI controller (`scsihw`) that the
 * first entry declaring one carries. `image` is the volume id of a DiskImage (undefined when not declared).
 */
export function qemuDisksOwned(disks: readonly VmDisk[], image: (name: string) => string | undefined): Owned[] {
  const owned: Owned[] = []
  const controller = disks.find((d) => d.controller !== undefined)?.controller
  if (controller !== undefined) owned.push(scalar('scsihw', 'spec.disks[].controller', controller))
  disks.forEach((d, i) => {
    const slot = d.interface
    const field = `spec.disks[${i}]`
    const importFrom = d.image === undefined ? undefined : (image(d.image) ?? `${d.storage}:import/${d.image}`)
    owned.push(
      volumeOwned({
        kind: DISK,
        slot,
        field,
        entry: d,
        at: {
          storage: d.storage,
          ...(d.size === undefined ? {} : { bytes: d.size }),
          ...(importFrom === undefined ? {} : { importFrom }),
        },
        check: (_volume, p) =>
          p.media === 'cdrom'
            ? anomaly(
                'volume-kind',
                `${slot} holds a CD/DVD drive on PVE but ${field} declares a disk; proxops will not replace it`,
              )
            : undefined,
      }),
    )
  })
  return owned
}

/**
 * A VM's EFI disk and TPM state. The TPM state has no storage of its own in the manifest: the EFI disk's, else
 * the first disk's, else the cloud-init drive's (a gap when not the EFI disk's, and when there is none).
 */
export function firmwareVolumesOwned(
  hw: Partial<VmHardware>,
  disks: readonly VmDisk[],
  cloudInitStorage: string | undefined,
  gaps: { field: string; note: string }[],
): Owned[] {
  const owned: Owned[] = []
  const efi = hw['efi-disk']
  if (efi !== undefined)
    owned.push(
      volumeOwned({
        kind: EFI_DISK,
        slot: 'efidisk0',
        field: 'spec.hardware.efi-disk',
        entry: efi,
        at: { storage: efi.storage },
      }),
    )
  const tpm = hw.tpm
  if (tpm === undefined) return owned
  const storage = efi?.storage ?? disks[0]?.storage ?? cloudInitStorage
  if (storage === undefined) {
    gaps.push({
      field: 'spec.hardware.tpm',
      note: 'no storage to allocate the TPM state on (no EFI disk or disk declared); not written',
    })
    return owned
  }
  if (efi === undefined) {
    const whose = disks[0] !== undefined ? "the first disk's storage" : "the cloud-init drive's storage"
    gaps.push({ field: 'spec.hardware.tpm', note: `TPM state allocated on ${storage} (${whose})` })
  }
  owned.push(
    volumeOwned({ kind: TPM_STATE, slot: 'tpmstate0', field: 'spec.hardware.tpm', entry: tpm, at: { storage } }),
  )
  return owned
}

/** adopt: `efidisk0` and `tpmstate0` as `spec.hardware`'s `efi-disk` and `tpm`. */
export function adoptFirmwareVolumes(
  efi: string | undefined,
  tpm: string | undefined,
  gap: GapSink,
): { 'efi-disk'?: Record<string, unknown>; tpm?: Record<string, unknown> } {
  const e = efi === undefined ? undefined : adoptVolume(EFI_DISK, 'efidisk0', efi, gap)
  const t = tpm === undefined ? undefined : adoptVolume(TPM_STATE, 'tpmstate0', tpm, gap)
  return { ...(e ? { 'efi-disk': e.entry } : {}), ...(t ? { tpm: t.entry } : {}) }
}

/**
 * adopt: the disks among `keys` (drive keys that hold no CD or cloud-init drive) as `spec.disks`, in bus and
 * index order; the first SCSI disk (in key order) carries `scsihw`, which is a gap without one.
 */
export function adoptQemuDisks(
  config: Readonly<Record<string, string>>,
  keys: readonly string[],
  scsihw: string | undefined,
  gap: GapSink,
  incomplete: string[],
): Record<string, unknown>[] {
  const disks: { bus: number; index: number; disk: Record<string, unknown> }[] = []
  let controller = scsihw
  for (const key of keys) {
    const m = QEMU_DRIVE_KEY.exec(key)
    const value = config[key]
    if (!m || value === undefined) continue
    const adopted = adoptVolume(DISK, key, value, gap)
    if (adopted === undefined) {
      incomplete.push(`spec.disks (${key}): PVE's value is not readable; state the disk`)
      continue
    }
    if (adopted.missingSize !== undefined)
      incomplete.push(`spec.disks (${key}): PVE reports no whole-MiB size (${adopted.missingSize}); state the size`)
    const { storage, size, ...tokens } = adopted.entry
    const carries = controller !== undefined && m[1] === 'scsi'
    disks.push({
      bus: BUS_ORDER.indexOf(m[1]!),
      index: Number(m[2]),
      disk: {
        storage,
        interface: key,
        ...(size === undefined ? {} : { size }),
        ...(carries ? { controller } : {}),
        ...tokens,
      },
    })
    if (carries) controller = undefined
  }
  if (controller !== undefined) gap('scsihw', controller, 'no SCSI disk to carry the controller')
  return disks.sort((a, b) => a.bus - b.bus || a.index - b.index).map((d) => d.disk)
}

const BUS_ORDER = ['ide', 'sata', 'scsi', 'virtio']

/** A host path as pve-container compares it: without trailing slashes. */
const hostPath = (path: string): string => path.replace(/(.)\/+$/, '$1')

/** The volumes of a container: the root filesystem, the mount points and the bind mounts. */
export function lxcVolumesOwned(s: ContainerManifest['spec']): Owned[] {
  const owned: Owned[] = [
    volumeOwned({
      kind: ROOT_FS,
      slot: 'rootfs',
      field: 'spec.root',
      entry: s.root,
      at: { storage: s.root.storage, bytes: s.root.size },
    }),
  ]
  s['mount-points'].forEach((mp, i) => {
    const field = `spec.mount-points[${i}]`
    owned.push(
      volumeOwned({
        kind: MOUNT_POINT,
        slot: mp.slot,
        field,
        entry: mp,
        at: { storage: mp.storage, bytes: mp.size },
        check: (volume) =>
          volume.startsWith('/')
            ? anomaly(
                'volume-kind',
                `${mp.slot} is a bind mount of ${volume} on PVE but ${field} declares an allocated volume; proxops will not replace it`,
              )
            : undefined,
      }),
    )
  })
  s['bind-mounts'].forEach((b, i) => {
    const field = `spec.bind-mounts[${i}]`
    const host = hostPath(b['host-path'])
    owned.push(
      volumeOwned({
        kind: BIND_MOUNT,
        slot: b.slot,
        field,
        entry: b,
        at: { hostPath: host },
        check: (volume) => {
          if (!volume.startsWith('/'))
            return anomaly(
              'volume-kind',
              `${b.slot} holds volume ${volume} on PVE but ${field} declares a bind mount; proxops will not replace it`,
            )
          if (hostPath(volume) !== host)
            return anomaly(
              'bind-path',
              `${b.slot} binds ${volume} on PVE but ${field} wants ${host}; proxops never re-points a bind mount (change it by hand)`,
            )
          return undefined
        },
      }),
    )
  })
  return owned
}

/**
 * adopt: a container's `rootfs` and `mp<N>` keys (`mountKeys`, in slot order) as `spec.root`, `spec.mount-points`
 * and `spec.bind-mounts`; what PVE does not say (an unreadable value, no size) is an INCOMPLETE reason.
 */
export function adoptLxcVolumes(
  config: Readonly<Record<string, string>>,
  mountKeys: readonly string[],
  gap: GapSink,
  incomplete: string[],
): { root?: Record<string, unknown>; mountPoints: Record<string, unknown>[]; bindMounts: Record<string, unknown>[] } {
  const rootfs = config.rootfs
  const root = rootfs === undefined ? undefined : adoptVolume(ROOT_FS, 'rootfs', rootfs, gap)
  if (root === undefined) incomplete.push('spec.root: the container has no readable rootfs')
  else if (root.missingSize !== undefined)
    incomplete.push(`spec.root.size: PVE reports no whole-MiB size (${root.missingSize}); state it`)
  const mountPoints: Record<string, unknown>[] = []
  const bindMounts: Record<string, unknown>[] = []
  for (const key of mountKeys) {
    const value = config[key]
    const kind = value === undefined ? undefined : volumeKindOf('lxc', key, value)
    if (kind === undefined) continue
    const adopted = adoptVolume(kind, key, value!, gap)
    if (adopted === undefined) {
      incomplete.push(`spec.mount-points (${key}): PVE's value is not readable; state it`)
      continue
    }
    if (adopted.missingSize !== undefined)
      incomplete.push(`spec.mount-points (${key}): PVE reports no whole-MiB size (${adopted.missingSize}); state it`)
    adopted.entry.slot = key
    ;(kind === BIND_MOUNT ? bindMounts : mountPoints).push(adopted.entry)
  }
  return { ...(root === undefined ? {} : { root: root.entry }), mountPoints, bindMounts }
}
