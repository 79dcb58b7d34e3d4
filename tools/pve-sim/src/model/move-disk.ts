/**
 * Moving a guest's disk: qemu-server's `move_vm_disk` (POST .../qemu/{vmid}/move_disk, a `qmmove` task) and
 * pve-container's `move_volume` (POST .../lxc/{vmid}/move_volume, a `move_volume` task). Each does one of two
 * things:
 *
 * - to another storage: a full copy of the volume (clone_disk / copy_volume) replaces it in the config; the source
 *   stays as an `unusedN` entry, or with `delete` is freed once the copy is in the config. qemu copies a running
 *   VM's disk by drive-mirror and holds only the config flock (no `lock` in the config); a container must be
 *   stopped and carries `lock: disk` from before the fork until the task ends.
 * - to another guest (`target-vmid`): the volume is renamed to the target (rename_volume) and moves from one config
 *   to the other, both on one node.
 */
import type { Caller } from './caller.js'
import type { Cluster, Guest, NodeState } from './cluster.js'
import { isCdrom, isCloudinitVolid, nextUnused, parseVolumeProps, volumeKindOf } from './disks.js'
import { ASSERT_IF_MODIFIED, fail400, fail500 } from './errors.js'
import { flag } from './guestconf.js'
import { FORMATS, printPropString, type Props } from './propstring.js'
import { formatSize } from './sizes.js'
import { isFileStorage, splitVolid, type Volume } from './storage.js'
import type { TaskContext } from './tasks.js'
import { volumeHasFeature } from './volume-features.js'
import type { GuestCall } from './guest-call.js'

const optional = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v))
const isUnused = (key: string): boolean => /^unused\d+$/.test(key)

/** PVE::Tools::assert_if_modified */
function assertIfModified(digest: string | undefined, g: Guest): void {
  if (digest && digest !== g.conf.digest()) throw fail500(ASSERT_IF_MODIFIED)
}

/** the volume a config entry names, with its parsed options (an unused entry is the volume id alone) */
function volumeEntry(g: Guest, key: string, value: string): { props: Props; volid: string | undefined } {
  const lxc = g.type === 'lxc'
  if (isUnused(key))
    return { props: lxc ? { volume: value } : { file: value }, volid: value.includes(':') ? value : undefined }
  const props = parseVolumeProps(key, value, volumeKindOf(key, lxc))
  const file = String((lxc ? props.volume : props.file) ?? '')
  return { props, volid: file.includes(':') ? file : undefined }
}

/**
 * qemu-server Drive::is_volume_in_use with the moved drive skipped: another drive of the config, or any drive of a
 * snapshot, names the volume; pve-container's is_volume_in_use_by_snapshots looks at the snapshots only
 */
function volumeInUse(g: Guest, skip: string | undefined, volid: string): boolean {
  const names = (conf: Record<string, string>, skipKey: string | undefined) =>
    Object.entries(conf).some(([k, v]) => {
      if (
        k === skipKey ||
        isUnused(k) ||
        !(g.type === 'qemu' ? /^(?:ide|sata|scsi|virtio)\d+$|^efidisk0$|^tpmstate0$/ : /^rootfs$|^mp\d+$/).test(k)
      )
        return false
      try {
        const e = volumeEntry(g, k, v)
        return e.volid === volid && !(g.type === 'qemu' && isCdrom(e.props))
      } catch {
        return false
      }
    })
  if (skip !== undefined && names(g.conf.main(), skip)) return true
  return g.conf.snapshotNames().some((s) => names(g.conf.snapshot(s) ?? {}, undefined))
}

/** add_unused_volume: the first free `unusedN`, unless the volume is listed there already */
function addUnused(conf: Record<string, string>, volid: string): string {
  const listed = Object.entries(conf).find(([k, v]) => isUnused(k) && v === volid)
  if (listed) return listed[0]
  const key = nextUnused(Object.keys(conf))
  conf[key] = volid
  return key
}

/** device_bootorder / print_bootorder: the moved-away disk leaves `boot: order=` */
function dropFromBootOrder(conf: Record<string, string>, key: string): boolean {
  const m = /(^|,)order=([^,]*)/.exec(conf.boot ?? '')
  if (!m) return false
  const devices = (m[2] ?? '').split(';').filter((d) => d !== '')
  if (!devices.includes(key)) return false
  conf.boot = `order=${devices.filter((d) => d !== key).join(';')}`
  return true
}

