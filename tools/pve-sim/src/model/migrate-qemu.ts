import type { Cluster, Guest, NodeState } from './cluster.js'
import { isCloudinitVolid, parseVolumeProps, volumeKindOf } from './disks.js'
import { fail500 } from './errors.js'
import { flag } from './guestconf.js'
import {
  copyVolume,
  dispatchMigration,
  mapId,
  MigrationError,
  migrationFail,
  migrationStep,
  migrationSubject,
  moveConfig,
  targetStorageMap,
} from './migration.js'
import type { IdMap, MigrationLog, MigrationPlan, MigrationSteps } from './migration.js'
import { isQemuVolumeKey } from './options.js'
import { parseDiskSize } from './sizes.js'
import { parseVolname, splitVolid, volumeOwner } from './storage.js'
import type { GuestCall } from './guest-call.js'

/**
 * qemu-server's migration: the precondition check (PVE::API2::Qemu migrate_vm_precondition), the request
 * (migrate_vm: its checks before the fork, the `hamigrate` branch for an HA-managed VM, the `qmigrate` worker) and
 * the worker (PVE::QemuMigrate prepare, phase1 with scan_local_volumes and sync_offline_local_volumes, phase2 for a
 * running VM, phase3_cleanup), with PVE::QemuMigrate::Helpers::check_local_resources and QemuServer's
 * foreach_volid, check_storage_availability and check_local_storage_availability. What the worker decides in its
 * first moments (prepare, the volume scan, `lock: migrate`) is decided at dispatch; the copies and the config move
 * happen when the task ends (docs/simulator-model.md, "Migration").
 */

/** the attributes foreach_volid collects per volume */
interface VolAttr {
  cdrom: boolean
  isCloudinit: boolean
  shared: boolean
  isUnused: boolean
  isAttached: boolean
  snapshots: Set<string>
  pending: boolean
  size?: number
  isVmstate: boolean
  isTpmstate: boolean
  drivename?: string
}

/** PVE::QemuServer::foreach_volid: the config, then [PENDING], then every snapshot, drives and unused and vmstate */
function foreachVolid(g: Guest): Map<string, VolAttr> {
  const out = new Map<string, VolAttr>()
  const visit = (key: string, value: string, snapname: string | undefined, pending: boolean) => {
    const unused = /^unused\d+$/.test(key)
    if (!unused && key !== 'vmstate' && !isQemuVolumeKey(key)) return
    const props = unused || key === 'vmstate' ? { file: value } : parseVolumeProps(key, value, volumeKindOf(key, false))
    const volid = props.file
    if (!volid) return
    const a: VolAttr = out.get(volid) ?? {
      cdrom: true,
      isCloudinit: false,
      shared: false,
      isUnused: false,
      isAttached: false,
      snapshots: new Set(),
      pending: false,
      isVmstate: false,
      isTpmstate: false,
    }
    if (props.media !== 'cdrom') a.cdrom = false
    if (isCloudinitVolid(volid)) a.isCloudinit = true
    if (props.shared === '1') a.shared = true
    if (unused) a.isUnused = true
    if (!a.isUnused && snapname === undefined && !pending) a.isAttached = true
    if (snapname !== undefined) a.snapshots.add(snapname)
    if (pending) a.pending = true
    const size = props.size === undefined ? undefined : parseDiskSize(props.size)
    if (a.size === undefined && size) a.size = size
    if (key === 'vmstate') a.isVmstate = true
    if (key === 'tpmstate0') a.isTpmstate = true
    if (isQemuVolumeKey(key)) a.drivename = key
    out.set(volid, a)
  }
  for (const [k, v] of Object.entries(g.conf.main())) visit(k, v, undefined, false)
  for (const [k, v] of Object.entries(g.conf.pending())) visit(k, v, undefined, true)
  for (const name of g.conf.snapshotNames())
    for (const [k, v] of Object.entries(g.conf.snapshot(name) ?? {})) visit(k, v, name, false)
  return out
}

const sortedKeys = <T>(m: Map<string, T>): string[] => [...m.keys()].sort()

