import type { Caller } from './caller.js'
import type { Cluster, Guest, NodeState } from './cluster.js'
import { GuestConfig } from './config.js'
import {
  driveVolid,
  missingVolume,
  nextUnused,
  ownedVolumes,
  parseDriveRequest,
  realiseDrive,
  type DriveRequest,
} from './disks.js'
import { fail400, fail500, LXC_DIGEST_MISMATCH } from './errors.js'
import { dispatchCreate } from './guest-ops.js'
import { canonicalScalar, flag, checkDeleteRevert, CREATE_API_ONLY, optionParams, splitList } from './guestconf.js'
import { isLxcMountKey, splitIndexed } from './options.js'
import { FORMATS, parsePropParam, parsePropString, printPropString } from './propstring.js'
import { parseVolname, splitVolid } from './storage.js'
import type { TaskContext } from './tasks.js'

/** LXC containers: the differences from qemu that matter. */

const LXC_CREATE_API_ONLY = [
  ...CREATE_API_ONLY,
  'ostemplate',
  'restore',
  'ignore-unpack-errors',
  'password',
  'ssh-public-keys',
]
const UPDATE_API_ONLY = ['node', 'vmid', 'delete', 'revert', 'digest']
/** $LXC_FASTPLUG_OPTIONS in PVE::LXC::Config: written at once even while the CT runs */
const LXC_FASTPLUG = [
  'description',
  'onboot',
  'startup',
  'protection',
  'hostname',
  'hookscript',
  'cores',
  'tags',
  'lock',
]
/** vmconfig_hotplug_pending: what a running CT can take live beyond the fast-plug options */
const LXC_HOT_SET = ['cpulimit', 'cpuunits', 'memory', 'swap']
const LXC_HOT_DELETE = ['cpulimit', 'cpuunits', 'swap']
const REQUIRED = ['rootfs', 'memory', 'ostype']

export function normaliseLxcNet(c: Cluster, key: string, value: string): string {
  const p = parsePropParam(key, value, FORMATS.lxcNet)
  if (p.name === undefined) throw fail400({ [key]: 'invalid format - property string is missing required key name' })
  if (p.hwaddr === undefined) p.hwaddr = c.rng.mac()
  p.type = 'veth'
  return printPropString(p, FORMATS.lxcNet)
}

type Planned = Record<string, string | DriveRequest>

function planValues(c: Cluster, node: NodeState, options: Record<string, string>, storage: string): Planned {
  const out: Planned = {}
  for (const [key, value] of Object.entries(options)) {
    const base = splitIndexed('lxc', key)?.[0]
    if (isLxcMountKey(key)) out[key] = parseDriveRequest(node, key, value, 'lxcMount', storage)
    else if (base === 'net') out[key] = normaliseLxcNet(c, key, value)
    else out[key] = canonicalScalar('lxc', key, value)
  }
  return out
}

function realise(c: Cluster, node: NodeState, vmid: number, v: string | DriveRequest, allocated: string[]): string {
  if (typeof v === 'string') return v
  const r = realiseDrive(c, node, vmid, 'lxcMount', v, { ct: true })
  allocated.push(...r.allocated)
  return r.value
}

function detectOstype(template: string): string {
  const name = template.split('/').slice(-1)[0] ?? ''
  for (const os of [
    'debian',
    'ubuntu',
    'centos',
    'fedora',
    'opensuse',
    'archlinux',
    'alpine',
    'gentoo',
    'nixos',
    'devuan',
    'almalinux',
    'rockylinux',
  ]) {
    if (name.startsWith(os)) return os
  }
  return 'unmanaged'
}

/**
 * create_vm's PVE::Storage::check_volume_access(..., 'vztmpl'): the template's type is read from its name
 * (parse_volname); whether the file exists is found out in the worker.
 */
function checkTemplateAccess(node: NodeState, ostemplate: string): void {
  const s = splitVolid(ostemplate)
  if (!s) return // a path: only root may pass one, and the worker finds out whether it exists
  const d = node.storage.def(s[0])
  if (!d) throw fail500(`storage '${s[0]}' does not exist`)
  if (parseVolname(d, s[1]) !== 'vztmpl')
    throw fail500(`unable to use volume ${ostemplate} - content type needs to be 'vztmpl'`)
}

