/**
 * Moving a guest to its `spec.node`: one `migrate` action, or why PVE would refuse it (a blocked object in diff,
 * never a failed action in apply). What PVE refuses is learnt from its precondition check, read at observe time
 * (qemu-server / pve-container migrate_vm_precondition), and from the live storages:
 *   - qemu-server PVE::QemuMigrate::Helpers::check_local_resources: a device bound to the node (a raw hostpci,
 *     usb, serial, ...) refuses unless root@pam forces it; a mapped device refuses a live migration;
 *   - `not_allowed_nodes` (check_local_storage_availability): a storage the target lacks;
 *   - PVE::QemuMigrate scan_local_volumes: a local ISO in a CD drive (ejected first when the manifest empties the
 *     drive: one action, eject then migrate); a local disk referenced by a snapshot, which no running VM can take
 *     along (`online storage migration not possible if non-replicated snapshot exists`) and a stopped one only on
 *     zfspool, btrfs (raw) or qcow2 (`non-migratable snapshot exists`); the cloud-init drive is regenerated there;
 *   - PVE::LXC::Migrate prepare: a local bind or device mount point that is not `shared`;
 *   - PVE::AbstractMigrate / check_storage_availability: each local volume's target storage must exist on the
 *     target with the guest content type; a target node that is offline.
 * The disruption class is PVE's: a running VM migrates online (`hotplug`: a switch-over, no restart), a running
 * container restart-migrates (`reboot`: pve-container shuts it down and starts it on the target), a stopped
 * guest moves offline (`none`). Every refusal says what to change. ProxOps deletes no snapshot to make a move
 * possible, its own safety snapshots included (docs/safety.md, "Migration"). Pure.
 */
import type { GuestType, LocalDisk, MigratePrecondition } from '@proxops/pve-client/wire'
import type { LiveGuest, LiveStorage, MigrationCheck } from '../../inventory.js'
import type { Draft, DraftBase } from '../../kit/draft.js'
import type { DisruptionClass, DisruptionPolicy, FieldDiff, PlanParamValue, PveRequest } from '../../plan-types.js'
import { allowed } from './disruption.js'
import type { Owned } from './fields.js'
import { parsePS } from './fields.js'
import { DISRUPTION_OVERRIDE } from '../../kit/guard-overrides.js'
import { SAFETY_SNAPSHOT } from './snapshots.js'

/** What planning a guest's move decided. */
export type MigrationOutcome =
  | { draft: Draft }
  /** PVE would refuse the move: one line per reason, sorted */
  | { refused: string[] }
  /** not decidable or not allowed this cycle */
  | { skip: { code: 'unknown' | 'disruption'; message: string } }

export interface MigrationInput {
  g: LiveGuest
  type: GuestType
  target: string
  base: DraftBase
  /** the manifest's owned fields: a volume slot's create form names the storage it is declared on */
  owned: readonly Owned[]
  policy: DisruptionPolicy
  storages: readonly LiveStorage[]
  check: MigrationCheck | undefined
  targetDown: boolean
}

/** One local volume and the storage it lands on. */
interface Move {
  key: string
  volid: string
  from: string
  to: string
}