/** where both handlers send the volume: `storage` or `target-vmid` (checked for both and neither by the caller) */
function moveTarget(params: Record<string, unknown>): { targetVmid: number | undefined; storage: string | undefined } {
  const t = params['target-vmid']
  return { targetVmid: t === undefined ? undefined : Number(t), storage: optional(params.storage) }
}

/** both handlers' raise_param_exc when neither target is given */
function neitherTarget(): Error {
  const msg = "both 'storage' and 'target-vmid' missing, either needs to be set"
  return fail400({ 'target-vmid': msg, storage: msg })
}

/** vdisk_free in an eval: a failure is a warning (the worker goes on); true when the volume is gone */
function freeOrWarn(node: NodeState, volid: string, ctx: TaskContext): boolean {
  try {
    node.storage.free(volid)
    return true
  } catch (err) {
    ctx.warn(err instanceof Error ? err.message : String(err))
    return false
  }
}

/** POST /nodes/{node}/qemu/{vmid}/move_disk (qemu-server PVE::API2::Qemu `move_vm_disk`) */
export const moveVmDisk: GuestCall = (c, nodeName, vmid, params, caller) => {
  const node = c.requireNode(nodeName)
  const disk = String(params.disk)
  const { targetVmid, storage } = moveTarget(params)
  if (targetVmid !== undefined && storage !== undefined) {
    const msg = "either set 'storage' or 'target-vmid', but not both"
    throw fail400({ 'target-vmid': msg, storage: msg })
  }
  if (targetVmid !== undefined) {
    if (targetVmid === vmid) throw fail400({ 'target-vmid': 'must be different than source VMID to reassign disk' })
    return reassign(c, node, vmid, targetVmid, disk, optional(params['target-disk']) ?? disk, params, caller)
  }
  if (storage === undefined) throw neitherTarget()
  const format = optional(params.format)
  const digest = optional(params.digest)
  const remove = flag(params.delete)

  // $load_and_check_move: before forking, and again in the worker under the config flock
  const loadAndCheck = () => {
    const g = c.requireGuest(nodeName, 'qemu', vmid)
    c.checkLock(g)
    assertIfModified(digest, g)
    const value = g.conf.get(disk)
    if (value === undefined) throw fail500(`disk '${disk}' does not exist`)
    const { props, volid } = volumeEntry(g, disk, value)
    if (!props.file) throw fail500(`disk '${disk}' has no associated volume`)
    // drive_is_cdrom with exclude_cloudinit: a cloud-init drive moves, a CD drive does not
    if (isCdrom(props) && !isCloudinitVolid(volid ?? '')) throw fail500(`you can't move a cdrom`)
    if (volid === undefined) throw fail500(`unable to parse volume ID '${String(props.file)}'`)
    const oldStorage = splitVolid(volid)?.[0] ?? ''
    const oldFormat = node.storage.get(volid)?.format
    if (oldStorage === storage && (!format || !oldFormat || oldFormat === format))
      throw fail500(`you can't move to the same storage with same format`)
    const def = node.storage.checkEnabled(storage)
    if (!def.content.includes('images')) throw fail400({ storage: `storage '${storage}' does not support vm images` })
    const snapshotted = volumeInUse(g, disk, volid)
    if (snapshotted && remove) throw fail500(`you can't move a disk with snapshots and delete the source`)
    return { g, props, volid, oldStorage, snapshotted }
  }
  loadAndCheck()

  const allocated: string[] = []
  const upid: string = c.dispatch(nodeName, 'qmmove', String(vmid), caller.actor, {
    run: (ctx) => {
      const flockError = c.flockError('qemu', vmid, 'exclusive', upid)
      if (flockError) throw new Error(flockError)
      const { g, props, volid, oldStorage, snapshotted } = loadAndCheck()
      ctx.log(`copying volume '${volid}' from current storage '${oldStorage}' to target storage '${storage}'`)
      const running = g.status === 'running'
      let newVolume: Volume
      try {
        const source = node.storage.get(volid)
        if (!source) throw new Error(`volume '${volid}' does not exist`)
        node.storage.activate(oldStorage)
        if (snapshotted) ctx.warn('moving disk with snapshots, snapshots will not be moved!')
        ctx.log(`create full clone of drive ${disk} (${volid})`)
        const fmt = resolveFormat(node, storage, source, format, ctx)
        newVolume = node.storage.allocDisk(storage, vmid, source.size, {
          format: fmt,
          ctime: Math.floor(c.now() / 1000),
        })
        allocated.push(newVolume.volid)
        ctx.log(`allocated target volume '${newVolume.volid}'`)
        if (source.data !== undefined) newVolume.data = source.data
        if (running && !isUnused(disk)) mirrorLog(ctx, `drive-${disk}`)
        const conf = g.conf.main()
        conf[disk] = isUnused(disk)
          ? newVolume.volid
          : printPropString({ ...props, file: newVolume.volid, size: formatSize(newVolume.size) }, FORMATS.drive)
        if (!remove) ctx.log(`adding source volume '${volid}' as '${addUnused(conf, volid)}' to config`)
        if (g.conf.get('template') === '1')
          conf[disk] = conf[disk].replace(newVolume.volid, node.storage.renameToBase(newVolume.volid))
        for (const [k, v] of Object.entries(conf)) if (g.conf.get(k) !== v) g.conf.set(k, v)
      } catch (e) {
        for (const v of allocated) freeOrWarn(node, v, ctx)
        throw new Error(`storage migration failed: ${e instanceof Error ? e.message : String(e)}`)
      }
      if (remove) {
        ctx.log(`removing source volume '${volid}' after successful copy`)
        freeOrWarn(node, volid, ctx)
      }
    },
  })
  // lock_config($vmid): the worker holds the config flock while it copies
  c.holdFlock(vmid, { mode: 'exclusive', upid })
  return upid
}