/**
 * PVE::QemuMigrate::Helpers::check_local_resources (with `$noerr`): the devices that tie the VM to its node, the
 * mapped ones, and per node the mappings missing there. The simulator has no resource mappings
 * (/cluster/mapping), so a mapped device is missing on every node.
 */
function localResources(c: Cluster, g: Guest, running: boolean) {
  const conf = g.conf.main()
  const local: string[] = []
  const mapped: Record<string, { name: string }> = {}
  const missing = new Map<string, string[]>([...c.nodes.keys()].map((n) => [n, []]))
  const addMissing = (key: string) => {
    for (const list of missing.values()) list.push(key)
  }
  if (running) {
    // check_non_migratable_resources
    if (conf['amd-sev']) local.push('amd-sev')
    if (conf['intel-tdx']) local.push('intel-tdx')
    if (Object.keys(conf).some((k) => /^virtiofs\d+$/.test(k))) local.push('virtiofs')
  }
  if (conf.ivshmem) local.push('ivshmem')
  const prop = (v: string, key: string) => new RegExp(`(?:^|,)${key}=([^,]*)`).exec(v)?.[1]
  for (const k of Object.keys(conf).sort()) {
    const v = conf[k] as string
    if (/^usb\d+$/.test(k)) {
      const host = prop(v, 'host') ?? (v.split(',')[0]?.includes('=') ? undefined : v.split(',')[0])
      if (host !== undefined && /^spice$/i.test(host)) continue
      const mapping = prop(v, 'mapping')
      if (mapping !== undefined) {
        addMissing(k)
        mapped[k] = { name: mapping }
      }
    }
    if (/^hostpci\d+$/.test(k)) {
      const mapping = prop(v, 'mapping')
      if (mapping !== undefined) {
        addMissing(k)
        mapped[k] = { name: mapping }
        // a mapped device blocks a live migration only (no mapping is `live-migration-capable` here)
        if (!running) continue
      }
    }
    if (/^virtiofs\d+$/.test(k)) {
      addMissing(k)
      mapped[k] = { name: prop(v, 'dirid') ?? v.split(',')[0] ?? '' }
    }
    // sockets are recreated on the target
    if (/^serial\d+$/.test(k) && v === 'socket') continue
    if (/^(usb|hostpci|serial|parallel|virtiofs)\d+$/.test(k)) local.push(k)
  }
  return { local, mapped, missing }
}

/**
 * check_vm_disks_local: the volumes foreach_volid finds that are not on a shared storage (nor marked `shared`), CD
 * drives included except `none`, each with its attributes
 */
function localDisks(c: Cluster, g: Guest): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  const vols = foreachVolid(g)
  for (const volid of sortedKeys(vols)) {
    const a = vols.get(volid) as VolAttr
    const sid = splitVolid(volid)?.[0]
    if (sid !== undefined) {
      const d = c.storage.get(sid)
      if (!d) throw fail500(`storage '${sid}' does not exist`)
      if (d.shared) continue
    }
    if (a.shared || (a.cdrom && volid === 'none')) continue
    const item: Record<string, unknown> = {
      cdrom: a.cdrom ? 1 : 0,
      is_cloudinit: a.isCloudinit ? 1 : 0,
      replicate: 1,
      shared: 0,
      is_unused: a.isUnused ? 1 : 0,
      is_attached: a.isAttached ? 1 : 0,
      is_vmstate: a.isVmstate ? 1 : 0,
      is_tpmstate: a.isTpmstate ? 1 : 0,
      volid,
    }
    if (a.snapshots.size > 0) item.referenced_in_snapshot = Object.fromEntries([...a.snapshots].map((s) => [s, 1]))
    if (a.pending) item.referenced_in_pending = 1
    if (a.size !== undefined) item.size = a.size
    if (a.drivename !== undefined) item.drivename = a.drivename
    out.push(item)
  }
  return out
}

/** the current config's drives with a volume on a storage (foreach_volume, as check_storage_availability walks) */
function driveVolids(g: Guest): string[] {
  const out: string[] = []
  for (const [k, v] of Object.entries(g.conf.main())) {
    if (!isQemuVolumeKey(k)) continue
    const file = parseVolumeProps(k, v, volumeKindOf(k, false)).file
    if (file && splitVolid(file)) out.push(file)
  }
  return out
}