export function planMigration(i: MigrationInput): MigrationOutcome {
  const { g, type, target, base } = i
  if (i.targetDown)
    return {
      refused: [
        `target node ${target} is offline or unknown: bring it back, or set spec.node to a node that is online`,
      ],
    }
  const pre = i.check?.check
  if (type === 'qemu' && pre === undefined)
    return {
      skip: {
        code: 'unknown',
        message: `PVE's migration check of vmid ${g.vmid} on ${g.node} was not read; not moved this cycle`,
      },
    }
  if (pre !== undefined && 'unreadable' in pre)
    return {
      skip: {
        code: 'unknown',
        message: `PVE's migration check of vmid ${g.vmid} on ${g.node} could not be read (${pre.unreadable}); not moved this cycle`,
      },
    }
  const known = pre?.known
  const running = g.status === 'running'
  const refused: string[] = []
  const ejects: Eject[] = []
  if (known) {
    refused.push(...preconditionRefusals(known, target, running, g.vmid))
    for (const d of known.localDisks) {
      if (d.cdrom && !d.cloudInit) {
        const eject = cdIso(d, i.owned, target, g.vmid)
        if ('refused' in eject) refused.push(eject.refused)
        else ejects.push(eject)
      } else if (!d.cdrom) {
        const why = snapshotRefusal(d, running, i.storages, g.node, g.vmid)
        if (why !== undefined) refused.push(why)
      }
    }
  }
  const content = type === 'qemu' ? 'images' : 'rootdir'
  const volumes = type === 'qemu' ? qemuLocalVolumes(known) : lxcLocalVolumes(g, i.storages, refused)
  const moves: Move[] = []
  const map = new Map<string, string>()
  for (const v of volumes) {
    const declared = declaredStorage(i.owned, v.key)
    const to = declared ?? v.storage
    const there = i.storages.find((s) => s.node === target && s.storage === to)
    if (!there || !there.content.includes(content)) {
      refused.push(
        `${v.key} (${v.volid}): storage '${to}' ${there ? `does not take ${content} on` : 'is not available on'} node '${target}': declare the volume on a storage ${target} has, or give ${target} that storage`,
      )
      continue
    }
    const earlier = map.get(v.storage)
    // PVE's storage map maps a source storage, not a volume: two volumes of one storage go to one target
    if (earlier !== undefined && earlier !== to)
      refused.push(`${v.key}: volumes of storage '${v.storage}' cannot go to both '${earlier}' and '${to}'`)
    map.set(v.storage, to)
    moves.push({ key: v.key, volid: v.volid, from: v.storage, to })
  }
  if (refused.length > 0) return { refused: [...new Set(refused)].sort() }

  const disruption: DisruptionClass = !running ? 'none' : type === 'qemu' ? 'hotplug' : 'reboot'
  const how = !running ? 'offline' : type === 'qemu' ? 'online (live)' : 'restart (shut down, moved, started)'
  if (!allowed(disruption, i.policy))
    return {
      skip: {
        code: 'disruption',
        message: `moving the running guest from ${g.node} to ${target} is a ${how} migration (${disruption}) and disruption is ${i.policy}; not moved this cycle (${DISRUPTION_OVERRIDE})`,
      },
    }
  const storageMap = [...map]
    .filter(([from, to]) => from !== to)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([from, to]) => `${from}:${to}`)
    .join(',')
  const params: Record<string, PlanParamValue> = { target }
  if (type === 'qemu') {
    if (running) params.online = 1
    if (moves.length > 0) params['with-local-disks'] = 1
    if (storageMap !== '') params.targetstorage = storageMap
  } else {
    if (running) params.restart = 1
    if (storageMap !== '') params['target-storage'] = storageMap
  }
  const diffs: FieldDiff[] = [{ field: 'spec.node', key: 'node', before: g.node, after: target }]
  for (const m of moves) diffs.push({ field: 'spec.node', key: m.key, before: m.volid, after: `${m.to} on ${target}` })
  for (const e of ejects) diffs.push({ field: 'spec.hardware.cdrom', key: e.key, before: e.live, after: EMPTY_CD })
  const disks =
    moves.length === 0
      ? 'no local disks'
      : `local disks ${moves.map((m) => `${m.key} ${m.from} -> ${m.to}`).join(', ')}`
  const first = ejects.length === 0 ? '' : `ejects the local ISO from ${ejects.map((e) => e.key).join(', ')}, then `
  // the eject first, in the same action: PVE refuses the move while the ISO is in the drive, and a failed move
  // leaves the drive empty, as the manifest declares it
  const eject: PveRequest[] =
    ejects.length === 0
      ? []
      : [
          {
            call: 'updateConfig',
            node: g.node,
            guest: type,
            vmid: g.vmid,
            params: Object.fromEntries(ejects.map((e) => [e.key, EMPTY_CD])),
            ...(g.digest === undefined ? {} : { digest: g.digest }),
          },
        ]
  return {
    draft: {
      ...base,
      type: 'migrate',
      reason: `${base.resource}: on node ${g.node}, declared on ${target}; ${first}${how} migration to ${target} (${disks}); its other changes are planned once it is there`,
      diffs,
      disruption,
      requests: [...eject, { call: 'migrate', node: g.node, guest: type, vmid: g.vmid, target, params }],
      digest: g.digest,
    },
  }
}

