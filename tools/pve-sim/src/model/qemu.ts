import type { Caller } from './caller.js'
import type { Cluster, Guest, NodeState } from './cluster.js'
import { GuestConfig } from './config.js'
import {
  driveVolid,
  isCloudinitVolid,
  missingVolume,
  nextUnused,
  ownedVolumes,
  parseDriveRequest,
  parseVolumeProps,
  realiseDrive,
  volumeKindOf,
  type DriveRequest,
} from './disks.js'
import { dispatchCreate } from './guest-ops.js'
import { fail500, QEMU_DIGEST_MISMATCH } from './errors.js'
import {
  canonicalScalar,
  CREATE_API_ONLY,
  flag,
  checkDeleteRevert,
  hashPassword,
  optionParams,
  splitList,
} from './guestconf.js'
import {
  CLOUDINIT_KEYS,
  isQemuDiskKey,
  isQemuVolumeKey,
  QEMU_DRIVE_BUS_ORDER,
  QEMU_FAST,
  splitIndexed,
} from './options.js'
import { FORMATS, parsePropParam, parsePropString, printPropString } from './propstring.js'
import type { TaskContext } from './tasks.js'
import type { GuestCall } from './guest-call.js'

/** qemu guests: create, config update with pending/hotplug and power; resize, clone, template and destroy are in guest-ops.ts. */

const QEMU_CREATE_API_ONLY = [...CREATE_API_ONLY, 'archive', 'live-restore', 'import-working-storage']
const UPDATE_API_ONLY = [
  'node',
  'vmid',
  'delete',
  'revert',
  'force',
  'digest',
  'skiplock',
  'background_delay',
  'import-working-storage',
]

type Planned = Record<string, string | DriveRequest>

/** Parse and normalise request values before forking; drives become allocation requests. */
function planValues(
  c: Cluster,
  node: NodeState,
  options: Record<string, string>,
  storage: string | undefined,
): Planned {
  const out: Planned = {}
  for (const [rawKey, value] of Object.entries(options)) {
    let key = rawKey
    let v = value
    if (key === 'cdrom') {
      key = 'ide2'
      v = `${value},media=cdrom`
    }
    if (isQemuVolumeKey(key)) {
      out[key] = parseDriveRequest(node, key, v, volumeKindOf(key, false), storage)
    } else if (splitIndexed('qemu', key)?.[0] === 'net') {
      out[key] = normaliseNet(c, key, v)
    } else if (splitIndexed('qemu', key)?.[0] === 'unused') {
      out[key] = v
    } else if (key === 'cipassword') {
      out[key] = v // hashed when applied
    } else if (key === 'vmgenid' && v === '1') {
      out[key] = c.rng.uuid()
    } else if (key === 'cpuunits') {
      out[key] = String(Math.min(10000, Math.max(1, Number(v)))) // clamp_cpu_shares (cgroup v2)
    } else {
      out[key] = canonicalScalar('qemu', key, v)
    }
  }
  return out
}

/** only one cloud-init drive per VM: `ide2 - cloud-init drive is already attached at 'scsi1'` */
function checkSingleCloudinit(planned: Planned, existing: Record<string, string>): void {
  const attached = Object.entries(existing).find(
    ([k, v]) => isQemuDiskKey(k) && isCloudinitVolid(driveVolid(v, 'drive') ?? ''),
  )?.[0]
  const wanted = Object.entries(planned)
    .filter(([, v]) => typeof v !== 'string' && v.kind === 'cloudinit')
    .map(([k]) => k)
  const first = attached ?? wanted[0]
  for (const k of wanted) {
    if (k !== first) throw fail500(`${k} - cloud-init drive is already attached at '${first}'`)
  }
}

/** netN: MAC generated when missing (every time), printed `model=MAC,...` with sorted options */
export function normaliseNet(c: Cluster, key: string, value: string): string {
  const p = parsePropParam(key, value, FORMATS.qemuNet)
  if (p.macaddr === undefined) p.macaddr = c.rng.mac()
  return printPropString(p, FORMATS.qemuNet)
}

