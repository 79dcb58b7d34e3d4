import type { Cluster, Guest, NodeState } from './cluster.js'
import { isCloudinitVolid, driveVolid, nextUnused, volumeKindOf } from './disks.js'
import { fail500 } from './errors.js'
import { flag } from './guestconf.js'
import { isQemuDiskKey, typedValue, type GuestType } from './options.js'
import { FORMATS, parsePropString } from './propstring.js'
import { parseDiskSize, MiB } from './sizes.js'
import { splitVolid } from './storage.js'
import { volumeHasFeature } from './volume-features.js'
import type { SnapshotCall, TypedGuestCall } from './guest-call.js'

/**
 * Guest snapshots, as pve-guest-common's PVE::AbstractConfig does them (`snapshot_create`, `snapshot_rollback`,
 * `snapshot_delete`) behind qemu-server's and pve-container's snapshot API handlers. A snapshot is a `[name]`
 * section of the config file (so it changes the digest); the current config names the latest one in `parent`.
 */

const TASK = {
  qemu: { create: 'qmsnapshot', rollback: 'qmrollback', delete: 'qmdelsnapshot' },
  lxc: { create: 'vzsnapshot', rollback: 'vzrollback', delete: 'vzdelsnapshot' },
} as const

/** __snapshot_copy_config: what a snapshot keeps of the config it copies */
function copyConfig(source: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(source)) {
    if (['snapstate', 'snaptime', 'vmstate', 'lock', 'digest', 'description'].includes(k) || /^unused\d+$/.test(k))
      continue
    out[k] = v
  }
  return out
}

/** foreach_volume: the volume keys of a config (qemu drives, efidisk, tpmstate; lxc rootfs and mount points) */
function volumeEntries(
  type: GuestType,
  conf: Record<string, string>,
): { key: string; value: string; cdrom: boolean }[] {
  const out: { key: string; value: string; cdrom: boolean }[] = []
  for (const key of Object.keys(conf).sort()) {
    const isVol =
      type === 'qemu'
        ? isQemuDiskKey(key) || key === 'efidisk0' || key === 'tpmstate0'
        : key === 'rootfs' || /^mp\d+$/.test(key)
    if (!isVol) continue
    const value = conf[key] as string
    out.push({ key, value, cdrom: type === 'qemu' && value.split(',').includes('media=cdrom') })
  }
  return out
}

/** has_feature('snapshot', $conf): every volume (cdroms aside) must support snapshots */
function hasSnapshotFeature(node: NodeState, g: Guest, conf: Record<string, string>): boolean {
  for (const v of volumeEntries(g.type, conf)) {
    if (v.cdrom) continue
    const volid = driveVolid(v.value, volumeKindOf(v.key, g.type === 'lxc'))
    // an lxc mount point that is not a storage volume (bind or device mount) has no snapshot feature
    if (!volumeHasFeature(node, 'snapshot', volid)) return false
  }
  return true
}

function snapshotsOf(g: Guest): string[] {
  return g.conf.snapshotNames()
}

/** GET .../snapshot: one item per snapshot plus `current` ("You are here!"), as the API handlers build it */
export function snapshotList(c: Cluster, nodeName: string, type: GuestType, vmid: number): Record<string, unknown>[] {
  c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, type, vmid)
  const out: Record<string, unknown>[] = []
  for (const name of snapshotsOf(g)) {
    const d = g.conf.snapshot(name) as Record<string, string>
    const item: Record<string, unknown> = { name, snaptime: Number(d.snaptime ?? 0), description: d.description ?? '' }
    if (type === 'qemu') item.vmstate = d.vmstate ? 1 : 0
    if (d.parent) item.parent = d.parent
    // both snapshot_list handlers (qemu-server, pve-container) show a snapshot still being made or deleted
    if (d.snapstate) item.snapstate = d.snapstate
    out.push(item)
  }
  const current: Record<string, unknown> = {
    name: 'current',
    digest: g.conf.digest(),
    running: g.status === 'running' ? 1 : 0,
    description: 'You are here!',
  }
  const parent = g.conf.get('parent')
  if (parent) current.parent = parent
  out.push(current)
  return out
}

/** a snapshot section as load_config parses it (check_type: snaptime is an integer) */
function typedSnapshot(type: GuestType, snap: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(snap).sort()) {
    const v = snap[k] as string
    out[k] = k === 'snaptime' ? Number(v) : k === 'cipassword' ? '**********' : typedValue(type, k, v)
  }
  return out
}

/** GET .../snapshot/{snapname}/config (get_snapshot_config) */
export function snapshotConfig(
  c: Cluster,
  nodeName: string,
  type: GuestType,
  vmid: number,
  name: string,
): Record<string, unknown> {
  c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, type, vmid)
  const snap = g.conf.snapshot(name)
  if (!snap) throw fail500(`snapshot '${name}' does not exist`)
  return typedSnapshot(type, snap)
}