/** An empty CD drive, as the manifest's `cdrom: {iso: none}` writes it. */
const EMPTY_CD = 'none,media=cdrom'

/** A CD drive to empty before the move: the manifest declares it empty. */
interface Eject {
  key: string
  /** the live value, for the diff */
  live: string
}

/**
 * A local ISO in a CD drive (scan_local_volumes: `local cdrom image`): ejected first when the manifest declares the
 * drive empty (`spec.hardware.cdrom: {iso: none}`), else the change that lets the move happen.
 */
function cdIso(d: LocalDisk, owned: readonly Owned[], target: string, vmid: number): Eject | { refused: string } {
  const held = `${d.drive ?? 'a CD drive'} holds the local ISO ${d.volid}, which PVE does not migrate`
  if (d.snapshots !== undefined && d.snapshots.length > 0)
    return {
      refused: `${held}, and snapshot ${d.snapshots.join(', ')} references it: ${deleteSnapshots(vmid, d.snapshots)}`,
    }
  if (d.drive === undefined) return { refused: `${held}: remove it from the guest's config on PVE` }
  const cd = owned.find((o) => o.key === d.drive && o.field === 'spec.hardware.cdrom')
  if (cd?.create === EMPTY_CD) return { key: d.drive, live: `${d.volid},media=cdrom` }
  const empty = `set spec.hardware.cdrom to {iso: none} in the same commit (ProxOps then ejects it before the move)`
  if (cd === undefined)
    return {
      refused: `${held}; spec.hardware.cdrom is not declared, so ProxOps leaves the drive alone: ${empty}, or eject it by hand (qm set ${vmid} --${d.drive} ${EMPTY_CD})`,
    }
  return {
    refused: `${held}: ${empty}; once the VM is on ${target}, declare the ISO again (its ISO manifest listing ${target} in spec.nodes)`,
  }
}

/**
 * A local disk referenced by a snapshot (scan_local_volumes): a running VM cannot take it along (the snapshot is
 * not replicated: ProxOps sets up no replication), a stopped one only where the storage moves snapshots with the
 * volume (zfspool, btrfs with raw, qcow2 files).
 */
function snapshotRefusal(
  d: LocalDisk,
  running: boolean,
  storages: readonly LiveStorage[],
  node: string,
  vmid: number,
): string | undefined {
  const snaps = d.snapshots ?? []
  // a snapshot's saved RAM (`vmstate`) is moved as it is
  if (snaps.length === 0 || /^[^:]+:(?:.*\/)?vm-\d+-state-/.test(d.volid)) return undefined
  const type = storages.find((s) => s.node === node && s.storage === storageOf(d.volid))?.type
  const offline = type === 'zfspool' || (type === 'btrfs' && d.volid.endsWith('.raw')) || d.volid.endsWith('.qcow2')
  if (!running && offline) return undefined
  const which = `${d.drive ?? d.volid} (${d.volid}) is referenced by snapshot ${snaps.map(labelSnapshot).join(', ')}`
  if (running)
    return `${which}, and PVE cannot migrate a local disk with a snapshot while the VM runs: ${deleteSnapshots(vmid, snaps)}${offline ? ', or stop the VM for the move (spec.state: stopped)' : ''}`
  return `${which}, and PVE moves snapshots of local disks only on zfspool, btrfs (raw) or qcow2 storage: ${deleteSnapshots(vmid, snaps)}`
}