/** QemuServer::check_storage_availability: each drive's storage is enabled here and on the target, for its content */
function checkStorageAvailability(c: Cluster, g: Guest, target: string): void {
  const here = (c.nodes.get(g.node) as NodeState).storage
  const there = (c.nodes.get(target) as NodeState).storage
  for (const volid of driveVolids(g)) {
    const [sid, volname] = splitVolid(volid) as [string, string]
    const d = here.checkEnabled(sid)
    there.checkEnabled(sid)
    const vtype = parseVolname(d, volname)
    if (!d.content.includes(vtype))
      throw fail500(`${volid}: content type '${vtype}' is not available on storage '${sid}'`)
  }
}

/**
 * QemuServer::check_local_storage_availability: per cluster node, the storages of the VM's drives that are disabled
 * or restricted to other nodes (every node has an entry, empty when nothing is missing)
 */
function storageNodeInfo(c: Cluster, g: Guest): Map<string, Record<string, unknown>> {
  const out = new Map<string, Set<string>>([...c.nodes.keys()].map((n) => [n, new Set<string>()]))
  for (const volid of driveVolids(g)) {
    const sid = (splitVolid(volid) as [string, string])[0]
    const d = c.storage.get(sid)
    if (!d) throw fail500(`storage '${sid}' does not exist`)
    for (const [node, missing] of out)
      if (d.disable || (d.nodes !== undefined && !d.nodes.includes(node))) missing.add(sid)
  }
  return new Map([...out].map(([n, s]) => [n, s.size > 0 ? { unavailable_storages: [...s].sort() } : {}]))
}

/** GET /nodes/{node}/qemu/{vmid}/migrate: migrate_vm_precondition */
export function qemuMigratePrecondition(c: Cluster, nodeName: string, vmid: number): Record<string, unknown> {
  c.requireNode(nodeName)
  c.checkCfsQuorum()
  const g = c.requireGuest(nodeName, 'qemu', vmid)
  c.checkLock(g)
  const running = g.status === 'running'
  const { local, mapped, missing } = localResources(c, g, running)
  const nine = c.pveVersion !== '8.4'
  const storageInfo = storageNodeInfo(c, g)
  const motion = nine && c.ha.managed(g) ? c.ha.motionInfo(`vm:${vmid}`) : undefined
  const allowed: string[] = []
  const notAllowed: Record<string, Record<string, unknown>> = {}
  for (const node of [...c.nodes.keys()].sort()) {
    if (node === nodeName) continue
    const info: Record<string, unknown> = { ...storageInfo.get(node) }
    notAllowed[node] = info
    const miss = missing.get(node) ?? []
    if (miss.length > 0) info['unavailable-resources'] = miss
    const blocking = motion?.blocking.get(node)
    if (blocking) info['blocking-ha-resources'] = blocking
    if (Object.keys(info).length === 0) allowed.push(node)
  }
  const res: Record<string, unknown> = {
    running: running ? 1 : 0,
    allowed_nodes: allowed,
    not_allowed_nodes: notAllowed,
    local_disks: localDisks(c, g),
    local_resources: local,
    'mapped-resources': Object.keys(mapped).sort(),
    'mapped-resource-info': mapped,
  }
  if (motion) res['dependent-ha-resources'] = motion.dependent
  if (nine) res['has-dbus-vmstate'] = 1
  return res
}

interface Options {
  target: string
  online: boolean
  force: boolean
  withLocalDisks: boolean
  conntrack: boolean
  storagemap: IdMap | undefined
}

/** what the scan decided for one local volume */
interface LocalVolume {
  targetsid: string
  ref: 'config' | 'pending' | 'snapshot' | 'unused' | 'attached' | 'generated' | undefined
  mode: 'online' | 'offline'
}

/**
 * POST /nodes/{node}/qemu/{vmid}/migrate: migrate_vm. Its checks before the fork answer at once; an HA-managed VM
 * is handed to HA (`hamigrate`: `ha-manager migrate`) unless the caller is the HA stack itself (`byHa`).
 */
