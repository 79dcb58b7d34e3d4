/**
 * The guest operations qemu and LXC share, each following both PVE implementations and noting where they
 * differ: resize (qemu-server qemu_block_resize, pve-container resize_vm), clone (clone_vm), template
 * conversion (template_create) and destroy (destroy_vm, destroy_lxc_container).
 */
import type { Caller } from '../http/types.js'
import type { Cluster, Guest, NodeState } from './cluster.js'
import { GuestConfig } from './config.js'
import { driveVolid, isCdrom, isCloudinitVolid, ownedVolumes, parseVolumeProps, volumeKindOf } from './disks.js'
import { isFileStorage } from './storage.js'
import { fail500, LXC_DIGEST_MISMATCH, QEMU_DIGEST_MISMATCH } from './errors.js'
import { canonicalScalar, flag } from './guestconf.js'
import { isLxcMountKey, isQemuVolumeKey } from './options.js'
import { FORMATS, parsePropString, printPropString } from './propstring.js'
import { formatSize, parseDiskSize, resizeTarget } from './sizes.js'

export function freeVolumes(node: NodeState, volids: string[]): void {
  for (const v of volids) node.storage.remove(v)
}

/** a key whose value names a volume: qemu drives, LXC rootfs and mount points */
function isVolumeKey(type: 'qemu' | 'lxc', key: string): boolean {
  return type === 'qemu' ? isQemuVolumeKey(key) : isLxcMountKey(key)
}

export function resizeGuest(
  c: Cluster,
  nodeName: string,
  vmid: number,
  type: 'qemu' | 'lxc',
  params: Record<string, unknown>,
  caller: Caller,
): string {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, type, vmid)
  const disk = String(params.disk)
  const size = String(params.size)
  const digest = params.digest === undefined ? undefined : String(params.digest)
  const skiplock = flag(params.skiplock)
  if (type === 'lxc') {
    // pve-container resize_vm runs its load_and_check before forking (immediate 500s) and again under the lock
    resizeLxcCheck(c, node, g, disk, size, digest, (m) => fail500(m))
    return c.dispatch(nodeName, 'resize', String(vmid), caller.actor, {
      run: (ctx) => {
        const e = c.flockError(type, vmid)
        if (e) throw new Error(e)
        const r = resizeLxcCheck(c, node, g, disk, size, digest, (m) => new Error(m))
        ctx.log(`Size of logical volume ${r.volid} changed from ${formatSize(r.current)} to ${formatSize(r.target)}.`)
        r.apply()
      },
    })
  }
  return c.dispatch(nodeName, 'resize', String(vmid), caller.actor, {
    run: (ctx) => {
      const e = c.flockError(type, vmid)
      if (e) throw new Error(e)
      if (digest && digest !== g.conf.digest()) throw new Error(QEMU_DIGEST_MISMATCH)
      const le = skiplock ? undefined : c.lockError(g)
      if (le) throw new Error(le)
      const value = g.conf.get(disk)
      if (value === undefined) throw new Error(`disk '${disk}' does not exist`)
      const kind = volumeKindOf(disk, false)
      const props = parseVolumeProps(disk, value, kind)
      const volid = driveVolid(value, kind)
      if (!volid) throw new Error(`disk '${disk}' has no associated volume`)
      if (isCdrom(props)) throw new Error(`you can't resize a cdrom`)
      const vol = node.storage.get(volid)
      if (!vol) throw new Error(`volume '${volid}' does not exist`)
      const current = props.size ? (parseDiskSize(props.size) ?? vol.size) : vol.size
      const target = resizeTarget(current, size)
      if (target === undefined) throw new Error(`invalid size '${size}'`)
      if (target < current) throw new Error('shrinking disks is not supported')
      if (target === current) {
        ctx.log(`disk '${disk}' is already of size ${formatSize(current)}`)
        return
      }
      vol.size = target
      props.size = formatSize(target)
      ctx.log(`Size of logical volume ${volid} changed from ${formatSize(current)} to ${formatSize(target)}.`)
      g.conf.set(disk, printPropString(props, FORMATS.drive))
    },
  })
}

/**
 * pve-container resize_vm's load_and_check: the config lock, the digest (assert_if_modified), the volume,
 * then the new size against the volume's real size (volume_size_info): `unable to shrink disk size`,
 * `disk is already at specified size`. Returns the write to make.
 */
