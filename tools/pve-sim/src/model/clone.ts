/**
 * Guest clones: qemu-server's and pve-container's `clone_vm`. Both copy the current config or, with `snapname`,
 * a snapshot's section (which carries the snapshot's comment as `description` and the volumes as they were);
 * they differ in the order of their checks, their messages and their locks:
 *
 * - qemu-server runs `load_and_check` before forking (immediate errors), then a `qmclone` worker that holds the
 *   source's flock (shared when stopped) and writes the target's temporary config (`lock: clone`).
 * - pve-container sets `lock: disk` on the source (set_lock), creates the target with `lock: create`
 *   (create_and_lock_config) and makes every check before forking `vzclone`; an error there removes both.
 *
 * A full copy gets a volume of the source volume's current size (`volume_size_info`, even from a snapshot); a
 * linked clone of a snapshot (`vdisk_clone` with the snapshot name, lvmthin and rbd only) the size the volume had
 * then. What each storage allows is volume_has_feature's answer (model/volume-features.ts).
 */
import type { Cluster, Guest, NodeState } from './cluster.js'
import { GuestConfig } from './config.js'
import { driveVolid, isCloudinitVolid, volumeKindOf } from './disks.js'
import { fail400, fail500 } from './errors.js'
import { canonicalScalar, flag } from './guestconf.js'
import { isLxcMountKey, isQemuVolumeKey, qemuVolumeKeysInOrder } from './options.js'
import { FORMATS, parsePropString, printPropString, type Props } from './propstring.js'
import { formatSize, parseDiskSize } from './sizes.js'
import { splitVolid, type StorageDef, type Volume } from './storage.js'
import { moveConfig } from './migration.js'
import { freeVolumes } from './guest-ops.js'
import { volumeHasFeature } from './volume-features.js'
import type { GuestCall, TypedGuestCall } from './guest-call.js'

const optional = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v))

export const cloneGuest: TypedGuestCall = (c, nodeName, vmid, type, params, caller) => {
  return type === 'qemu' ? cloneVm(c, nodeName, vmid, params, caller) : cloneCt(c, nodeName, vmid, params, caller)
}

/** the config a clone copies: the current one, or the snapshot's section */
function sourceConfig(src: Guest, snapname: string | undefined): Record<string, string> {
  return snapname ? (src.conf.snapshot(snapname) as Record<string, string>) : src.conf.main()
}

/** the size a volume had in the copied config (`size=`), for a linked clone of a snapshot */
function sizeIn(props: Props, vol: Volume): number {
  return (props.size ? parseDiskSize(props.size) : undefined) ?? vol.size
}

/** PVE::Cluster::check_node_exists for a `target` other than the source's node */
function checkTarget(c: Cluster, target: string | undefined): void {
  if (target !== undefined) c.checkNodeExists(target)
}

/** PVE::Storage::parse_volume_id: the storage id of a volume */
function storageIdOf(volid: string): string {
  const sid = splitVolid(volid)?.[0]
  if (sid === undefined) throw fail500(`unable to parse volume ID '${volid}'`)
  return sid
}

/** PVE::Storage::storage_config: a configured storage, wherever it is enabled */
function storageConfig(node: NodeState, sid: string): StorageDef {
  const def = node.storage.def(sid)
  if (!def) throw fail500(`storage '${sid}' does not exist`)
  return def
}

/** `random_ether_addr` for every NIC */
function newMacs(c: Cluster, conf: Record<string, string>, type: 'qemu' | 'lxc'): void {
  const fmt = type === 'qemu' ? FORMATS.qemuNet : FORMATS.lxcNet
  for (const k of Object.keys(conf)) {
    if (!/^net\d+$/.test(k)) continue
    const p = parsePropString(conf[k] as string, fmt)
    if (type === 'qemu') p.macaddr = c.rng.mac()
    else p.hwaddr = c.rng.mac()
    conf[k] = printPropString(p, fmt)
  }
}