function realise(
  c: Cluster,
  node: NodeState,
  vmid: number,
  key: string,
  v: string | DriveRequest,
  allocated: string[],
): string {
  if (typeof v === 'string') return key === 'cipassword' ? hashPassword(c, v) : v
  const r = realiseDrive(c, node, vmid, volumeKindOf(key, false), v, { ct: false })
  allocated.push(...r.allocated)
  return r.value
}

function bootOrder(conf: Record<string, string>): string | undefined {
  const order: string[] = []
  const buses = QEMU_DRIVE_BUS_ORDER
  const drives = (cdrom: boolean) => {
    for (const bus of buses) {
      const keys = Object.keys(conf)
        .filter((k) => splitIndexed('qemu', k)?.[0] === bus)
        .sort((a, b) => Number(a.slice(bus.length)) - Number(b.slice(bus.length)))
      for (const k of keys) {
        const isCd = (conf[k] ?? '').split(',').includes('media=cdrom')
        if (isCd === cdrom) return k
      }
    }
    return undefined
  }
  const disk = drives(false)
  if (disk) order.push(disk)
  const cd = drives(true)
  if (cd) order.push(cd)
  const net = Object.keys(conf)
    .filter((k) => /^net\d+$/.test(k))
    .sort()[0]
  if (net) order.push(net)
  return order.length > 0 ? `order=${order.join(';')}` : undefined
}

function metaString(c: Cluster): string {
  return `creation-qemu=${c.version.qemu},ctime=${Math.floor(c.now() / 1000)}`
}

export function createQemu(c: Cluster, nodeName: string, params: Record<string, unknown>, caller: Caller): string {
  const node = c.requireNode(nodeName)
  const vmid = Number(params.vmid)
  if (params.archive !== undefined) throw fail500('restore from backup archives is not modelled by pve-sim')
  // create_vm's order: the pool (check_pool_exist), the drives (check_storage_access, check_drive_param), then
  // create_and_lock_config's check_vmid_unused, wrapped in `unable to create VM <id> -`
  const pool = params.pool === undefined ? undefined : String(params.pool)
  if (pool !== undefined) c.pools.requireExists(pool)
  const storage = params.storage === undefined ? undefined : String(params.storage)
  const options = optionParams(params, QEMU_CREATE_API_ONLY)
  const planned = planValues(c, node, options, storage)
  const existing = c.guests.get(vmid)
  if (existing)
    throw fail500(
      `unable to create VM ${vmid} - ${existing.type === 'qemu' ? 'VM' : 'CT'} ${vmid} already exists on node '${existing.node}'`,
    )
  const start = flag(params.start)
  const haManaged = flag(params['ha-managed'])
  return dispatchCreate(c, node, 'qemu', vmid, caller, (ctx, g, allocated) => {
    const conf: Record<string, string> = {}
    // create_disks walks the drives in string-sorted key order (efidisk0, ide*, sata*, scsi0, scsi1, scsi10,
    // ...), each new disk logged with its printed value; a second cloud-init drive dies there
    try {
      for (const key of Object.keys(planned).sort()) {
        const req = planned[key] as string | DriveRequest
        if (typeof req !== 'string' && req.kind === 'cloudinit') checkSingleCloudinit({ [key]: req }, conf)
        const before = allocated.length
        conf[key] = realise(c, node, vmid, key, req, allocated)
        if (allocated.length > before) ctx.log(`${key}: successfully created disk '${conf[key]}'`)
      }
    } catch (e) {
      // the create API frees what it allocated and dies with `$emsg $err`
      throw new Error(`unable to create VM ${vmid} - ${e instanceof Error ? e.message : String(e)}`)
    }
    if (conf.vmgenid === undefined || conf.vmgenid === '1') conf.vmgenid = c.rng.uuid()
    else if (conf.vmgenid === '0') delete conf.vmgenid
    // a uuid only when smbios1 was not given at all
    if (!conf.smbios1) conf.smbios1 = `uuid=${c.rng.uuid()}`
    if (conf.boot === undefined) {
      const b = bootOrder(conf)
      if (b) conf.boot = b
    }
    // Windows guests get their machine version pinned unless a versioned machine was given
    if (/^(win|w2k)/.test(conf.ostype ?? '') && (!conf.machine || /^(pc|q35|virt)$/.test(conf.machine))) {
      const q35 = conf.machine === 'q35'
      conf.machine = `pc-${q35 ? 'q35' : 'i440fx'}-${c.version.qemu.split('.').slice(0, 2).join('.')}+pve0`
    }
    conf.meta = metaString(c)
    const fresh = new GuestConfig(conf)
    g.conf = fresh
    // create_vm: add_vm_to_pool once the config is written, before the start
    if (pool) c.pools.addVm(vmid, pool)
    // createfn: `ha-manager add` first, then the autostart
    if (haManaged) c.ha.addFromCreate(g, start, (l) => ctx.log(l))
    if (start) {
      ctx.log('Execute autostart')
      c.setStatus(g, 'running')
    }
  })
}