const labelSnapshot = (name: string): string =>
  SAFETY_SNAPSHOT.test(name) ? `${name} (a ProxOps safety snapshot)` : name

/** What to run: ProxOps deletes no snapshot to make a move possible (docs/safety.md, "Migration"). */
const deleteSnapshots = (vmid: number, names: readonly string[]): string =>
  `delete ${names.length === 1 ? 'it' : 'them'} once no longer needed (${names.map((n) => `qm delsnapshot ${vmid} ${n}`).join('; ')})`

/** What the precondition check says PVE refuses for this target (devices and the target's own reasons). */
function preconditionRefusals(pre: MigratePrecondition, target: string, running: boolean, vmid: number): string[] {
  const out: string[] = []
  const mapped = new Set(pre.mappedResources)
  const local = pre.localResources.filter((r) => !mapped.has(r))
  if (local.length > 0)
    out.push(
      `local device ${local.join(', ')} is bound to this node (PVE refuses it unless root@pam forces the move): remove it from the manifest and from the VM first (qm set ${vmid} --delete ${local.join(',')}), or move the VM by hand as root@pam (qm migrate ${vmid} ${target} --force)`,
    )
  if (running && mapped.size > 0)
    out.push(
      `mapped device ${[...mapped].join(', ')} cannot move while the VM runs: stop the VM for the move (spec.state: stopped)`,
    )
  for (const reason of pre.notAllowed[target] ?? [])
    out.push(`node ${target}: ${reason} (PVE's check): change that on ${target}, or set spec.node to another node`)
  return out
}

interface LocalVolume {
  key: string
  volid: string
  storage: string
}

const storageOf = (volid: string): string => volid.slice(0, volid.indexOf(':'))

/**
 * qemu: the local volumes PVE's check lists (check_vm_disks_local) that move with the VM: disks and the cloud-init
 * drive (copied, `generated`); ISOs aside (above)
 */
function qemuLocalVolumes(pre: MigratePrecondition | undefined): LocalVolume[] {
  if (!pre) return []
  return pre.localDisks
    .filter((d) => (!d.cdrom || d.cloudInit === true) && d.volid.includes(':'))
    .map((d) => ({ key: d.drive ?? d.volid, volid: d.volid, storage: storageOf(d.volid) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}

/**
 * lxc: the root filesystem and mount points on a storage that is not shared (PVE::LXC::Migrate phase1 copies
 * them); a bind or device mount point not marked `shared` cannot move (prepare refuses it).
 */
function lxcLocalVolumes(g: LiveGuest, storages: readonly LiveStorage[], refused: string[]): LocalVolume[] {
  const out: LocalVolume[] = []
  for (const key of Object.keys(g.config).sort()) {
    if (key !== 'rootfs' && !/^mp\d+$/.test(key)) continue
    const ps = parsePS(g.config[key] as string, key === 'rootfs' ? 'volume' : 'volume')
    const volume = ps?.volume ?? ''
    if (volume.startsWith('/')) {
      if (ps?.shared !== '1')
        refused.push(
          `${key} is a local ${volume.startsWith('/dev/') ? 'device' : 'bind'} mount (${volume}) that is not marked shared`,
        )
      continue
    }
    if (!volume.includes(':')) continue
    const storage = storageOf(volume)
    const here = storages.find((s) => s.node === g.node && s.storage === storage)
    if (here?.shared) continue
    out.push({ key, volid: volume, storage })
  }
  return out
}

/** the storage a volume slot is declared on: the `<storage>:` of its create form, when the manifest owns it */
function declaredStorage(owned: readonly Owned[], key: string): string | undefined {
  const o = owned.find((x) => x.key === key)
  if (!o || typeof o.create !== 'string') return undefined
  const m = /^([^:,=/]+):/.exec(o.create)
  return m?.[1]
}