function resizeLxcCheck(
  c: Cluster,
  node: NodeState,
  g: Guest,
  disk: string,
  size: string,
  digest: string | undefined,
  fail: (message: string) => Error,
): { volid: string; current: number; target: number; apply(): void } {
  const le = c.lockError(g)
  if (le) throw fail(le)
  if (digest && digest !== g.conf.digest()) throw fail(LXC_DIGEST_MISMATCH)
  const value = g.conf.get(disk)
  if (value === undefined) throw fail(`disk '${disk}' does not exist`)
  const props = parseVolumeProps(disk, value, 'lxcMount')
  const volid = driveVolid(value, 'lxcMount')
  const vol = volid ? node.storage.get(volid) : undefined
  if (!volid || !vol) throw fail(`unable to parse volume ID '${volid ?? ''}'`)
  if (vol.vmid !== undefined && vol.vmid !== g.vmid)
    throw fail(`can't resize mount point owned by another container (${vol.vmid})`)
  const current = vol.size
  const target = resizeTarget(current, size)
  if (target === undefined) throw fail('invalid size string')
  if (target < current) throw fail('unable to shrink disk size')
  if (target === current) throw fail('disk is already at specified size')
  return {
    volid,
    current,
    target,
    apply() {
      vol.size = target
      props.size = formatSize(target)
      g.conf.set(disk, printPropString(props, FORMATS.lxcMount))
    },
  }
}