function hotplugSet(g: Guest): Set<string> {
  const h = g.conf.get('hotplug') ?? 'network,disk,usb'
  if (h === '0') return new Set()
  if (h === '1') return new Set(['network', 'disk', 'usb'])
  return new Set(h.split(','))
}

/** can a change of `key` (set or delete) be applied to the running VM now? */
function hotpluggable(g: Guest, key: string, newValue: string | undefined): boolean {
  if (QEMU_FAST.includes(key) || CLOUDINIT_KEYS.includes(key) || /^ipconfig\d+$/.test(key)) return true
  const hp = hotplugSet(g)
  const base = splitIndexed('qemu', key)?.[0]
  if (base === 'net') return hp.has('network') || netRelinkOnly(g.conf.get(key), newValue)
  if (base === 'usb') return hp.has('usb')
  if (base === 'unused') return true
  if (['balloon', 'cpulimit', 'cpuunits'].includes(key)) return true
  if (key === 'memory') return hp.has('memory') && g.conf.get('numa') === '1'
  if (key === 'vcpus') return hp.has('cpu')
  if (isQemuDiskKey(key)) {
    const cur = g.conf.get(key)
    const curCd = cur !== undefined && cur.split(',').includes('media=cdrom')
    const newCd = newValue !== undefined && newValue.split(',').includes('media=cdrom')
    if (curCd && newCd) return true // cdrom media change (eject/insert) works live
    if (!hp.has('disk') || !(base === 'scsi' || base === 'virtio')) return false
    return cur === undefined || newValue === undefined // add or remove; option changes stay pending
  }
  return false
}

/**
 * vmconfig_update_net: a changed NIC whose model, MAC, queues and MTU stay (and that stays on a bridge) is
 * re-linked to its tap device live (bridge, tag, trunks, firewall, rate, link_down), even without `network`
 * in `hotplug`; anything else needs an unplug, i.e. network hotplug.
 */
function netRelinkOnly(cur: string | undefined, newValue: string | undefined): boolean {
  if (cur === undefined || newValue === undefined) return false
  let a: Record<string, string>, b: Record<string, string>
  try {
    a = parsePropString(cur, FORMATS.qemuNet)
    b = parsePropString(newValue, FORMATS.qemuNet)
  } catch {
    return false
  }
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v))
  return (
    a.model === b.model &&
    (a.macaddr ?? '').toUpperCase() === (b.macaddr ?? '').toUpperCase() &&
    num(a.queues) === num(b.queues) &&
    num(a.mtu) === num(b.mtu) &&
    a.bridge !== undefined &&
    b.bridge !== undefined
  )
}

/** detach a drive value: disks become unusedN unless force; cdrom/cloudinit/unused volumes are freed or dropped */
function detach(g: Guest, node: NodeState, key: string, value: string, force: boolean, ctx?: TaskContext): void {
  const volid = driveVolid(value, volumeKindOf(key, g.type === 'lxc'))
  const owned = volid !== undefined && ownedVolumes(g, [key], () => value).length > 0
  if (!volid || !owned) return
  const unused = splitIndexed(g.type, key)?.[0] === 'unused'
  const cdrom = value.split(',').includes('media=cdrom')
  if (unused || force || isCloudinitVolid(volid)) {
    node.storage.remove(volid)
    ctx?.log(`Removing image: 100% complete...done.`)
    return
  }
  if (cdrom) return
  g.conf.set(nextUnused([...g.conf.keys(), ...Object.keys(g.conf.pending())]), volid)
}