/** vdisk_alloc / vdisk_clone inside the worker: a storage error ends the task as `clone failed: ...` */
function storageStep<T>(step: () => T): T {
  try {
    return step()
  } catch (e) {
    throw new Error(`clone failed: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** the volume a config value names, which must still exist for the worker to copy it */
function liveVolume(node: NodeState, volid: string): Volume {
  const vol = node.storage.get(volid)
  if (!vol) throw new Error(`clone failed: volume '${volid}' does not exist`)
  return vol
}

// ---------------------------------------------------------------------------------------------- qemu-server

interface VmDrive {
  key: string
  props: Props
  volid: string
  /** copied (full clone, or the cloud-init drive and TPM state of a linked clone) rather than vdisk_clone'd */
  full: boolean
}

function driveFormat(key: string) {
  const kind = volumeKindOf(key, false)
  return kind === 'drive' ? FORMATS.drive : kind === 'efidisk' ? FORMATS.efidisk : FORMATS.tpmstate
}

/**
 * check_storage_access_clone's answer: whether every drive (CD-ROMs with an ISO and the cloud-init drive too) is on
 * a shared storage, walked in valid_drive_names order; a drive without a volume (`none`, the host's `cdrom`) counts
 * as shared, and one that names no configured storage dies there.
 */
function sharedVm(node: NodeState, conf: Record<string, string>): boolean {
  let shared = true
  for (const k of qemuVolumeKeysInOrder(Object.keys(conf))) {
    const props = parsePropString(conf[k] as string, driveFormat(k))
    const file = props.file === undefined ? '' : String(props.file)
    if (file === '' || file === 'none' || (props.media === 'cdrom' && file === 'cdrom')) continue
    if (!storageConfig(node, storageIdOf(file)).shared) shared = false
  }
  return shared
}

/** the parameters both clone_vm handlers read; a target that is the local node (or `localhost`) is no target */
function cloneRequest(nodeName: string, params: Record<string, unknown>) {
  const target = optional(params.target)
  return {
    newid: Number(params.newid),
    pool: optional(params.pool),
    snapname: optional(params.snapname),
    storage: optional(params.storage),
    target: target === nodeName || target === 'localhost' ? undefined : target,
  }
}

/** qemu-server clone_vm */
const cloneVm: GuestCall = (c, nodeName, vmid, params, caller) => {
  const node = c.requireNode(nodeName)
  const { newid, pool, snapname, storage, target } = cloneRequest(nodeName, params)
  const format = optional(params.format)

  // ---- $load_and_check, run before forking (the worker runs it again as it starts: the same state here)
  if (pool !== undefined) c.pools.requireExists(pool)
  checkTarget(c, target)
  if (storage !== undefined) {
    const def = node.storage.checkEnabled(storage)
    if (!def.content.includes('images')) throw fail400({ storage: `storage '${storage}' does not support vm images` })
    if (target !== undefined) {
      c.nodes.get(target)?.storage.checkEnabled(storage)
      if (!def.shared) throw fail500(`can't clone to non-shared storage '${storage}'`)
    }
  }
  const src = c.requireGuest(nodeName, 'qemu', vmid)
  c.checkLock(src)
  const running = src.status === 'running'
  if (snapname && !src.conf.snapshot(snapname)) throw fail500(`snapshot '${snapname}' does not exist`)
  const full = params.full === undefined ? src.conf.get('template') !== '1' : flag(params.full)
  if (storage !== undefined && !full) throw fail500(`parameter 'storage' not allowed for linked clones`)
  if (format !== undefined && !full) throw fail500(`parameter 'format' not allowed for linked clones`)
  const old = sourceConfig(src, snapname)
  // the source's disks decide a cross-node clone, whatever `storage` the copies go to
  if (!sharedVm(node, old) && target !== undefined)
    throw fail500(`can't clone VM to node '${target}' (VM uses local storage)`)
  if (c.guests.has(newid)) throw fail500(`unable to create VM ${newid}: config file already exists`)
  const newconf: Record<string, string> = {}
  const drives: VmDrive[] = []
  for (const k of Object.keys(old).sort()) {
    const value = old[k] as string
    if (
      ['parent', 'snaptime', 'vmstate', 'snapstate', 'runningcpu', 'runningmachine', 'running-nets-host-mtu'].includes(
        k,
      ) ||
      /^unused\d+$/.test(k)
    )
      continue
    if (full && running && !snapname && k === 'tpmstate0') throw fail500('cannot clone TPM state while VM is running')
    if (!isQemuVolumeKey(k)) {
      // copied as it is; NICs get new MACs below
      newconf[k] = value
      continue
    }
    const props = parsePropString(value, driveFormat(k))
    const volid = driveVolid(value, volumeKindOf(k, false))
    const cloudinit = volid !== undefined && isCloudinitVolid(volid)
    if (props.media === 'cdrom' && !cloudinit) {
      newconf[k] = value
      continue
    }
    const what = `clone feature is not supported for${snapname ? ' a snapshot of' : ''} '${String(props.file ?? '')}' (${k})`
    const copied = full || cloudinit || k === 'tpmstate0'
    if (copied && !volumeHasFeature(node, 'copy', volid, snapname)) throw fail500(`Full ${what}`)
    if (!copied && !volumeHasFeature(node, 'clone', volid, snapname)) throw fail500(`Linked ${what}`)
    drives.push({ key: k, props, volid: volid as string, full: copied })
  }

  // ---- the worker's locks: the source's flock (shared while stopped), taken as the worker starts
  const mode = running ? 'exclusive' : 'shared'
  const flockError = c.flockError('qemu', vmid, mode)
  if (flockError !== undefined) {
    return c.dispatch(nodeName, 'qmclone', String(vmid), caller.actor, {
      run: () => {
        throw new Error(flockError)
      },
    })
  }
  // the temporary file's comment reads back as a description
  const clone = c.addGuest(
    newid,
    'qemu',
    nodeName,
    new GuestConfig({ description: 'qmclone temporary file', lock: 'clone' }),
  )
  c.firewalls.clone(vmid, newid)
  const pendingKeys = snapname ? [] : [...Object.keys(src.conf.pending()), ...src.conf.pendingDeletes().keys()]
  const allocated: string[] = []
  const upid = c.dispatch(nodeName, 'qmclone', String(vmid), caller.actor, {
    run: (ctx) => {
      // qemu-server 9.1.6 and later name the new VMID first
      if (c.pveVersion !== '8.4') ctx.log(`creating a clone of VM ${vmid} with ID ${newid}`)
      // smbios1 always gets a fresh uuid (created if absent); vmgenid only when it was set; meta is copied
      const smbios = (newconf.smbios1 ?? '').split(',').filter((p) => p !== '' && !p.startsWith('uuid='))
      newconf.smbios1 = [`uuid=${c.rng.uuid()}`, ...smbios].sort().join(',')
      if (newconf.vmgenid && newconf.vmgenid !== '0') newconf.vmgenid = c.rng.uuid()
      delete newconf.template
      newconf.name = params.name ? String(params.name) : `Copy-of-VM-${old.name ?? vmid}`
      if (params.description) newconf.description = canonicalScalar('qemu', 'description', String(params.description))
      newMacs(c, newconf, 'qemu')
      for (const d of drives) {
        const vol = liveVolume(node, d.volid)
        ctx.log(`create ${d.full ? 'full' : 'linked'} clone of drive ${d.key} (${d.volid})`)
        const ctime = Math.floor(c.now() / 1000)
        const sid = storage ?? splitVolid(d.volid)?.[0] ?? ''
        const nv = storageStep(() => {
          if (isCloudinitVolid(d.volid)) return node.storage.allocCloudinit(sid, newid, ctime)
          if (!d.full) return node.storage.cloneBase(vol, newid, { ctime, snap: snapname, size: sizeIn(d.props, vol) })
          const fmt = format ?? (vol.format === 'subvol' ? undefined : vol.format)
          return node.storage.allocDisk(sid, newid, vol.size, { ctime, ...(fmt ? { format: fmt } : {}) })
        })
        allocated.push(nv.volid)
        if (d.full && !isCloudinitVolid(d.volid)) ctx.log(`allocated target volume '${nv.volid}'`)
        // clone_disk: the drive as it was, on the new volume, with that volume's size (the cloud-init one's too)
        newconf[d.key] = printPropString({ ...d.props, file: nv.volid, size: formatSize(nv.size) }, driveFormat(d.key))
      }
      if (pendingKeys.length > 0) ctx.warn(`found pending changes for '${pendingKeys.join(',')}', discarding for clone`)
      clone.conf = new GuestConfig(newconf)
      // the new config moves to the target node once written (its volumes are all on shared storages)
      if (target !== undefined) moveConfig(clone, target, new Map())
      if (pool) c.pools.addVm(newid, pool)
    },
    onError: () => {
      freeVolumes(node, allocated)
      c.firewalls.remove(newid)
      if (c.guests.get(newid) === clone) c.removeGuest(clone)
    },
  })
  c.holdFlock(vmid, { mode, upid })
  return upid
}