export const migrateQemu: GuestCall = (c, nodeName, vmid, params, caller, byHa = false) => {
  const { g, target } = migrationSubject(c, nodeName, 'qemu', vmid, params)
  c.checkLock(g)
  const opts: Options = {
    target,
    online: flag(params.online),
    force: flag(params.force),
    withLocalDisks: flag(params['with-local-disks']),
    conntrack: flag(params['with-conntrack-state']),
    storagemap: undefined,
  }
  if (g.status === 'running') {
    if (!opts.online) throw fail500("can't migrate running VM without --online")
    const jobs = [...c.replication.jobs.values()].filter((j) => j.guest === vmid)
    if (!opts.force && jobs.length > 0 && !jobs.some((j) => j.target === target))
      throw fail500(
        `Cannot live-migrate replicated VM to node '${target}' - not a replication target. Use 'force' to override.`,
      )
  } else {
    // `VM isn't running. Doing offline migration instead.` goes to the API's stderr
    opts.online = false
    opts.conntrack = false
  }
  const map = targetStorageMap(c, params, 'targetstorage', target, 'images')
  if (map) opts.storagemap = map
  if (!map || map.identity) checkStorageAvailability(c, g, target)
  return dispatchMigration(c, g, 'qmigrate', caller, byHa, STEPS, opts)
}

/** PVE::QemuMigrate::prepare: returns whether the VM runs */
function prepare(c: Cluster, g: Guest, opts: Options, log: MigrationLog): boolean {
  const running = g.status === 'running'
  if (running) {
    if (!opts.online) migrationFail("can't migrate running VM without --online")
    if (c.pveVersion !== '8.4' && !opts.conntrack)
      log.log('warn', 'conntrack state migration not supported or disabled, active connections might get dropped')
  }
  const { local, mapped, missing } = localResources(c, g, running)
  const blocking = local.filter((r) => mapped[r] === undefined)
  if (blocking.length > 0) {
    if (!opts.force) migrationFail(`can't migrate VM which uses local devices: ${blocking.join(', ')}`)
    log.log('info', 'migrating VM which uses local devices')
  }
  if (Object.keys(mapped).length > 0) {
    const miss = missing.get(opts.target) ?? []
    const notLive = Object.keys(mapped)
      .sort()
      .map((k) => `${k}:${mapped[k]?.name ?? ''}`)
    if (miss.length > 0) migrationFail(`can't migrate to '${opts.target}': missing mapped devices ${miss.join(', ')}`)
    else if (running && notLive.length > 0)
      migrationFail(`can't live migrate running VM which uses following mapped devices: ${notLive.join(', ')}`)
    log.log('info', 'migrating VM which uses mapped local devices')
  }
  const here = (c.nodes.get(g.node) as NodeState).storage
  for (const volid of sortedKeys(foreachVolid(g))) {
    const s = splitVolid(volid)
    if (!s) continue
    const d = migrationStep(() => here.checkEnabled(s[0]))
    const targetsid = d.shared ? s[0] : mapId(opts.storagemap, s[0])
    targetStorageCheckAvailable(c, opts.target, targetsid, volid)
  }
  // the ssh connection test to the target
  if (c.nodes.get(opts.target)?.online !== true) migrationFail("Can't connect to destination address using public key")
  return running
}

/** PVE::QemuMigrate::target_storage_check_available */
function targetStorageCheckAvailable(c: Cluster, target: string, targetsid: string, volid: string): void {
  const there = (c.nodes.get(target) as NodeState).storage
  const d = migrationStep(() => there.checkEnabled(targetsid))
  const [sid, volname] = splitVolid(volid) as [string, string]
  const vtype = parseVolname(c.storage.get(sid) ?? d, volname)
  if (!d.content.includes(vtype))
    throw new MigrationError(`${volid}: content type '${vtype}' is not available on storage '${targetsid}'`)
}

/** the volume names PVE parses as a linked clone (`base-100-disk-0/vm-101-disk-0`): the base's name */
function cloneBase(volname: string): string | undefined {
  return /(?:^|\/)(base-\d+-disk-\d+(?:\.\w+)?)\//.exec(volname)?.[1]
}