/** GET .../config?snapshot=name: load_snapshot_config (the snapshot plus the file's digest) */
export function snapshotAsConfig(g: Guest, name: string): Record<string, unknown> {
  const snap = g.conf.snapshot(name)
  if (!snap) throw fail500(`snapshot '${name}' does not exist`)
  return { ...typedSnapshot(g.type, snap), digest: g.conf.digest() }
}

/** PUT .../snapshot/{snapname}/config (update_snapshot_config): the description only, synchronous */
export function snapshotUpdate(
  c: Cluster,
  nodeName: string,
  type: GuestType,
  vmid: number,
  name: string,
  params: Record<string, unknown>,
): null {
  c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, type, vmid)
  if (params.description === undefined || params.description === null) return null
  c.lockConfigSync(type, vmid)
  c.checkLock(g)
  const snap = g.conf.snapshot(name)
  if (!snap) throw fail500(`snapshot '${name}' does not exist`)
  g.conf.setSnapshot(name, { ...snap, description: String(params.description) })
  return null
}

/** POST .../snapshot (qemu `snapshot`, lxc `snapshot`): reserved names answer at once, the rest is the worker */
export const snapshotCreate: TypedGuestCall = (c, nodeName, vmid, type, params, caller) => {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, type, vmid)
  const name = String(params.snapname ?? '')
  if (name === 'current') throw fail500(`unable to use snapshot name 'current' (reserved name)`)
  if (type === 'qemu' && name.toLowerCase() === 'pending')
    throw fail500(`unable to use snapshot name 'pending' (reserved name)`)
  if (type === 'lxc' && name === 'vzdump') throw fail500(`unable to use snapshot name 'vzdump' (reserved name)`)
  // __snapshot_prepare runs first in the worker: its errors fail the task and change nothing
  const prepareError = prepareCheck(c, node, g, name)
  let prepared = false
  if (prepareError === undefined) {
    const main = g.conf.main()
    // a cycle guard of __snapshot_prepare: an older snapshot whose parent has the new name loses it
    for (const other of snapshotsOf(g)) {
      const s = g.conf.snapshot(other) as Record<string, string>
      if (s.parent === name) {
        const { parent: _dropped, ...rest } = s
        g.conf.setSnapshot(other, rest)
      }
    }
    const snap: Record<string, string> = {
      ...copyConfig(main),
      snapstate: 'prepare',
      snaptime: String(Math.floor(c.now() / 1000)),
    }
    if (typeof params.description === 'string' && params.description !== '') snap.description = params.description
    if (type === 'qemu' && flag(params.vmstate) && g.status === 'running')
      Object.assign(snap, saveVmstate(c, node, g, name))
    g.conf.set('lock', 'snapshot')
    g.conf.setSnapshot(name, snap)
    prepared = true
  }
  const cleanup = () => {
    if (!prepared) return
    // snapshot_create's cleanup: snapshot_delete with force removes the section (and a vmstate file)
    const snap = g.conf.snapshot(name)
    if (snap?.vmstate) node.storage.remove(snap.vmstate)
    g.conf.deleteSnapshot(name)
    if (g.conf.get('lock') === 'snapshot') g.conf.delete('lock')
    prepared = false
  }
  return c.dispatch(nodeName, TASK[type].create, String(vmid), caller.actor, {
    run: (ctx) => {
      if (prepareError !== undefined) throw new Error(prepareError)
      // __snapshot_commit
      if (g.conf.get('lock') !== 'snapshot') {
        cleanup()
        throw new Error('missing snapshot lock')
      }
      const snap = g.conf.snapshot(name) as Record<string, string>
      const { snapstate: _done, ...committed } = snap
      g.conf.setSnapshot(name, committed)
      g.conf.delete('lock')
      g.conf.set('parent', name)
      ctx.log(`snapshotting '${name}'`)
    },
    onError: () => cleanup(),
  })
}

function prepareCheck(c: Cluster, node: NodeState, g: Guest, name: string): string | undefined {
  const flock = c.flockError(g.type, g.vmid)
  if (flock) return flock
  if (g.conf.get('template') === '1') return `you can't take a snapshot if it's a template`
  const lock = c.lockError(g)
  if (lock) return lock
  if (g.conf.snapshot(name) !== undefined) return `snapshot name '${name}' already used`
  if (!hasSnapshotFeature(node, g, g.conf.main())) return 'snapshot feature is not available'
  return undefined
}

