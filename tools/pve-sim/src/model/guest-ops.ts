/**
 * The guest operations qemu and LXC share, each following both PVE implementations and noting where they
 * differ: resize (qemu-server qemu_block_resize, pve-container resize_vm), template conversion
 * (template_create) and destroy (destroy_vm, destroy_lxc_container). Clones are in clone.ts.
 */
import type { Caller } from './caller.js'
import type { Cluster, Guest, NodeState } from './cluster.js'
import { driveVolid, isCdrom, isCloudinitVolid, ownedVolumes, parseVolumeProps, volumeKindOf } from './disks.js'
import { fail500, LXC_DIGEST_MISMATCH, QEMU_DIGEST_MISMATCH } from './errors.js'
import { flag } from './guestconf.js'
import { isLxcMountKey, isQemuVolumeKey } from './options.js'
import { FORMATS, printPropString } from './propstring.js'
import { formatSize, resizeTarget } from './sizes.js'
import type { TypedGuestCall } from './guest-call.js'
import { GuestConfig } from './config.js'
import type { GuestType } from './options.js'
import type { TaskContext } from './tasks.js'

export function freeVolumes(node: NodeState, volids: string[]): void {
  for (const v of volids) node.storage.remove(v)
}

/**
 * The worker both create_vm handlers fork (`qmcreate`, `vzcreate`): the guest exists from the dispatch on, its
 * config `lock: create` (create_and_lock_config); `run` is given the guest and the list it records the volumes it
 * allocates in, and a create that fails frees them and removes the guest again.
 */
export function dispatchCreate(
  c: Cluster,
  node: NodeState,
  type: GuestType,
  vmid: number,
  caller: Caller,
  run: (ctx: TaskContext, g: Guest, allocated: string[]) => void,
): string {
  const g = c.addGuest(vmid, type, node.name, new GuestConfig({ lock: 'create' }))
  const allocated: string[] = []
  return c.dispatch(node.name, type === 'qemu' ? 'qmcreate' : 'vzcreate', String(vmid), caller.actor, {
    run: (ctx) => run(ctx, g, allocated),
    onError: () => {
      freeVolumes(node, allocated)
      if (c.guests.get(vmid) === g) c.removeGuest(g)
    },
  })
}

/** a key whose value names a volume: qemu drives, LXC rootfs and mount points */
function isVolumeKey(type: 'qemu' | 'lxc', key: string): boolean {
  return type === 'qemu' ? isQemuVolumeKey(key) : isLxcMountKey(key)
}

export const resizeGuest: TypedGuestCall = (c, nodeName, vmid, type, params, caller) => {
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
      // resize_vm parses the volume name first (parse_volname), so a cdrom without a volume dies there
      const volid = driveVolid(value, kind)
      if (!volid) throw new Error(`unable to parse volume ID '${props.file ?? ''}'`)
      if (isCdrom(props)) throw new Error(`you can't resize a cdrom`)
      // the current size is the volume's own (volume_size_info), not the size= the config remembers
      const vol = node.storage.get(volid)
      if (!vol) throw new Error(`Could not determine current size of volume '${volid}'`)
      const current = vol.size
      const target = resizeTarget(current, size)
      if (target === undefined) throw new Error(`invalid size '${size}'`)
      if (target < current) throw new Error('shrinking disks is not supported')
      if (target === current) return // an equal size returns without a word
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
  const check = (fail: (message: string) => Error) => {
    const lock = c.lockError(g)
    if (lock) throw fail(lock)
    if (g.conf.snapshotNames().length > 0)
      throw fail(`unable to create template, because ${type === 'qemu' ? 'VM' : 'CT'} contains snapshots`)
    if (g.conf.get('template') === '1') throw fail(`you can't convert a template to a template`)
    if (g.status === 'running')
      throw fail(
        type === 'qemu'
          ? `you can't convert a VM to template if VM is running`
          : `you can't convert a CT to template if the CT is running`,
      )
  }
  // pve-container checks under the config flock before it forks; qemu-server checks without it, then again
  // in the worker, which is where it takes the flock
  if (type === 'lxc') c.lockConfigSync(type, vmid)
  check(fail500)
  const upid = c.dispatch(nodeName, type === 'qemu' ? 'qmtemplate' : 'vztemplate', String(vmid), caller.actor, {
    run: () => {
      if (type === 'qemu') {
        const e = c.flockError(type, vmid, 'exclusive', upid)
        if (e) throw new Error(e)
        check((m) => new Error(m))
      }
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
export const destroyGuest: TypedGuestCall = (c, nodeName, vmid, type, params, caller) => {
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