/** PVE::QemuMigrate::scan_local_volumes */
function scanLocalVolumes(
  c: Cluster,
  g: Guest,
  opts: Options,
  running: boolean,
  log: MigrationLog,
): Map<string, LocalVolume> {
  const here = (c.nodes.get(g.node) as NodeState).storage
  const local = new Map<string, LocalVolume>()
  const errors = new Map<string, string>()
  const others: string[] = []
  for (const [volid, a] of [...foreachVolid(g)].sort(([x], [y]) => (x < y ? -1 : 1))) {
    try {
      if (volid.startsWith('/')) {
        if (a.shared) continue
        local.set(volid, { targetsid: '', ref: 'config', mode: 'offline' })
        throw new MigrationError('local file/device')
      }
      if (a.cdrom && volid === 'cdrom') {
        const snaps =
          a.snapshots.size > 0 && !a.isAttached
            ? ` (referenced in snapshot - ${[...a.snapshots].sort().join(', ')})`
            : ''
        others.push(`can't migrate local cdrom drive${snaps}`)
        continue
      }
      if (a.cdrom && volid === 'none') continue
      const [sid, volname] = splitVolid(volid) as [string, string]
      const d = migrationStep(() => here.checkEnabled(sid))
      const targetsid = d.shared ? sid : mapId(opts.storagemap, sid)
      targetStorageCheckAvailable(c, opts.target, targetsid, volid)
      if (d.shared) continue
      let ref: LocalVolume['ref']
      if (a.pending) ref = 'pending'
      if (a.snapshots.size > 0) ref = 'snapshot'
      if (a.isUnused) ref = 'unused'
      if (a.isAttached) ref = 'attached'
      if (a.isTpmstate) ref = 'generated'
      const entry: LocalVolume = { targetsid, ref, mode: 'offline' }
      local.set(volid, entry)
      const v = here.get(volid)
      if (!v) throw new MigrationError(`unable to determine size for volume '${volid}'`)
      if (a.cdrom) {
        if (a.isCloudinit) {
          entry.ref = 'generated'
          continue
        }
        throw new MigrationError('local cdrom image')
      }
      const owner = volumeOwner(volname)
      if (owner !== g.vmid) throw new MigrationError(`owned by other VM (owner = VM ${owner ?? ''})`)
      if (a.isVmstate) continue
      if (a.snapshots.size > 0) {
        if (running) throw new MigrationError('online storage migration not possible if non-replicated snapshot exists')
        if (!(d.type === 'zfspool' || v.format === 'qcow2')) throw new MigrationError('non-migratable snapshot exists')
      }
      if (here.isBaseAndUsed(volid)) throw new MigrationError('referenced by linked clone(s)')
    } catch (e) {
      if (!(e instanceof MigrationError)) throw e
      errors.set(volid, e.message)
    }
  }
  for (const [volid, v] of local) {
    if (v.ref === 'attached') {
      if (running && !opts.withLocalDisks)
        errors.set(volid, "can't live migrate attached local disks without with-local-disks option")
      log.log('info', `found local disk '${volid}' (attached)`)
    } else if (v.ref === 'unused') log.log('info', `found local disk '${volid}' (unused)`)
    else if (v.ref === 'snapshot') log.log('info', `found local disk '${volid}' (referenced by snapshot(s))`)
    else if (v.ref === 'pending') log.log('info', `found local disk '${volid}' (pending change)`)
    else if (v.ref === 'generated') log.log('info', `found generated disk '${volid}' (in current VM config)`)
    else log.log('info', `found local disk '${volid}'`)
  }
  for (const volid of sortedKeys(errors)) log.log('warn', `can't migrate local disk '${volid}': ${errors.get(volid)}`)
  for (const e of others) log.log('warn', e)
  const problem = (m: string) => new MigrationError(`Problem found while scanning volumes - ${m}`)
  if (errors.size > 0 || others.length > 0) throw problem("can't migrate VM - check log")
  for (const volid of local.keys()) {
    const base = cloneBase((splitVolid(volid) as [string, string])[1])
    if (base !== undefined) throw problem(`can't migrate '${volid}' as it's a clone of '${base}'`)
  }
  for (const v of local.values()) v.mode = running && v.ref === 'attached' ? 'online' : 'offline'
  return local
}

