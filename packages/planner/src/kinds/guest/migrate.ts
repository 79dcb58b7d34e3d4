/**
 * Moving a guest to its `spec.node`: one `migrate` action, or why PVE would refuse it (a blocked object in diff,
 * never a failed action in apply). What PVE refuses is learnt from its precondition check, read at observe time
 * (qemu-server / pve-container migrate_vm_precondition), and from the live storages:
 *   - qemu-server PVE::QemuMigrate::Helpers::check_local_resources: a device bound to the node (a raw hostpci,
 *     usb, serial, ...) refuses unless root@pam forces it; a mapped device refuses a live migration;
 *   - `not_allowed_nodes` (check_local_storage_availability): a storage the target lacks;
 *   - PVE::QemuMigrate scan_local_volumes: a local ISO in a CD drive;
 *   - PVE::LXC::Migrate prepare: a local bind or device mount point that is not `shared`;
 *   - PVE::AbstractMigrate / check_storage_availability: each local volume's target storage must exist on the
 *     target with the guest content type; a target node that is offline.
 * The disruption class is PVE's: a running VM migrates online (`hotplug`: a switch-over, no restart), a running
 * container restart-migrates (`reboot`: pve-container shuts it down and starts it on the target), a stopped
 * guest moves offline (`none`). Pure.
 */
import type { GuestType, MigratePrecondition } from '@proxops/pve-client/wire'
import type { LiveGuest, LiveStorage, MigrationCheck } from '../../inventory.js'
import type { Draft } from '../../kit/draft.js'
import type { DisruptionClass, DisruptionPolicy, FieldDiff, PlanParamValue } from '../../plan-types.js'
import { allowed } from './disruption.js'
import type { Owned } from './fields.js'
import { parsePS } from './fields.js'

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
  base: Pick<Draft, 'resource' | 'address' | 'kind' | 'name' | 'node' | 'vmid' | 'tier' | 'level'>
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
  if (i.targetDown) return { refused: [`target node ${target} is offline or unknown`] }
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
  if (known) refused.push(...preconditionRefusals(known, target, running))
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
        `${v.key} (${v.volid}): storage '${to}' ${there ? `does not take ${content} on` : 'is not available on'} node '${target}'`,
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
        message: `moving the running guest from ${g.node} to ${target} is a ${how} migration (${disruption}) and disruption is ${i.policy}; not moved this cycle`,
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
  const disks =
    moves.length === 0
      ? 'no local disks'
      : `local disks ${moves.map((m) => `${m.key} ${m.from} -> ${m.to}`).join(', ')}`
  return {
    draft: {
      ...base,
      type: 'migrate',
      reason: `${base.resource}: on node ${g.node}, declared on ${target}; ${how} migration to ${target} (${disks}); its other changes are planned once it is there`,
      diffs,
      disruption,
      requests: [{ call: 'migrate', node: g.node, guest: type, vmid: g.vmid, target, params }],
      digest: g.digest,
    },
  }
}

/** What the precondition check says PVE refuses for this target. */
function preconditionRefusals(pre: MigratePrecondition, target: string, running: boolean): string[] {
  const out: string[] = []
  const mapped = new Set(pre.mappedResources)
  const local = pre.localResources.filter((r) => !mapped.has(r))
  if (local.length > 0)
    out.push(`local device ${local.join(', ')} is bound to this node (PVE refuses it unless root@pam forces the move)`)
  if (running && mapped.size > 0) out.push(`mapped device ${[...mapped].join(', ')} cannot move while the VM runs`)
  for (const reason of pre.notAllowed[target] ?? []) out.push(`node ${target}: ${reason}`)
  for (const d of pre.localDisks)
    if (d.cdrom) out.push(`${d.drive ?? 'a CD drive'} holds the local ISO ${d.volid}, which PVE does not migrate`)
  return out
}

interface LocalVolume {
  key: string
  volid: string
  storage: string
}

const storageOf = (volid: string): string => volid.slice(0, volid.indexOf(':'))

/** qemu: the local volumes PVE's check lists (check_vm_disks_local), CD images aside (refused above) */
function qemuLocalVolumes(pre: MigratePrecondition | undefined): LocalVolume[] {
  if (!pre) return []
  return pre.localDisks
    .filter((d) => !d.cdrom && d.volid.includes(':'))
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