// ---------------------------------------------------------------------------------------------- pve-container

/** classify_mountpoint: a path is a bind mount (or a device under /dev), anything else a storage volume */
function mountType(volume: string): 'volume' | 'bind' | 'device' {
  if (!volume.startsWith('/')) return 'volume'
  return volume.startsWith('/dev/') ? 'device' : 'bind'
}

interface CtMount {
  key: string
  props: Props
  vol: Volume | undefined
  volid: string
}

/** pve-container clone_vm */
const cloneCt: GuestCall = (c, nodeName, vmid, params, caller) => {
  const node = c.requireNode(nodeName)
  const { newid, pool, snapname, storage, target } = cloneRequest(nodeName, params)
  if (pool !== undefined) c.pools.requireExists(pool)
  checkTarget(c, target)
  if (storage !== undefined) {
    const def = node.storage.checkEnabled(storage)
    if (target !== undefined) {
      c.nodes.get(target)?.storage.checkEnabled(storage)
      if (!def.shared) throw fail500(`can't clone to non-shared storage '${storage}'`)
    }
  }

  // set_lock($vmid, 'disk'): the config flock, the config, its lock
  c.lockConfigSync('lxc', vmid)
  const src = c.requireGuest(nodeName, 'lxc', vmid)
  c.checkLock(src)
  src.conf.set('lock', 'disk')
  const releaseSource = () => {
    if (src.conf.get('lock') === 'disk') src.conf.delete('lock')
  }
  // create_and_lock_config($newid): check_vmid_unused, then an empty config holding `lock: create`
  const other = c.guests.get(newid)
  if (other) {
    releaseSource()
    throw fail500(`${other.type === 'qemu' ? 'VM' : 'CT'} ${newid} already exists on node '${other.node}'`)
  }
  const clone = c.addGuest(newid, 'lxc', nodeName, new GuestConfig({ lock: 'create' }))
  const mounts: CtMount[] = []
  const newconf: Record<string, string> = {}
  const full = params.full === undefined ? src.conf.get('template') !== '1' : flag(params.full)
  // whether every copy lands on a shared storage: `storage` when given, else each mount point's own
  let sharedCt = true
  try {
    c.firewalls.clone(vmid, newid)
    if (storage !== undefined && !full) throw fail500(`parameter 'storage' not allowed for linked clones`)
    if (snapname && !src.conf.snapshot(snapname)) throw fail500(`snapshot '${snapname}' does not exist`)
    const old = sourceConfig(src, snapname)
    for (const k of Object.keys(old).sort()) {
      if (/^unused\d+$/.test(k)) continue
      const value = old[k] as string
      if (!isLxcMountKey(k)) {
        newconf[k] = value
        continue
      }
      const props = parsePropString(value, FORMATS.lxcMount)
      const volume = String(props.volume ?? '')
      const type = mountType(volume)
      if (type !== 'volume') throw fail500(`unable to clone mountpoint '${k}' (type ${type})`)
      const sid = storageIdOf(volume)
      if (!storageConfig(node, storage ?? sid).shared) sharedCt = false
      if (full) {
        if (src.status === 'running' && !snapname) {
          throw fail500('Full clone of a running container is only possible from a snapshot')
        }
      } else if (!volumeHasFeature(node, 'clone', volume, snapname, { validTargetFormats: ['raw', 'subvol'] })) {
        throw fail500(`Linked clone feature for '${volume}' is not available`)
      }
      mounts.push({ key: k, props, vol: node.storage.get(volume), volid: volume })
    }
    if (target !== undefined && !sharedCt) throw fail500(`can't clone CT to node '${target}' (CT uses local storage)`)
    for (const k of ['lock', 'parent', 'snaptime', 'snapstate', 'template']) delete newconf[k]
    if (params.hostname) newconf.hostname = String(params.hostname)
    if (params.description) newconf.description = canonicalScalar('lxc', 'description', String(params.description))
    newMacs(c, newconf, 'lxc')
  } catch (e) {
    releaseSource()
    c.firewalls.remove(newid)
    c.removeGuest(clone)
    throw e
  }
  // the raw lxc.* lines are copied with the rest of the current config (a snapshot does not keep them here)
  const rawLxc = snapname ? [] : src.conf.lxcPairs()
  clone.conf = new GuestConfig({ ...newconf, lock: 'create' })
  clone.conf.setLxcPairs(rawLxc)
  const running = src.status === 'running'
  const allocated: string[] = []
  return c.dispatch(nodeName, 'vzclone', String(vmid), caller.actor, {
    run: (ctx) => {
      ctx.log(`creating a clone of container ${vmid} with ID ${newid}`)
      if ((src.status === 'running') !== running) throw new Error('unexpected state change')
      for (const m of mounts) {
        const vol = liveVolume(node, m.volid)
        const ctime = Math.floor(c.now() / 1000)
        let nv: Volume
        if (full) {
          ctx.log(`create full clone of mountpoint ${m.key} (${m.volid})`)
          // copy_volume allocates the source volume's current size, even when it copies a snapshot
          const sid = storage ?? splitVolid(m.volid)?.[0] ?? ''
          nv = storageStep(() => node.storage.allocDisk(sid, newid, vol.size, { ct: true, ctime }))
        } else {
          ctx.log(`create linked clone of mount point ${m.key} (${m.volid})`)
          nv = storageStep(() =>
            node.storage.cloneBase(vol, newid, { ct: true, ctime, snap: snapname, size: sizeIn(m.props, vol) }),
          )
        }
        allocated.push(nv.volid)
        clone.conf.set(
          m.key,
          printPropString({ ...m.props, volume: nv.volid, size: formatSize(nv.size) }, FORMATS.lxcMount),
        )
      }
      if (pool) c.pools.addVm(newid, pool)
      releaseSource()
      clone.conf.delete('lock')
      // move_config_to_node, once the create lock is gone (every copy is on a shared storage)
      if (target !== undefined) moveConfig(clone, target, new Map())
    },
    onError: () => {
      releaseSource()
      freeVolumes(node, allocated)
      c.firewalls.remove(newid)
      if (c.guests.get(newid) === clone) c.removeGuest(clone)
    },
  })
}