type Plan = MigrationPlan<Map<string, LocalVolume>>

/**
 * The rest of the migration, when the task ends: sync_offline_local_volumes, phase2 for a running VM (the target
 * VM started with its new disks, storage and RAM migrated), phase3_cleanup (volume ids updated, the config moved
 * to the target, the source VM stopped and its local copies freed, the lock cleared on the target).
 */
function finish(c: Cluster, g: Guest, opts: Options, plan: Plan, log: MigrationLog): void {
  if (c.guests.get(g.vmid) !== g)
    throw new MigrationError(`Configuration file 'nodes/${g.node}/qemu-server/${g.vmid}.conf' does not exist`)
  const source = (c.nodes.get(g.node) as NodeState).storage
  const map = new Map<string, string>()
  const offline = [...plan.volumes].filter(([, v]) => v.mode === 'offline').map(([volid]) => volid)
  const online = [...plan.volumes].filter(([, v]) => v.mode === 'online').map(([volid]) => volid)
  try {
    if (offline.length > 0) log.log('info', 'copying local disk images')
    for (const volid of offline) {
      const to = copyVolume(c, g, volid, opts.target, (plan.volumes.get(volid) as LocalVolume).targetsid, false)
      map.set(volid, to)
      log.log('info', `volume '${volid}' is '${to}' on the target`)
    }
  } catch (e) {
    if (!(e instanceof MigrationError)) throw e
    log.log('err', e.message)
    log.log('info', 'aborting phase 1 - cleanup resources')
    for (const to of map.values()) (c.nodes.get(opts.target) as NodeState).storage.remove(to)
    g.conf.delete('lock')
    throw e
  }
  if (plan.running) {
    log.log('info', `starting VM ${g.vmid} on remote node '${opts.target}'`)
    for (const volid of online) {
      const to = copyVolume(c, g, volid, opts.target, (plan.volumes.get(volid) as LocalVolume).targetsid, false)
      map.set(volid, to)
      log.log('info', `volume '${volid}' is '${to}' on the target`)
    }
    log.log('info', 'start remote tunnel')
    const drives = online.map((volid) => foreachVolid(g).get(volid)?.drivename ?? '').filter((d) => d !== '')
    if (drives.length > 0) {
      log.log('info', 'starting storage migration')
      for (const d of drives) {
        log.log(
          'info',
          `${d}: start migration to nbd:unix:/run/qemu-server/${g.vmid}_nbd.migrate:exportname=drive-${d}`,
        )
        log.log('info', `drive mirror is starting for drive-${d}`)
      }
      log.log('info', "all 'mirror' jobs are ready")
      log.log('info', 'switching mirror jobs to actively synced mode')
    }
    log.log('info', `starting online/live migration on unix:/run/qemu-server/${g.vmid}.migrate`)
    log.log('info', 'set migration capabilities')
    log.log('info', 'migration downtime limit: 100 ms')
    log.log('info', 'set migration parameters')
    log.log('info', `start migrate command to unix:/run/qemu-server/${g.vmid}.migrate`)
    log.log('info', 'migration status: completed')
    for (const d of drives) {
      log.log('info', `mirror-${d}: Completing block job...`)
      log.log('info', `mirror-${d}: Completed successfully.`)
      log.log('info', `mirror-${d}: mirror-job finished`)
    }
    if (drives.length > 0) log.log('info', 'stopping NBD storage migration server on target.')
  }
  // phase3_cleanup
  moveConfig(g, opts.target, map)
  for (const volid of plan.volumes.keys()) {
    if (!map.has(volid)) continue
    try {
      source.free(volid)
    } catch (e) {
      log.log('err', `removing local copy of '${volid}' failed - ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  // `qm unlock` on the target; a live-migrated VM runs on in a new QEMU process there
  g.conf.delete('lock')
  if (plan.running) g.startedMs = c.now()
}

const STEPS: MigrationSteps<Options, Map<string, LocalVolume>> = {
  prepare,
  scan: scanLocalVolumes,
  // phase1_cleanup: the lock goes again
  phase1Cleanup: (_c, g) => g.conf.delete('lock'),
  finish,
}