/** full/linked clone: qemu-server clone_vm and pve-container clone_vm, which differ in their messages */
export function cloneGuest(
  c: Cluster,
  nodeName: string,
  vmid: number,
  type: 'qemu' | 'lxc',
  params: Record<string, unknown>,
  caller: Caller,
): string {
  const node = c.requireNode(nodeName)
  const src = c.requireGuest(nodeName, type, vmid)
  const newid = Number(params.newid)
  const label = type === 'qemu' ? 'VM' : 'CT'
  const other = c.guests.get(newid)
  if (other) {
    // qemu-server tests for the target's config file; pve-container runs check_vmid_unused
    throw fail500(
      type === 'qemu'
        ? `unable to create VM ${newid}: config file already exists`
        : `${other.type === 'qemu' ? 'VM' : 'CT'} ${newid} already exists on node '${other.node}'`,
    )
  }
  // clone_vm (both): check_pool_exist before anything else is looked at
  const pool = params.pool === undefined ? undefined : String(params.pool)
  if (pool !== undefined) c.pools.requireExists(pool)
  const isTemplate = src.conf.get('template') === '1'
  const full = params.full === undefined ? !isTemplate : flag(params.full)
  if (!full && params.storage !== undefined) throw fail500(`parameter 'storage' not allowed for linked clones`)
  if (!full && params.format !== undefined) throw fail500(`parameter 'format' not allowed for linked clones`)
  const target = params.target === undefined ? nodeName : String(params.target)
  if (target !== nodeName) {
    if (!c.nodes.has(target)) throw fail500(`no such cluster node '${target}'`)
    throw fail500(`can't clone ${type === 'qemu' ? 'VM' : 'CT'} to node '${target}' (${label} uses local storage)`)
  }
  const mode = src.status === 'running' ? 'exclusive' : 'shared'
  c.lockConfigSync(type, vmid, mode)
  c.checkLock(src)
  if (params.snapname !== undefined) throw fail500(`snapshot '${String(params.snapname)}' does not exist`)
  // pve-container clone_vm: a running CT's volumes can only be copied from a snapshot
  if (type === 'lxc' && full && src.status === 'running')
    throw fail500('Full clone of a running container is only possible from a snapshot')
  const srcConf = src.conf.main()
  const volumeKeys = Object.keys(srcConf).filter((k) => isVolumeKey(type, k))
  if (!full) {
    for (const k of volumeKeys) {
      const volid = driveVolid(srcConf[k] as string, volumeKindOf(k, type === 'lxc'))
      const vol = volid ? node.storage.get(volid) : undefined
      const def = node.storage.def(volid?.split(':')[0] ?? '')
      const fileRaw = vol !== undefined && def !== undefined && isFileStorage(def.type) && vol.format !== 'qcow2'
      if (
        volid &&
        !isCloudinitVolid(volid) &&
        !(srcConf[k] ?? '').includes('media=cdrom') &&
        (!/(^|[:/])base(vol)?-/.test(volid) || fileRaw)
      ) {
        throw fail500(
          type === 'qemu'
            ? `Linked clone feature is not supported for drive '${k}'`
            : `Linked clone feature for '${volid}' is not available`,
        )
      }
    }
  }
  const pendingKeys = [...Object.keys(src.conf.pending()), ...src.conf.pendingDeletes().keys()]
  // qemu-server writes "# qmclone temporary file\nlock: clone\n": the comment reads back as a description;
  // pve-container's clone_vm sets `lock: disk` on the source and creates the target with create_and_lock_config
  // (`lock: create`), both removed when the worker ends
  const tempConf: Record<string, string> =
    type === 'qemu' ? { description: 'qmclone temporary file', lock: 'clone' } : { lock: 'create' }
  if (type === 'lxc') src.conf.set('lock', 'disk')
  const releaseSource = () => {
    if (type === 'lxc' && src.conf.get('lock') === 'disk') src.conf.delete('lock')
  }
  const clone = c.addGuest(newid, type, nodeName, new GuestConfig(tempConf))
  const allocated: string[] = []
  // clone_vm: clone_vmfw_conf right after the temporary config, before the worker forks
  c.firewalls.clone(vmid, newid)
  const upid = c.dispatch(nodeName, type === 'qemu' ? 'qmclone' : 'vzclone', String(vmid), caller.actor, {
    run: (ctx) => {
      const conf: Record<string, string> = {}
      for (const [k, v] of Object.entries(srcConf)) {
        if (
          ['template', 'parent', 'vmstate', 'lock', 'snaptime', 'runningmachine', 'runningcpu'].includes(k) ||
          /^unused\d+$/.test(k)
        )
          continue
        conf[k] = v
      }
      for (const k of volumeKeys) {
        const value = srcConf[k] as string
        const kind = volumeKindOf(k, type === 'lxc')
        const volid = driveVolid(value, kind)
        const vol = volid ? node.storage.get(volid) : undefined
        const props = parseVolumeProps(k, value, kind)
        if (!vol || (isCdrom(props) && !isCloudinitVolid(vol.volid))) continue
        if (isCloudinitVolid(vol.volid)) {
          const nv = node.storage.allocCloudinit(vol.volid.split(':')[0] as string, newid, Math.floor(c.now() / 1000))
          allocated.push(nv.volid)
          conf[k] = printPropString({ ...props, file: nv.volid }, FORMATS.drive)
          continue
        }
        const storage =
          full && params.storage !== undefined ? String(params.storage) : (vol.volid.split(':')[0] as string)
        const fileFmt =
          params.format !== undefined ? String(params.format) : vol.format === 'subvol' ? undefined : vol.format
        const ctime = Math.floor(c.now() / 1000)
        let nv
        try {
          nv = full
            ? node.storage.allocDisk(storage, newid, vol.size, {
                ct: type === 'lxc',
                ctime,
                ...(fileFmt ? { format: fileFmt } : {}),
              })
            : node.storage.cloneBase(vol, newid, { ct: type === 'lxc', ctime })
        } catch (e) {
          throw new Error(`clone failed: ${e instanceof Error ? e.message : String(e)}`)
        }
        allocated.push(nv.volid)
        const key = type === 'lxc' ? 'volume' : 'file'
        conf[k] = printPropString({ ...props, [key]: nv.volid }, type === 'lxc' ? FORMATS.lxcMount : FORMATS.drive)
        ctx.log(`create ${full ? 'full' : 'linked'} clone of drive ${k} (${vol.volid})`)
      }
      // identity is regenerated: MACs, smbios1 uuid, vmgenid
      for (const k of Object.keys(conf)) {
        if (!/^net\d+$/.test(k)) continue
        const fmt = type === 'qemu' ? FORMATS.qemuNet : FORMATS.lxcNet
        const p = parsePropString(conf[k] as string, fmt)
        if (type === 'qemu') p.macaddr = c.rng.mac()
        else p.hwaddr = c.rng.mac()
        conf[k] = printPropString(p, fmt)
      }
      if (type === 'qemu') {
        // smbios1 always gets a fresh uuid (created if absent); vmgenid only when it was set; meta is copied
        const smbios = (conf.smbios1 ?? '').split(',').filter((p) => p !== '' && !p.startsWith('uuid='))
        conf.smbios1 = [`uuid=${c.rng.uuid()}`, ...smbios].sort().join(',')
        if (conf.vmgenid !== undefined) conf.vmgenid = c.rng.uuid()
        conf.name = params.name ? String(params.name) : `Copy-of-VM-${srcConf.name ?? vmid}`
      } else if (params.hostname !== undefined) {
        conf.hostname = String(params.hostname)
      }
      if (params.description) conf.description = canonicalScalar(type, 'description', String(params.description))
      if (pendingKeys.length > 0) ctx.log(`found pending changes for '${pendingKeys.join(',')}', discarding for clone`)
      clone.conf = new GuestConfig(conf)
      // clone_vm: add_vm_to_pool once the volumes are copied
      if (pool) c.pools.addVm(newid, pool)
      releaseSource()
    },
    onError: () => {
      freeVolumes(node, allocated)
      c.firewalls.remove(newid)
      if (c.guests.get(newid) === clone) c.removeGuest(clone)
      releaseSource()
    },
  })
  // qemu-server holds the source's flock for the copy; pve-container guards it with `lock: disk` instead
  if (type === 'qemu') c.holdFlock(vmid, { mode, upid })
  return upid
}