/**
 * vmconfig_register_unused_drive: a drive that only existed in [PENDING] (allocated for a running VM)
 * becomes `unusedN` when it is reverted or replaced, so its volume is not lost
 */
function releasePendingDrive(g: Guest, node: NodeState, key: string): void {
  const pending = g.conf.getPending(key)
  if (pending === undefined || !isQemuVolumeKey(key)) return
  const kind = volumeKindOf(key, false)
  const volid = driveVolid(pending, kind)
  const cur = g.conf.get(key)
  if (!volid || (cur !== undefined && driveVolid(cur, kind) === volid)) return
  g.conf.clearPending(key)
  detach(g, node, key, pending, false)
}

/** re-attaching a detached volume (`scsi1=<volid of unused0>`) removes its unusedN entry */
function dropUnusedOf(g: Guest, key: string, value: string): void {
  if (!isQemuVolumeKey(key)) return
  const volid = driveVolid(value, volumeKindOf(key, false))
  if (!volid) return
  for (const k of g.conf.keys()) {
    if (/^unused\d+$/.test(k) && g.conf.get(k) === volid) g.conf.delete(k)
  }
}

/**
 * A value into the main section, as applying a pending change and a hotplug both write it: the pending entry goes,
 * a drive replaced by another volume is detached (it becomes unused), and the new volume leaves the unused list
 */
function writeValue(g: Guest, node: NodeState, k: string, value: string, ctx: TaskContext | undefined): void {
  const cur = g.conf.get(k)
  g.conf.clearPending(k)
  g.conf.set(k, value)
  if (
    cur !== undefined &&
    isQemuVolumeKey(k) &&
    driveVolid(cur, volumeKindOf(k, false)) !== driveVolid(value, volumeKindOf(k, false))
  ) {
    detach(g, node, k, cur, false, ctx)
  }
  dropUnusedOf(g, k, value)
}

/** move every pending change into the main section (stopped VM, start, API reboot) */
export function applyPending(g: Guest, node: NodeState): void {
  const deletes = g.conf.pendingDeletes()
  for (const [k, force] of deletes) {
    const cur = g.conf.get(k)
    g.conf.clearPending(k)
    if (cur === undefined) continue
    g.conf.delete(k)
    detach(g, node, k, cur, force)
  }
  for (const [k, v] of Object.entries(g.conf.pending())) writeValue(g, node, k, v, undefined)
  g.conf.cleanupPending()
}

interface UpdateRequest {
  planned: Planned
  del: string[]
  revert: string[]
  force: boolean
}

function prepareUpdate(c: Cluster, g: Guest, node: NodeState, params: Record<string, unknown>): UpdateRequest {
  const options = optionParams(params, UPDATE_API_ONLY)
  const del = splitList(params.delete as string | undefined).map((o) => (o === 'cdrom' ? 'ide2' : o))
  const revert = splitList(params.revert as string | undefined)
  if (Object.keys(options).length === 0 && del.length === 0 && revert.length === 0)
    throw fail500('no options specified')
  checkDeleteRevert('qemu', options, del, revert)
  c.lockConfigSync('qemu', g.vmid)
  const digest = params.digest === undefined ? undefined : String(params.digest)
  if (digest && digest !== g.conf.digest()) throw fail500(QEMU_DIGEST_MISMATCH)
  c.checkLock(g, flag(params.skiplock))
  const mem = options.memory ?? g.conf.merged().memory
  if (options.balloon !== undefined && mem !== undefined) {
    const current = Number(/(?:^|,)(?:current=)?(\d+)/.exec(mem)?.[1] ?? 512)
    if (Number(options.balloon) > current)
      throw fail500('balloon value too large (must be smaller than assigned memory)')
  }
  for (const k of Object.keys(options)) {
    if (k === 'tpmstate0' && g.conf.get('tpmstate0') !== undefined) {
      const cur = parsePropString(g.conf.get('tpmstate0') as string, FORMATS.tpmstate)
      const next = parseVolumeProps(k, options[k] as string, 'tpmstate')
      if (next.version !== undefined && (cur.version ?? 'v1.2') !== next.version)
        throw fail500('cannot change TPM state version after creation')
    }
  }
  const planned = planValues(c, node, options, undefined)
  const others = Object.fromEntries(
    Object.entries(g.conf.merged()).filter(([k]) => planned[k] === undefined && !del.includes(k)),
  )
  checkSingleCloudinit(planned, others)
  return { planned, del, revert, force: flag(params.force) }
}