/** the storage a mount point value names (a bare size uses the default storage); undefined for a bind mount */
function mountStorage(value: string, defaultStorage: string): string | undefined {
  let volume: string | undefined
  try {
    volume = parsePropString(value, FORMATS.lxcMount).volume
  } catch {
    return undefined // the value's own parse error comes later, from update_pct_config
  }
  if (volume === undefined) return undefined
  if (/^\d+(\.\d+)?$/.test(volume)) return defaultStorage
  return splitVolid(volume)?.[0]
}

/** create_vm's $check_and_activate_storage: storage_check_enabled, `rootdir` content (400), activate_storage */
function checkAndActivateStorage(node: NodeState, sid: string): void {
  const d = node.storage.checkEnabled(sid)
  if (!d.content.includes('rootdir'))
    throw fail400({ storage: `storage '${sid}' does not support container directories` })
  node.storage.activate(sid)
}

export function createLxc(c: Cluster, nodeName: string, params: Record<string, unknown>, caller: Caller): string {
  const node = c.requireNode(nodeName)
  const vmid = Number(params.vmid)
  const existing = c.guests.get(vmid)
  // pve-container runs check_vmid_unused before anything else, so this one has no `unable to create` prefix
  if (existing)
    throw fail500(`${existing.type === 'qemu' ? 'VM' : 'CT'} ${vmid} already exists on node '${existing.node}'`)
  if (flag(params.restore)) throw fail500('restore from backup archives is not modelled by pve-sim')
  const pool = params.pool === undefined ? undefined : String(params.pool)
  if (pool !== undefined) c.pools.requireExists(pool)
  const ostemplate = String(params.ostemplate)
  checkTemplateAccess(node, ostemplate)
  const storage = params.storage === undefined ? 'local' : String(params.storage)
  const options = optionParams(params, LXC_CREATE_API_ONLY)
  const hasMounts = Object.keys(options).some((k) => /^mp\d+$/.test(k))
  if (hasMounts && options.rootfs === undefined)
    throw fail500(`mount points configured, but 'rootfs' not set - aborting`)
  // $check_and_activate_storage for the storage of every volume mount point, else for the default storage
  for (const k of Object.keys(options)
    .filter((k) => isLxcMountKey(k))
    .sort()) {
    const sid = mountStorage(options[k] as string, storage)
    if (sid !== undefined) checkAndActivateStorage(node, sid)
  }
  if (options.rootfs === undefined) {
    checkAndActivateStorage(node, storage)
    options.rootfs = `${storage}:4`
  }
  const unprivileged =
    options.unprivileged === undefined ? '1' : canonicalScalar('lxc', 'unprivileged', options.unprivileged)
  delete options.unprivileged
  const planned = planValues(c, node, options, storage)
  const start = flag(params.start)
  return dispatchCreate(c, node, 'lxc', vmid, caller, (ctx, g, allocated) => {
    const conf: Record<string, string> = {}
    try {
      for (const key of Object.keys(planned).sort())
        conf[key] = realise(c, node, vmid, planned[key] as string | DriveRequest, allocated)
    } catch (e) {
      throw new Error(`unable to create CT ${vmid} - ${e instanceof Error ? e.message : String(e)}`)
    }
    conf.arch = conf.arch ?? 'amd64'
    conf.ostype = conf.ostype ?? detectOstype(ostemplate)
    if (unprivileged === '1') conf.unprivileged = '1'
    // archive_is_oci_format warns and restore_archive dies in abs_filesystem_path when the file is not there
    if (!node.storage.get(ostemplate)) {
      ctx.log(`can't find file '${ostemplate}'`)
      throw new Error(`unable to create CT ${vmid} - can't find file '${ostemplate}'`)
    }
    ctx.log(`extracting archive '${ostemplate}'`)
    // create_vm's "set some defaults" once the archive is unpacked: a hostname, 512 MiB of memory and of swap
    conf.hostname ||= `CT${vmid}`
    if (!conf.memory || conf.memory === '0') conf.memory = '512'
    conf.swap ??= '512'
    // password and ssh-public-keys are written into the rootfs, never into the config
    g.conf = new GuestConfig(conf)
    // create_vm: add_vm_to_pool at the end of the locked create code, before the start
    if (pool) c.pools.addVm(vmid, pool)
    // the create worker calls PVE::API2::LXC::Status->vm_start, which forks a `vzstart` worker of its own: the
    // create task ends OK while the container is still stopped, and the start can fail on its own
    if (start) powerLxc(c, nodeName, vmid, 'start', {}, caller)
    if (flag(params['ha-managed'])) c.ha.addFromCreate(g, start, (l) => ctx.log(l))
  })
}