/** template conversion: runs under the config flock; disks renamed vm- -> base- */
export function templateGuest(
  c: Cluster,
  nodeName: string,
  vmid: number,
  type: 'qemu' | 'lxc',
  caller: Caller,
): string {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, type, vmid)
  c.lockConfigSync(type, vmid)
  c.checkLock(g)
  if (g.conf.snapshotNames().length > 0) {
    throw fail500(`unable to create template, because ${type === 'qemu' ? 'VM' : 'CT'} contains snapshots`)
  }
  if (g.conf.get('template') === '1') throw fail500(`you can't convert a template to a template`)
  if (g.status === 'running') {
    throw fail500(
      type === 'qemu'
        ? `you can't convert a VM to template if VM is running`
        : `you can't convert a CT to template if the CT is running`,
    )
  }
  const upid = c.dispatch(nodeName, type === 'qemu' ? 'qmtemplate' : 'vztemplate', String(vmid), caller.actor, {
    run: () => {
      for (const k of g.conf.keys()) {
        if (!isVolumeKey(type, k)) continue
        const kind = volumeKindOf(k, type === 'lxc')
        const value = g.conf.get(k) as string
        const volid = driveVolid(value, kind)
        if (!volid || isCloudinitVolid(volid) || value.includes('media=cdrom')) continue
        const renamed = node.storage.renameToBase(volid)
        g.conf.set(k, value.replace(volid, renamed))
      }
      g.conf.set('template', '1')
    },
  })
  c.holdFlock(vmid, { mode: 'exclusive', upid })
  return upid
}

/**
 * DELETE /nodes/{node}/{qemu,lxc}/{vmid}: qemu-server API2/Qemu.pm and pve-container API2/LXC.pm `destroy_vm`.
 * After the volumes (QemuServer destroy_vm, LXC destroy_lxc_container) the worker removes, purge or not, the
 * guest's ACLs and pool membership (AccessControl remove_vm_access) and its firewall config (remove_vmfw_conf);
 * with `purge` also its replication jobs (ReplicationConfig remove_vmid_jobs), its place in backup jobs
 * (VZDump::Plugin remove_vmid_from_backup_jobs) and its HA resource (HA::Config delete_service_from_config);
 * the config file goes last.
 */