/** __snapshot_save_vmstate: a raw state volume of twice the memory plus 500 MiB, on find_vmstate_storage's pick */
function saveVmstate(c: Cluster, node: NodeState, g: Guest, name: string): Record<string, string> {
  const conf = g.conf.main()
  let target = conf.vmstatestorage
  if (!target) {
    let local: string | undefined
    for (const v of volumeEntries('qemu', conf)) {
      if (v.cdrom) continue
      const sid = splitVolid(driveVolid(v.value, volumeKindOf(v.key, false)) ?? '')?.[0]
      const def = sid ? node.storage.def(sid) : undefined
      if (sid && def && (local === undefined || def.type === 'dir')) local = sid
    }
    target = local ?? 'local'
  }
  const memMiB = Number(/(?:^|,)(?:current=)?(\d+)/.exec(conf.memory ?? '')?.[1] ?? 512)
  const size = (memMiB * 2 + 500) * MiB
  const file = node.storage.def(target)?.type === 'dir'
  const volid = file ? `${target}:${g.vmid}/vm-${g.vmid}-state-${name}.raw` : `${target}:vm-${g.vmid}-state-${name}`
  node.storage.add(target, {
    volid,
    content: 'images',
    format: 'raw',
    size,
    ctime: Math.floor(c.now() / 1000),
    vmid: g.vmid,
  })
  const machine = `pc-i440fx-${c.version.qemu.split('.').slice(0, 2).join('.')}+pve0`
  return {
    vmstate: volid,
    runningmachine: conf.machine ?? machine,
    runningcpu: `${conf.cpu ?? 'x86-64-v2-AES'},+kvm_pv_eoi,+kvm_pv_unhalt`,
  }
}

/** POST .../snapshot/{snapname}/rollback: snapshot_rollback in a worker, then a start when asked (or with RAM) */
export const snapshotRollback: SnapshotCall = (c, nodeName, type, vmid, name, params, caller) => {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, type, vmid)
  const start = flag(params.start)
  const prepareError = rollbackCheck(c, node, g, name)
  if (prepareError === undefined) {
    // the prepare phase stops the guest and takes `lock: rollback`
    if (g.status === 'running') c.setStatus(g, 'stopped')
    g.conf.set('lock', 'rollback')
  }
  return c.dispatch(nodeName, TASK[type].rollback, String(vmid), caller.actor, {
    run: () => {
      if (prepareError !== undefined) throw new Error(prepareError)
      const snap = g.conf.snapshot(name) as Record<string, string>
      const main = g.conf.main()
      // __snapshot_rollback_get_unused: current volumes the snapshot does not have become unusedN
      const snapVols = new Set(
        volumeEntries(type, snap)
          .filter((v) => !v.cdrom)
          .map((v) => driveVolid(v.value, volumeKindOf(v.key, type === 'lxc'))),
      )
      const keep: Record<string, string> = {}
      for (const [k, v] of Object.entries(main)) if (/^unused\d+$/.test(k) || k === 'description') keep[k] = v
      for (const v of volumeEntries(type, main)) {
        if (v.cdrom) continue
        const volid = driveVolid(v.value, volumeKindOf(v.key, type === 'lxc'))
        if (volid && !snapVols.has(volid)) addUnused(node, keep, volid)
      }
      // __snapshot_apply_config: description and unused volumes stay, the rest is the snapshot's; pending goes
      const next: Record<string, string> = { ...keep, ...copyConfig(snap), parent: name }
      delete next.lock
      let forceStart = false
      if (type === 'qemu') {
        // __snapshot_rollback_hook: a new VM generation id; a RAM snapshot resumes the VM
        if (next.vmgenid) next.vmgenid = c.rng.uuid()
        delete next.runningmachine
        delete next.runningcpu
        forceStart = snap.vmstate !== undefined
      }
      g.conf.replaceMain(next)
      // the volumes go back to the snapshot's sizes
      for (const v of volumeEntries(type, snap)) {
        if (v.cdrom) continue
        const volid = driveVolid(v.value, volumeKindOf(v.key, type === 'lxc'))
        const vol = volid ? node.storage.get(volid) : undefined
        const size = sizeOf(v.value, type)
        if (vol && size !== undefined) vol.size = size
      }
      if (forceStart || start) c.setStatus(g, 'running')
    },
    // a rollback that dies half-way leaves `lock: rollback`, as in PVE
  })
}

function rollbackCheck(c: Cluster, node: NodeState, g: Guest, name: string): string | undefined {
  const flock = c.flockError(g.type, g.vmid)
  if (flock) return flock
  if (g.conf.get('template') === '1') return `you can't rollback if vm is a template`
  const snap = g.conf.snapshot(name)
  if (!snap) return `snapshot '${name}' does not exist`
  // __snapshot_rollback_vol_possible: ZFS rolls back only to a volume's most recent snapshot
  for (const v of volumeEntries(g.type, snap)) {
    if (v.cdrom) continue
    const volid = driveVolid(v.value, volumeKindOf(v.key, g.type === 'lxc'))
    const sid = volid ? splitVolid(volid)?.[0] : undefined
    if (!volid || !sid || node.storage.def(sid)?.type !== 'zfspool') continue
    const newer = snapshotsOf(g).filter(
      (other) =>
        other !== name &&
        volumesOf(g.type, g.conf.snapshot(other) as Record<string, string>).has(volid) &&
        isNewer(g, other, name),
    )
    if (newer.length > 0) return `can't rollback, '${name}' is not most recent snapshot on '${volid}'`
  }
  if (snap.snapstate) return `unable to rollback to incomplete snapshot (snapstate = ${snap.snapstate})`
  return c.lockError(g)
}

