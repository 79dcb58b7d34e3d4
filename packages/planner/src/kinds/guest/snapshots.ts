/**
 * Safety snapshots (docs/safety.md, "Safety snapshots"): which guests take one, which of their actions wait for
 * it, and whether PVE can snapshot the guest's volumes at all, decided from what the plan already reads (the
 * live config's volume ids and the storage types of `/nodes/{node}/storage`); and for the executor (run.ts), the
 * names and the mark a safety snapshot carries and which of a guest's snapshots are this entry's. Pure.
 */
import { DEFAULT_SAFETY_SNAPSHOT_KEEP, SAFETY_SNAPSHOTS, type Manifest } from '@proxops/schema'
import type { GuestType, SnapshotInfo } from '@proxops/pve-client/wire'
import { commentWord } from '../../kit/ownership.js'
import type { Policy } from '../../plan-types.js'
import type { Draft } from '../../kit/draft.js'
import { parsePS } from './fields.js'
import { volumeKindOf } from './volumes.js'

/** How many safety snapshots the guest keeps, or undefined when it takes none (annotation over cluster policy). */
export function safetySnapshotKeep(m: Manifest, policy: Policy): number | undefined {
  const a = m.metadata.annotations?.[SAFETY_SNAPSHOTS]?.trim()
  if (a === 'false') return undefined
  if (a === 'true') return policy.safetySnapshots?.keep ?? DEFAULT_SAFETY_SNAPSHOT_KEEP
  return policy.safetySnapshots?.keep
}

/**
 * The actions a safety snapshot goes before: a config change that needs a restart or a stop (applied now, or
 * written pending), a restart that applies pending changes, a disk resize. Power changes the manifest asks for
 * change no data and take none; a template conversion takes none either (see {@link takesSnapshots}).
 */
export function isSnapshotTrigger(d: Pick<Draft, 'type' | 'disruption' | 'requests'>): boolean {
  // a slot rewritten and grown in one action carries its resize first
  if (d.requests.some((r) => r.call === 'resizeDisk')) return true
  switch (d.type) {
    case 'shutdown-then-update':
    case 'restart':
    case 'resize':
      return true
    case 'update':
      return d.disruption === 'reboot' || d.disruption === 'stop'
    default:
      return false
  }
}

/**
 * A disk move that shuts the guest down (a running container): as disruptive as a trigger, it is dropped with them
 * where the guest cannot be snapshotted, but it never takes a snapshot itself (PVE frees a moved volume only while no
 * snapshot names it: the moves run before the snapshot).
 */
export function isStoppingMove(d: Pick<Draft, 'type' | 'disruption'>): boolean {
  return d.type === 'move-disk' && d.disruption === 'stop'
}

/**
 * PVE converts no guest that has snapshots to a template (qemu-server's and pve-container's `template` API:
 * "unable to create template, because VM contains snapshots"), and snapshots no template
 * (PVE::AbstractConfig::__snapshot_prepare): a guest that is or becomes a template this cycle takes none.
 */
export function takesSnapshots(isTemplate: boolean, drafts: readonly Pick<Draft, 'type'>[]): boolean {
  return !isTemplate && !drafts.some((d) => d.type === 'mark-template')
}

/** Why a volume cannot be snapshotted, for the anomaly. */
export interface SnapshotProblem {
  key: string
  volume: string
  reason: string
}

const DIR_LIKE = new Set(['dir', 'nfs', 'cifs', 'glusterfs', 'lvm'])
const EVERY_CURRENT_VOLUME = new Set(['lvmthin', 'zfspool', 'rbd', 'zfs'])
const NEVER = new Set(['iscsi', 'iscsidirect'])

/**
 * PVE::Storage::volume_has_feature('snapshot') as far as the plan can tell it, per storage plugin: dir-like
 * storages (Plugin.pm, and LVMPlugin's volume chains) snapshot qcow2 volumes only; lvmthin, zfspool, rbd and
 * ZFS over iSCSI every volume but a template's base volume (the last part of the volume name, as each
 * plugin's parse_volname reads it); iSCSI LUNs none. Another storage type, or a storage this cycle did not
 * list, is left to PVE (undefined: the snapshot is planned and PVE's answer decides).
 */
export function volumeProblem(volid: string, storageType: (storage: string) => string | undefined): string | undefined {
  const colon = volid.indexOf(':')
  if (colon <= 0) return 'not a storage volume (a path or device)'
  const storage = volid.slice(0, colon)
  const volname = volid.slice(colon + 1)
  const type = storageType(storage)
  if (type === undefined) return undefined
  const last = volname.split('/').pop() ?? ''
  if (NEVER.has(type)) return `${type} storage ${storage} has no snapshots`
  if (EVERY_CURRENT_VOLUME.has(type) || DIR_LIKE.has(type)) {
    if (/^base(vol)?-/.test(last)) return `a template's base volume on ${type} storage ${storage}`
    if (DIR_LIKE.has(type) && !last.endsWith('.qcow2'))
      return `${type} storage ${storage} snapshots qcow2 volumes only (this one is ${last.includes('.') ? last.slice(last.lastIndexOf('.') + 1) : 'raw'})`
  }
  return undefined
}

/**
 * has_feature('snapshot', $conf) of qemu-server's QemuConfig and pve-container's LXC::Config: every volume of
 * the current config must support it, CD-ROM drives (and the cloud-init drive, a CD-ROM) aside. The first
 * volume that cannot, in key order.
 */
export function snapshotProblem(
  type: GuestType,
  config: Readonly<Record<string, string>>,
  storageType: (storage: string) => string | undefined,
): SnapshotProblem | undefined {
  for (const key of Object.keys(config).sort()) {
    const value = config[key] as string
    const kind = volumeKindOf(type, key, value)
    if (kind === undefined) continue
    const p = parsePS(value, kind.head)
    if (p?.media === 'cdrom') continue
    const volume = p?.[kind.head] ?? value.split(',')[0] ?? ''
    const reason = volumeProblem(volume, storageType)
    if (reason !== undefined) return { key, volume, reason }
  }
  return undefined
}

/** `proxops-20261201T193000Z`: the UTC time, a valid PVE snapshot name (pve-configid, at most 40 characters) */
export function safetySnapshotName(ms: number): string {
  return `proxops-${new Date(ms)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/[-:]/g, '')}`
}

/** the names this executor gives (a `-<n>` suffix when a name of the same second is taken) */
export const SAFETY_SNAPSHOT = /^proxops-\d{8}T\d{6}Z(?:-\d+)?$/

/** The description a safety snapshot gets: this entry's mark first (kit/ownership.ts commentMarker), then why. */
export const safetySnapshotDescription = (mark: string): string =>
  `${mark} safety snapshot taken before a disruptive change`

/**
 * The guest's snapshots this entry's safety snapshots are, by name and mark: a snapshot named like one whose
 * description does not start with `mark` (taken by hand, by another entry, or before snapshots were marked) is a
 * lookalike: never rotated, and reported.
 */
export function safetySnapshotsOf(
  snapshots: readonly SnapshotInfo[],
  mark: string,
): { ours: SnapshotInfo[]; lookalikes: SnapshotInfo[] } {
  const named = snapshots.filter((s) => SAFETY_SNAPSHOT.test(s.name))
  const marked = (s: SnapshotInfo): boolean => commentWord(s.description) === mark
  return {
    ours: named
      .filter(marked)
      .sort((a, b) => (a.snaptime ?? 0) - (b.snaptime ?? 0) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    lookalikes: named.filter((s) => !marked(s)).sort((a, b) => (a.name < b.name ? -1 : 1)),
  }
}