/** resolve_dst_disk_format: the requested (or the source's) format where the target storage can hold it */
function resolveFormat(
  node: NodeState,
  storage: string,
  source: Volume,
  format: string | undefined,
  ctx: TaskContext,
): string {
  const def = node.storage.def(storage)
  const formats =
    def && isFileStorage(def.type) ? ['raw', 'qcow2', 'vmdk'] : def?.type === 'lvm' ? ['raw', 'qcow2'] : ['raw']
  const hint = format ?? source.format
  const out = formats.includes(hint) ? hint : 'raw'
  if (format && format !== out)
    ctx.warn(`format '${format}' is not supported by the target storage '${storage}' - using '${out}' instead`)
  return out
}

/** PVE::QemuServer::BlockJob::mirror of a running VM's drive, completed at once (its progress lines left out) */
function mirrorLog(ctx: TaskContext, job: string): void {
  ctx.log(`drive mirror is starting for ${job}`)
  ctx.log(`all 'mirror' jobs are ready`)
  ctx.log(`${job}: Completing block job...`)
  ctx.log(`${job}: Completed successfully.`)
  ctx.log(`${job}: mirror-job finished`)
}

/** POST /nodes/{node}/lxc/{vmid}/move_volume (pve-container PVE::API2::LXC `move_volume`) */
export const moveCtVolume: GuestCall = (c, nodeName, vmid, params, caller) => {
  const node = c.requireNode(nodeName)
  const key = String(params.volume)
  const { targetVmid, storage } = moveTarget(params)
  const digest = optional(params.digest)
  const remove = flag(params.delete)
  if (storage !== undefined && targetVmid !== undefined)
    throw fail500('either set storage or target-vmid, but not both')
  if (targetVmid !== undefined)
    return reassign(c, node, vmid, targetVmid, key, optional(params['target-volume']) ?? key, params, caller)
  if (storage === undefined) throw neitherTarget()

  // $move_to_storage_checks, under the config flock: then `lock: disk` until the worker ends
  c.lockConfigSync('lxc', vmid)
  const g = c.requireGuest(nodeName, 'lxc', vmid)
  c.checkLock(g)
  if (g.status === 'running') throw fail500('cannot move volumes of a running container')
  if (isUnused(key))
    throw fail500(`cannot move volume '${key}', only configured volumes can be moved to another storage`)
  const value = g.conf.get(key)
  // parse_volume of a missing entry parses '' and misses its volume
  if (value === undefined) throw fail500(`volume: property is missing and it is not optional`)
  const { props } = volumeEntry(g, key, value)
  const oldVolid = String(props.volume ?? '')
  if (remove && volumeInUse(g, undefined, oldVolid))
    throw fail500(`you can't move a volume with snapshots and delete the source`)
  assertIfModified(digest, g)
  g.conf.set('lock', 'disk')
  const removeLock = () => {
    if (g.conf.get('lock') === 'disk') g.conf.delete('lock')
  }

  let newVolid: string | undefined
  return c.dispatch(nodeName, 'move_volume', String(vmid), caller.actor, {
    run: (ctx) => {
      try {
        const before = g.conf.digest()
        try {
          node.storage.activate(splitVolid(oldVolid)?.[0] ?? '')
          // copy_volume: bind and device mount points cannot be copied; alloc_disk takes the source's size
          if (oldVolid.startsWith('/'))
            throw new Error(`cannot copy volumes of type ${oldVolid.startsWith('/dev/') ? 'device' : 'bind'}`)
          const source = node.storage.get(oldVolid)
          if (!source) throw new Error(`volume '${oldVolid}' does not exist`)
          const nv = node.storage.allocDisk(storage, vmid, source.size, { ct: true, ctime: Math.floor(c.now() / 1000) })
          newVolid = nv.volid
          if (source.data !== undefined) nv.data = source.data
          const volume = g.conf.get('template') === '1' ? node.storage.renameToBase(nv.volid) : nv.volid
          if (g.conf.digest() !== before) throw new Error(ASSERT_IF_MODIFIED)
          const conf = g.conf.main()
          conf[key] = printPropString({ ...props, volume, size: formatSize(nv.size) }, FORMATS.lxcMount)
          if (!remove) addUnused(conf, oldVolid)
          for (const [k, v] of Object.entries(conf)) if (g.conf.get(k) !== v) g.conf.set(k, v)
        } catch (e) {
          if (newVolid !== undefined) freeOrWarn(node, newVolid, ctx)
          throw e
        }
        if (remove && !freeOrWarn(node, oldVolid, ctx)) {
          // a source that could not be freed stays listed, as an unused volume
          const conf = g.conf.main()
          const k = addUnused(conf, oldVolid)
          g.conf.set(k, conf[k] as string)
        }
      } finally {
        removeLock()
      }
    },
    onError: removeLock,
  })
}