/** snapshot order: snaptime, then the parent chain (a child is newer than its parent within one second) */
function isNewer(g: Guest, a: string, b: string): boolean {
  const sa = g.conf.snapshot(a) as Record<string, string>
  const sb = g.conf.snapshot(b) as Record<string, string>
  const ta = Number(sa.snaptime ?? 0)
  const tb = Number(sb.snaptime ?? 0)
  if (ta !== tb) return ta > tb
  for (let p = sa.parent, guard = 0; p !== undefined && guard < 1000; p = g.conf.snapshot(p)?.parent, guard++)
    if (p === b) return true
  return false
}

function volumesOf(type: GuestType, conf: Record<string, string>): Set<string> {
  const out = new Set<string>()
  for (const v of volumeEntries(type, conf)) {
    if (v.cdrom) continue
    const volid = driveVolid(v.value, volumeKindOf(v.key, type === 'lxc'))
    if (volid) out.add(volid)
  }
  return out
}

function sizeOf(value: string, type: GuestType): number | undefined {
  try {
    const p = parsePropString(value, type === 'lxc' ? FORMATS.lxcMount : FORMATS.drive)
    return p.size ? parseDiskSize(p.size) : undefined
  } catch {
    return undefined
  }
}

/** add_unused_volume (qemu: an unused cloud-init volume is freed instead) */
function addUnused(node: NodeState, conf: Record<string, string>, volid: string): void {
  if (isCloudinitVolid(volid)) {
    node.storage.remove(volid)
    return
  }
  if (Object.entries(conf).some(([k, v]) => /^unused\d+$/.test(k) && v === volid)) return
  conf[nextUnused(Object.keys(conf))] = volid
}

/** DELETE .../snapshot/{snapname}: snapshot_delete in a worker */
export const snapshotDelete: SnapshotCall = (c, nodeName, type, vmid, name, params, caller) => {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, type, vmid)
  const deleteError = deleteCheck(c, g, name)
  if (deleteError === undefined) {
    // set_lock('snapshot-delete'), then the section is marked `snapstate: delete`
    g.conf.set('lock', 'snapshot-delete')
    g.conf.setSnapshot(name, { ...(g.conf.snapshot(name) as Record<string, string>), snapstate: 'delete' })
  }
  void params.force // no replication jobs and no failing volume snapshots to force past
  return c.dispatch(nodeName, TASK[type].delete, String(vmid), caller.actor, {
    run: () => {
      if (deleteError !== undefined) throw new Error(deleteError)
      const snap = g.conf.snapshot(name) as Record<string, string>
      if (snap.vmstate) node.storage.remove(snap.vmstate)
      const main = g.conf.main()
      // volumes only the snapshot referenced become unusedN (write_config drops those still attached)
      const attached = volumesOf(type, main)
      for (const volid of volumesOf(type, snap)) if (!attached.has(volid)) addUnused(node, main, volid)
      // unlink_parent: whoever had this snapshot as parent now has its parent
      const relink = (conf: Record<string, string>): Record<string, string> => {
        if (conf.parent !== name) return conf
        const { parent: _old, ...rest } = conf
        return snap.parent ? { ...rest, parent: snap.parent } : rest
      }
      const nextMain = relink(main)
      delete nextMain.lock
      g.conf.deleteSnapshot(name)
      for (const other of snapshotsOf(g)) {
        const s = g.conf.snapshot(other) as Record<string, string>
        if (s.parent === name) g.conf.setSnapshot(other, relink(s))
      }
      for (const k of g.conf.keys()) if (!(k in nextMain)) g.conf.delete(k)
      for (const [k, v] of Object.entries(nextMain)) if (g.conf.get(k) !== v) g.conf.set(k, v)
    },
    // a delete that dies half-way leaves `lock: snapshot-delete` and `snapstate: delete`, as in PVE
  })
}

function deleteCheck(c: Cluster, g: Guest, name: string): string | undefined {
  const flock = c.flockError(g.type, g.vmid)
  if (flock) return flock
  if (!g.conf.snapshot(name)) return `snapshot '${name}' does not exist`
  const lock = c.lockError(g)
  if (lock) return lock
  if (g.conf.get('template') === '1') return `you can't delete a snapshot if vm is a template`
  return undefined
}