function detach(g: Guest, node: NodeState, key: string, value: string): void {
  const volid = driveVolid(value, 'lxcMount')
  if (!volid || ownedVolumes(g, [key], () => value).length === 0) return
  if (splitIndexed('lxc', key)?.[0] === 'unused') {
    node.storage.remove(volid)
    return
  }
  g.conf.set(nextUnused(g.conf.keys()), volid)
}

/** a mount point value that still names a new allocation (`local-lvm:2,mp=/data`): PVE's NEW_DISK_RE */
function isNewDisk(value: string): boolean {
  const volume = driveVolid(value, 'lxcMount')
  return volume !== undefined && /^[a-z][a-z0-9\-_.]*[a-z0-9]:\d+(\.\d+)?$/i.test(volume)
}

/** vmconfig_apply_pending: pending deletes, then pending values; new mount points are allocated only now */
export function applyLxcPending(c: Cluster, g: Guest, node: NodeState): void {
  for (const [k] of g.conf.pendingDeletes()) {
    const cur = g.conf.get(k)
    g.conf.clearPending(k)
    if (cur === undefined) continue
    g.conf.delete(k)
    detach(g, node, k, cur)
  }
  for (const [k, pending] of Object.entries(g.conf.pending())) {
    let v = pending
    if (isLxcMountKey(k) && isNewDisk(pending)) {
      v = realiseDrive(c, node, g.vmid, 'lxcMount', parseDriveRequest(node, k, pending, 'lxcMount', 'local'), {
        ct: true,
      }).value
    }
    const cur = g.conf.get(k)
    g.conf.clearPending(k)
    g.conf.set(k, v)
    if (cur !== undefined && isLxcMountKey(k) && driveVolid(cur, 'lxcMount') !== driveVolid(v, 'lxcMount'))
      detach(g, node, k, cur)
  }
  g.conf.cleanupPending()
}

/**
 * A container stops, whoever stops it (API, `pct`, the guest itself): lxc-pve-poststop-hook runs
 * vmconfig_apply_pending and write_config, so [PENDING] lands in the config and the digest changes.
 */
export function stopLxc(c: Cluster, g: Guest, node: NodeState): void {
  c.setStatus(g, 'stopped')
  applyLxcPending(c, g, node)
}

/** can a running CT take this change now? Anything else waits in [PENDING] for the next start */
function hot(g: Guest, key: string, deleting: boolean): boolean {
  if (LXC_FASTPLUG.includes(key)) return true
  const base = splitIndexed('lxc', key)?.[0]
  if (base === 'net') return true
  if (deleting) return LXC_HOT_DELETE.includes(key) || base === 'unused'
  if (LXC_HOT_SET.includes(key)) return true
  // new mount points and devices hotplug; changing an existing one does not
  if (base === 'mp' || base === 'dev') return g.conf.get(key) === undefined
  return false
}