/**
 * Reassigning a disk to another guest on the same node: qemu-server's `$load_and_check_reassign_configs` and
 * `$disk_reassignfn`, pve-container's counterparts (with their own messages). Checked before forking and again in
 * the worker under both config flocks.
 */
function reassign(
  c: Cluster,
  node: NodeState,
  vmid: number,
  targetVmid: number,
  key: string,
  targetKey: string,
  params: Record<string, unknown>,
  caller: Caller,
): string {
  const src0 = c.guests.get(vmid)
  const type = src0?.type ?? 'qemu'
  const lxc = c.guests.get(vmid)?.type === 'lxc'
  const noun = lxc ? 'CT' : 'VM'
  const digest = optional(params.digest)
  const targetDigest = optional(params['target-digest'])
  const check = () => {
    if (lxc) {
      if (key === 'rootfs' || targetKey === 'rootfs') throw fail500(`Cannot move to/from 'rootfs'`)
      if (isUnused(key) && !isUnused(targetKey)) throw fail500('Moving an unused volume to a used one is not possible')
    }
    const src = c.guests.get(vmid)
    const dst = c.guests.get(targetVmid)
    if (!src) throw fail500(`could not find ${noun} ${vmid}`)
    if (!dst) throw fail500(lxc ? `could not find CT ${targetVmid}` : `could not find target VM ${targetVmid}`)
    if (src.node !== dst.node)
      throw fail500(`Both ${lxc ? 'containers' : 'VMs'} need to be on the same node (${src.node} != ${dst.node})`)
    const s = c.requireGuest(node.name, type, vmid)
    c.checkLock(s)
    const d = c.requireGuest(node.name, type, targetVmid)
    c.checkLock(d)
    if (s.conf.get('template') === '1' || d.conf.get('template') === '1')
      throw fail500(lxc ? `Can't move volumes from or to template CT` : `Can't move disks from or to template VMs`)
    const label = lxc ? 'Container' : 'VM'
    if (digest && digest !== s.conf.digest()) throw fail500(`${label} ${vmid}: ${ASSERT_IF_MODIFIED}`)
    if (targetDigest && targetDigest !== d.conf.digest()) throw fail500(`${label} ${targetVmid}: ${ASSERT_IF_MODIFIED}`)
    const value = s.conf.get(key)
    if (value === undefined)
      throw fail500(
        lxc
          ? `volume '${key}' for container '${vmid}' does not exist`
          : `Disk '${key}' for VM '${vmid}' does not exist`,
      )
    if (d.conf.get(targetKey) !== undefined)
      throw fail500(
        lxc
          ? `Target volume key '${targetKey}' is already in use for container '${targetVmid}'`
          : `Target disk key '${targetKey}' is already in use for VM '${targetVmid}'`,
      )
    const { props, volid } = volumeEntry(s, key, value)
    if (lxc) {
      const volume = String(props.volume ?? '')
      if (volume === '') throw fail500(`Volume '${key}' has no associated image`)
      if (volumeInUse(s, undefined, volume)) throw fail500('Cannot move volume used by a snapshot to another container')
      if (!volumeHasFeature(node, 'rename', volume))
        throw fail500('Storage does not support moving of this disk to another container')
      if (volume.startsWith('/')) throw fail500('Cannot move a bindmount or device mount to another container')
      if (s.status === 'running' && !isUnused(key))
        throw fail500('Cannot move in-use volume while the source CT is running - detach or shutdown first')
    } else {
      if (!props.file) throw fail500(`disk '${key}' has no associated volume`)
      if (isCdrom(props)) throw fail500(`CD drive contents can't be moved to another VM`)
      if (volid === undefined) throw fail500(`Volume '${String(props.file)}' not managed by PVE`)
      if (volumeInUse(s, key, volid)) throw fail500(`Can't move disk used by a snapshot to another VM`)
      if (!volumeHasFeature(node, 'rename', volid))
        throw fail500('Storage does not support moving of this disk to another VM')
      if (s.status === 'running' && !isUnused(key))
        throw fail500('Cannot move disk to another VM while the source VM is running - detach first')
    }
    return { s, d, props, volid: (lxc ? String(props.volume) : volid) as string }
  }
  check()
  const taskType = lxc ? 'move_volume' : 'qmmove'
  const upid: string = c.dispatch(node.name, taskType, `${vmid}-${key}>${targetVmid}-${targetKey}`, caller.actor, {
    run: (ctx) => {
      for (const id of [vmid, targetVmid]) {
        const e = c.flockError(type, id, 'exclusive', upid)
        if (e) throw new Error(e)
      }
      const { s, d, props, volid } = check()
      ctx.log(
        lxc
          ? `moving volume '${key}' from container '${vmid}' to '${targetVmid}'`
          : `reassign disk '${key}' from VM '${vmid}' as '${targetKey}' to VM '${targetVmid}'`,
      )
      const renamed = node.storage.rename(volid, targetVmid).volid
      const sconf = s.conf.main()
      if (!lxc && dropFromBootOrder(sconf, key)) {
        ctx.log(`removing disk '${key}' from boot order config`)
        s.conf.set('boot', sconf.boot as string)
      }
      s.conf.delete(key)
      ctx.log(
        lxc
          ? `removing volume '${key}' from container '${vmid}' config`
          : `removing disk '${key}' from VM '${vmid}' config`,
      )
      const value = isUnused(targetKey)
        ? renamed
        : printPropString(
            { ...props, ...(lxc ? { volume: renamed } : { file: renamed }) },
            lxc ? FORMATS.lxcMount : FORMATS.drive,
          )
      d.conf.set(targetKey, value)
      if (lxc) ctx.log(`target container '${targetVmid}' updated with '${targetKey}'`)
    },
  })
  c.holdFlock(vmid, { mode: 'exclusive', upid })
  c.holdFlock(targetVmid, { mode: 'exclusive', upid })
  return upid
}