export function destroyGuest(
  c: Cluster,
  nodeName: string,
  vmid: number,
  type: 'qemu' | 'lxc',
  params: Record<string, unknown>,
  caller: Caller,
): string {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, type, vmid)
  const label = type === 'qemu' ? 'VM' : 'CT'
  const purge = flag(params.purge)
  const force = type === 'lxc' && flag(params.force)
  const running = () =>
    type === 'qemu' ? `VM ${vmid} is running - destroy failed` : `unable to destroy CT ${vmid} - container is running`
  // $early_checks, in PVE's order: protection, (lxc: lock), without `purge` an HA resource or a replication job
  // refuses, (qemu: running). The worker runs them again under the config lock: the config, the HA resources or
  // the jobs may have changed meanwhile. The model's own `lock: destroyed` is not a lock the check sees.
  const earlyChecks = (fail: (message: string) => Error): void => {
    if (g.conf.get('protection') === '1') throw fail(`can't remove ${label} ${vmid} - protection mode enabled`)
    if (type === 'lxc' && g.conf.get('lock') !== 'destroyed') {
      const e = c.lockError(g)
      if (e) throw fail(e)
    }
    if (!purge) {
      if (c.ha.configured(g))
        throw fail(`unable to remove ${label} ${vmid} - used in HA resources and purge parameter not set.`)
      const job = c.replication.existingJobError(vmid)
      if (job) throw fail(job)
    }
    if (type === 'qemu' && g.status === 'running') throw fail(running())
  }
  earlyChecks(fail500)
  // pve-container checks the running state after its early checks, and a forced destroy stops the container
  if (type === 'lxc' && g.status === 'running' && !force) throw fail500(running())
  const unreferenced = flag(params['destroy-unreferenced-disks'])
  const lockedBy = type === 'qemu' && !flag(params.skiplock) ? c.lockError(g) : undefined
  // destroy_vm writes `lock: destroyed` first and removes the config file last
  if (lockedBy === undefined) g.conf.set('lock', 'destroyed')
  return c.dispatch(nodeName, type === 'qemu' ? 'qmdestroy' : 'vzdestroy', String(vmid), caller.actor, {
    run: (ctx) => {
      const e = c.flockError(type, vmid) ?? lockedBy
      if (e) throw new Error(e)
      earlyChecks((m) => new Error(m))
      if (g.status === 'running') {
        if (!force) throw new Error(running())
        c.setStatus(g, 'stopped')
      }
      const keys = [...new Set([...g.conf.keys(), ...Object.keys(g.conf.pending())])]
      const value = (k: string) => g.conf.get(k) ?? g.conf.getPending(k)
      if (type === 'qemu' && g.conf.get('template') === '1') {
        // qemu-server destroy_vm: a template whose base volume a linked clone uses is refused before anything goes
        for (const k of keys) {
          const v = value(k)
          const volid =
            v === undefined || !isQemuVolumeKey(k) || v.includes('media=cdrom')
              ? undefined
              : driveVolid(v, volumeKindOf(k, false))
          if (volid && node.storage.isBaseAndUsed(volid))
            throw new Error(`base volume '${volid}' is still in use by linked cloned`)
        }
      }
      for (const v of ownedVolumes(g, keys, value)) {
        if (type === 'lxc') {
          // pve-container destroy_lxc_container: vdisk_free errors end the task where they happen
          node.storage.free(v)
          continue
        }
        try {
          node.storage.free(v)
          ctx.log(`Removing image: 100% complete...done.`)
        } catch (e) {
          ctx.warn(`Could not remove disk '${v}', check manually: ${e instanceof Error ? e.message : String(e)}`)
        }
      }
      if (unreferenced) {
        // vdisk_list over every enabled image storage of the node activates each: an offline one ends the task
        const content = type === 'qemu' ? 'images' : 'rootdir'
        const storages = node.storage.defs.filter((d) => !d.disable && d.content.includes(content))
        for (const d of storages) node.storage.activate(d.id)
        for (const d of storages) {
          for (const v of node.storage.list(d.id)) {
            if ((v.content === 'images' || v.content === 'rootdir') && v.vmid === vmid) {
              try {
                node.storage.free(v.volid)
              } catch (e) {
                ctx.warn(e instanceof Error ? e.message : String(e))
              }
            }
          }
        }
      }
      // remove_vm_access: the ACL node of /vms/<vmid> and the pool membership, purge or not
      c.aclCleanup.vm(vmid)
      c.pools.dropVm(vmid)
      c.firewalls.remove(vmid)
      if (purge) {
        ctx.log(`purging ${label} ${vmid} from related configurations..`)
        c.replication.removeVmid(vmid)
        c.backupJobs.removeVmid(vmid)
        if (c.ha.configured(g)) {
          c.ha.drop(`${type === 'qemu' ? 'vm' : 'ct'}:${vmid}`)
          ctx.log(`NOTE: removed ${label} ${vmid} from HA resource configuration.`)
        }
      }
      c.removeGuest(g)
    },
    onError: () => {
      if (g.conf.get('lock') === 'destroyed') g.conf.delete('lock')
    },
  })
}