/** PUT /nodes/{node}/lxc/{vmid}/config: the only update call (sync, null) */
export function updateLxc(
  c: Cluster,
  nodeName: string,
  vmid: number,
  params: Record<string, unknown>,
  ctx?: TaskContext,
): null {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, 'lxc', vmid)
  const options = optionParams(params, UPDATE_API_ONLY)
  const del = splitList(params.delete as string | undefined)
  const revert = splitList(params.revert as string | undefined)
  if (Object.keys(options).length === 0 && del.length === 0 && revert.length === 0)
    throw fail500('no options specified')
  checkDeleteRevert('lxc', options, del, revert)
  for (const opt of del) if (REQUIRED.includes(opt)) throw fail500(`unable to delete required option '${opt}'`)
  if (options.unprivileged !== undefined) throw fail500(`unable to modify read-only option: 'unprivileged'`)
  c.lockConfigSync('lxc', vmid)
  // pve-container checks the config lock before the digest (PVE::Tools::assert_if_modified)
  c.checkLock(g)
  const digest = params.digest === undefined ? undefined : String(params.digest)
  if (digest && digest !== g.conf.digest()) throw fail500(LXC_DIGEST_MISMATCH)
  const planned = planValues(c, node, options, 'local')
  const running = g.status === 'running'
  for (const k of revert) g.conf.clearPending(k)
  for (const k of del) {
    const cur = g.conf.get(k)
    if (cur === undefined) {
      g.conf.clearPending(k)
      continue
    }
    if (running && !hot(g, k, true)) {
      g.conf.addPendingDelete(k, false)
      continue
    }
    g.conf.clearPending(k)
    g.conf.delete(k)
    detach(g, node, k, cur)
  }
  const allocated: string[] = []
  for (const k of Object.keys(planned).sort()) {
    const request = planned[k] as string | DriveRequest
    if (running && !hot(g, k, false)) {
      // pve-container keeps a new volume unallocated in [PENDING] (`local-lvm:2,mp=/data`) until it is applied
      const value =
        typeof request !== 'string' && request.kind === 'alloc'
          ? printPropString(parsePropString(options[k] as string, FORMATS.lxcMount), FORMATS.lxcMount)
          : realise(c, node, vmid, request, allocated)
      g.conf.setPending(k, value)
      continue
    }
    const value = realise(c, node, vmid, request, allocated)
    const cur = g.conf.get(k)
    g.conf.clearPending(k)
    g.conf.set(k, value)
    if (cur !== undefined && isLxcMountKey(k) && driveVolid(cur, 'lxcMount') !== driveVolid(value, 'lxcMount'))
      detach(g, node, k, cur)
  }
  ctx?.log('update done')
  g.conf.cleanupPending()
  return null
}

/** `byHa`: the call comes from the HA LRM (rpcenv type `ha`), so it is not turned into an HA request again */
export function powerLxc(
  c: Cluster,
  nodeName: string,
  vmid: number,
  action: 'start' | 'stop' | 'shutdown' | 'reboot' | 'suspend' | 'resume',
  params: Record<string, unknown>,
  caller: Caller,
  byHa = false,
): string {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, 'lxc', vmid)
  if (action === 'start') {
    if (g.status === 'running') throw fail500(`CT ${vmid} already running`)
    if (g.conf.get('template') === '1') throw fail500(`you can't start a CT if it's a template`)
    c.checkLock(g, flag(params.skiplock))
  } else if (g.status !== 'running') {
    throw fail500(`CT ${vmid} not running`)
  }
  const forceStop = flag(params.forceStop)
  const timeoutS = params.timeout === undefined ? 60 : Number(params.timeout)
  // PVE::API2::LXC::Status vm_start/vm_stop/vm_shutdown: after the running checks, an HA-managed CT is only asked for
  if (!byHa && (action === 'start' || action === 'stop' || action === 'shutdown') && c.ha.managed(g)) {
    return c.ha.powerRequest(g, action, action === 'stop' ? 0 : timeoutS, caller)
  }
  const upid: string = c.dispatch(nodeName, `vz${action}`, String(vmid), caller.actor, {
    ...(action === 'shutdown' && g.ignoresShutdown ? { durationMs: timeoutS * 1000 } : {}),
    run: (ctx) => {
      const e = c.flockError('lxc', vmid, 'exclusive', upid)
      if (e) throw new Error(e)
      if (action === 'start') {
        const missing = missingVolume(g, node)
        if (missing) throw new Error(`volume '${missing}' does not exist`)
        applyLxcPending(c, g, node)
        // lxc-pve's network hook plugs each veth (PVE::Network::SDN::Zones::tap_plug) as the container starts
        const nic = c.sdn.nicError(nodeName, g.conf.main())
        if (nic) throw new Error(nic)
        c.setStatus(g, 'running')
      } else if (action === 'stop') {
        stopLxc(c, g, node)
      } else if (action === 'shutdown') {
        if (g.ignoresShutdown) {
          if (!forceStop)
            throw new Error(`command 'lxc-stop -n ${vmid} --nokill --timeout ${timeoutS}' failed: exit code 1`)
          ctx.log('shutdown timed out - stopping container')
        }
        stopLxc(c, g, node)
      } else if (action === 'reboot') {
        c.setStatus(g, 'stopped')
        applyLxcPending(c, g, node)
        c.setStatus(g, 'running')
      } else if (action === 'suspend') {
        g.paused = true
      } else {
        g.paused = false
      }
    },
  })
  // the vm_stop and vm_shutdown workers run inside lock_config: config writes wait for the whole stop
  if (action === 'stop' || action === 'shutdown') c.holdFlock(vmid, { mode: 'exclusive', upid })
  return upid
}