/** the write path of update_vm_api: everything goes through [PENDING], then is applied or hot-plugged */
function applyUpdate(c: Cluster, g: Guest, node: NodeState, req: UpdateRequest, ctx: TaskContext | undefined): void {
  const running = g.status === 'running'
  const boot = bootOrderPlan(g, req)
  for (const k of req.revert) {
    releasePendingDrive(g, node, k)
    g.conf.clearPending(k)
  }
  for (const k of req.del) {
    const cur = g.conf.get(k)
    if (cur === undefined && g.conf.getPending(k) === undefined) {
      ctx?.log(`cannot delete '${k}' - not set in current configuration!`)
      continue
    }
    boot.removed(k)
    // update_vm_api registers a pending drive's volume as unused before it marks the key for deletion
    releasePendingDrive(g, node, k)
    if (running && !hotpluggable(g, k, undefined)) {
      g.conf.addPendingDelete(k, req.force)
      continue
    }
    g.conf.clearPending(k)
    if (cur !== undefined) {
      g.conf.delete(k)
      detach(g, node, k, cur, req.force, ctx)
    }
  }
  const allocated: string[] = []
  const values: Record<string, string> = {}
  for (const k of Object.keys(req.planned).sort()) {
    const before = allocated.length
    values[k] = realise(c, node, g.vmid, k, req.planned[k] as string | DriveRequest, allocated)
    // update_vm_api's create_disks prints each new disk as create_vm's does
    if (allocated.length > before) ctx?.log(`${k}: successfully created disk '${values[k]}'`)
    boot.added(k, values[k])
  }
  const newBoot = boot.value()
  if (newBoot !== undefined) values.boot = newBoot
  for (const k of Object.keys(values).sort()) {
    const value = values[k] as string
    if (g.conf.getPending(k) !== value) releasePendingDrive(g, node, k)
    if (running && !hotpluggable(g, k, value)) {
      g.conf.setPending(k, value)
      continue
    }
    writeValue(g, node, k, value, ctx)
  }
  if (!running) applyPending(g, node)
  g.conf.cleanupPending()
}

/**
 * update_vm_api keeps `boot: order=` in step with the devices: a deleted device leaves the order, a new
 * cdrom joins it, and an explicit order may only name devices that exist.
 */
function bootOrderPlan(g: Guest, req: UpdateRequest) {
  const current = /(?:^|,)order=([^,]*)/.exec(g.conf.get('boot') ?? '')?.[1]
  const order = current ? current.split(';').filter((d) => d !== '') : []
  let changed = false
  const explicit = req.planned.boot
  if (typeof explicit === 'string') {
    const devs =
      /(?:^|,)order=([^,]*)/
        .exec(explicit)?.[1]
        ?.split(';')
        .filter((d) => d !== '') ?? []
    const merged = g.conf.merged()
    for (const dev of devs) {
      const exists = merged[dev] !== undefined || g.conf.get(dev) !== undefined || req.planned[dev] !== undefined
      if (!exists || req.del.includes(dev)) throw fail500(`invalid bootorder: device '${dev}' does not exist'`)
    }
  }
  const track = typeof explicit !== 'string' && !req.del.includes('boot') && order.length > 0
  return {
    removed(k: string) {
      if (track && order.includes(k)) {
        order.splice(order.indexOf(k), 1)
        changed = true
      }
    },
    added(k: string, value: string) {
      const cdrom =
        isQemuDiskKey(k) &&
        value.split(',').includes('media=cdrom') &&
        !isCloudinitVolid(driveVolid(value, 'drive') ?? '')
      if (track && cdrom && !order.includes(k)) {
        order.push(k)
        changed = true
      }
    },
    value(): string | undefined {
      return changed && order.length > 0 ? `order=${order.join(';')}` : undefined
    },
  }
}

/** PUT (sync, null) and POST (async `qmconfig`) .../config */
export function updateQemu(
  c: Cluster,
  nodeName: string,
  vmid: number,
  params: Record<string, unknown>,
  caller: Caller,
  async: boolean,
): string | null {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, 'qemu', vmid)
  const req = prepareUpdate(c, g, node, params)
  if (!async) {
    applyUpdate(c, g, node, req, undefined)
    return null
  }
  const logLine = `update VM ${vmid}: ${Object.keys(params)
    .filter((k) => !['node', 'vmid', 'digest', 'background_delay'].includes(k))
    .sort()
    .map((k) => `-${k} ${k === 'cipassword' ? '<hidden>' : String(params[k])}`)
    .join(' ')}`
  const upid = c.dispatch(nodeName, 'qmconfig', String(vmid), caller.actor, {
    run: (ctx) => {
      const e = c.flockError('qemu', vmid)
      if (e) throw new Error(e)
      ctx.log(logLine)
      applyUpdate(c, g, node, req, ctx)
    },
  })
  const delay = params.background_delay === undefined ? undefined : Number(params.background_delay)
  if (delay !== undefined) {
    const t = c.tasks.get(upid)
    if (t && t.endMs - t.startMs <= delay * 1000) {
      c.tasks.finishNow(t)
      if (t.exitstatus === 'OK') return null
      throw fail500(`failed to update VM ${vmid}: ${t.exitstatus ?? 'unexpected status'}`)
    }
  }
  return upid
}

/** `byHa`: the call comes from the HA LRM (rpcenv type `ha`), so it is not turned into an HA request again */
export const startQemu: GuestCall = (c, nodeName, vmid, params, caller, byHa = false) => {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, 'qemu', vmid)
  // vm_start: an HA-managed VM is only asked for (`hastart`, ha-manager set --state started)
  if (!byHa && c.ha.managed(g)) return c.ha.powerRequest(g, 'start', 0, caller)
  const skiplock = flag(params.skiplock)
  return c.dispatch(nodeName, 'qmstart', String(vmid), caller.actor, {
    run: (ctx) => {
      const e = c.flockError('qemu', vmid)
      if (e) throw new Error(e)
      if (g.conf.get('template') === '1') throw new Error(`you can't start a vm if it's a template`)
      const le = skiplock ? undefined : c.lockError(g)
      if (le) throw new Error(le)
      if (g.status === 'running') throw new Error(`VM ${vmid} already running`)
      const missing = missingVolume(g, node)
      if (missing) throw new Error(`volume '${missing}' does not exist`)
      applyPending(g, node)
      // the pve-bridge script plugs each NIC (PVE::Network::SDN::Zones::tap_plug) as QEMU starts
      const nic = c.sdn.nicError(nodeName, g.conf.main())
      if (nic) throw new Error(nic)
      c.setStatus(g, 'running')
      ctx.log(`starting VM ${vmid}`)
    },
  })
}

/**
 * _do_vm_stop -> vm_stop_cleanup($apply_pending_changes = 1): once the QEMU process of an API stop or
 * shutdown is gone, vmconfig_apply_pending moves [PENDING] into the config and writes it (a new digest).
 * Only the API paths do this; a shutdown from inside the guest or a crash is cleaned up by `qm cleanup`
 * (qmeventd) with apply_pending_changes = 0, and a stop of a VM that is not running returns before it.
 */
function stopAndApplyPending(c: Cluster, g: Guest, node: NodeState): void {
  c.setStatus(g, 'stopped')
  applyPending(g, node)
}

export const stopQemu: GuestCall = (c, nodeName, vmid, params, caller, byHa = false) => {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, 'qemu', vmid)
  // vm_stop: `hastop` (crm-command stop <sid> 0, a hard stop by the LRM)
  if (!byHa && c.ha.managed(g)) return c.ha.powerRequest(g, 'stop', 0, caller)
  const skiplock = flag(params.skiplock)
  const upid: string = c.dispatch(nodeName, 'qmstop', String(vmid), caller.actor, {
    run: () => {
      const e = c.flockError('qemu', vmid, 'exclusive', upid)
      if (e) throw new Error(e)
      const le = skiplock ? undefined : c.lockError(g)
      if (le) throw new Error(le)
      if (g.status !== 'running') return
      stopAndApplyPending(c, g, node)
    },
  })
  // vm_stop runs _do_vm_stop inside lock_config: config writes wait for the whole stop
  c.holdFlock(vmid, { mode: 'exclusive', upid })
  return upid
}

export const shutdownQemu: GuestCall = (c, nodeName, vmid, params, caller, byHa = false) => {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, 'qemu', vmid)
  const forceStop = flag(params.forceStop)
  if (g.paused && !forceStop) throw fail500('VM is paused - cannot shutdown')
  const skiplock = flag(params.skiplock)
  const timeoutS = params.timeout === undefined ? 60 : Number(params.timeout)
  // vm_shutdown: `hastop` (crm-command stop <sid> <timeout>)
  if (!byHa && c.ha.managed(g)) return c.ha.powerRequest(g, 'shutdown', timeoutS, caller)
  const upid: string = c.dispatch(nodeName, 'qmshutdown', String(vmid), caller.actor, {
    // a guest that ignores ACPI keeps the task waiting for the whole timeout
    ...(g.ignoresShutdown && g.status === 'running' ? { durationMs: timeoutS * 1000 } : {}),
    run: (ctx) => {
      const e = c.flockError('qemu', vmid, 'exclusive', upid)
      if (e) throw new Error(e)
      const le = skiplock ? undefined : c.lockError(g)
      if (le) throw new Error(le)
      if (g.status !== 'running') return
      if (g.ignoresShutdown) {
        if (!forceStop) throw new Error('VM quit/powerdown failed - got timeout')
        ctx.log('VM still running - terminating now with SIGTERM')
      }
      stopAndApplyPending(c, g, node)
    },
  })
  // vm_stop holds lock_config while it waits for the guest (up to `timeout`): config writes meanwhile fail
  c.holdFlock(vmid, { mode: 'exclusive', upid })
  return upid
}

export const rebootQemu: GuestCall = (c, nodeName, vmid, _params, caller) => {
  const node = c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, 'qemu', vmid)
  if (g.status !== 'running') throw fail500(`VM ${vmid} not running`)
  return c.dispatch(nodeName, 'qmreboot', String(vmid), caller.actor, {
    run: () => {
      const e = c.flockError('qemu', vmid)
      if (e) throw new Error(e)
      const le = c.lockError(g)
      if (le) throw new Error(le)
      if (g.status !== 'running') throw new Error(`VM ${vmid} not running`)
      // an API reboot is a stop + start: pending changes are applied
      c.setStatus(g, 'stopped')
      applyPending(g, node)
      c.setStatus(g, 'running')
    },
  })
}

export function suspendResumeQemu(
  c: Cluster,
  nodeName: string,
  vmid: number,
  action: 'suspend' | 'resume' | 'reset',
  caller: Caller,
): string {
  c.requireNode(nodeName)
  const g = c.requireGuest(nodeName, 'qemu', vmid)
  if (g.status !== 'running') throw fail500(`VM ${vmid} not running`)
  const type = action === 'suspend' ? 'qmsuspend' : action === 'resume' ? 'qmresume' : 'qmreset'
  return c.dispatch(nodeName, type, String(vmid), caller.actor, {
    run: () => {
      if (action === 'suspend') g.paused = true
      else if (action === 'resume') g.paused = false
    },
  })
}
