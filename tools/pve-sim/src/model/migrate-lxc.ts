import type { Cluster, Guest, NodeState } from './cluster.js'
import { parseVolumeProps } from './disks.js'
import { fail500 } from './errors.js'
import { flag } from './guestconf.js'
import { applyLxcPending, stopLxc } from './lxc.js'
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
import { isLxcMountKey } from './options.js'
import { splitVolid, volumeOwner } from './storage.js'
import type { GuestCall } from './guest-call.js'

/**
 * pve-container's migration: the precondition check (PVE::API2::LXC migrate_vm_precondition, PVE 9), the request
 * (migrate_vm: a running container needs `restart`, an HA-managed one is handed to HA as `hamigrate`, else a
 * `vzmigrate` worker) and the worker (PVE::LXC::Migrate prepare, phase1, phase3, final_cleanup). A restart
 * migration shuts the container down in prepare and starts it on the target in final_cleanup, or again on the
 * source when phase 1 fails. As for qemu (model/migrate-qemu.ts), prepare and the volume checks are decided at
 * dispatch and the copies and the config move happen when the task ends.
 */

/** GET /nodes/{node}/lxc/{vmid}/migrate (PVE 9): only HA resource affinity makes a node not allowed */
export function lxcMigratePrecondition(c: Cluster, nodeName: string, vmid: number): Record<string, unknown> {
  c.requireNode(nodeName)
  c.checkCfsQuorum()
  const g = c.requireGuest(nodeName, 'lxc', vmid)
  c.checkLock(g)
  const motion = c.ha.managed(g) ? c.ha.motionInfo(`ct:${vmid}`) : undefined
  const allowed: string[] = []
  const notAllowed: Record<string, Record<string, unknown>> = {}
  for (const node of [...c.nodes.keys()].sort()) {
    if (node === nodeName) continue
    const blocking = motion?.blocking.get(node)
    if (blocking) notAllowed[node] = { 'blocking-ha-resources': blocking }
    else allowed.push(node)
  }
  const res: Record<string, unknown> = {
    running: g.status === 'running' ? 1 : 0,
    'allowed-nodes': allowed,
    'not-allowed-nodes': notAllowed,
  }
  if (motion) res['dependent-ha-resources'] = motion.dependent
  return res
}

interface Options {
  target: string
  online: boolean
  restart: boolean
  timeout: number
  storagemap: IdMap | undefined
}

/** POST /nodes/{node}/lxc/{vmid}/migrate: migrate_vm */
export const migrateLxc: GuestCall = (c, nodeName, vmid, params, caller, byHa = false) => {
  const { g, target } = migrationSubject(c, nodeName, 'lxc', vmid, params)
  const opts: Options = {
    target,
    online: flag(params.online),
    restart: flag(params.restart),
    timeout: params.timeout === undefined ? 180 : Number(params.timeout),
    storagemap: undefined,
  }
  if (g.status === 'running' && !opts.online && !opts.restart)
    throw fail500("can't migrate running container without --online or --restart")
  opts.storagemap = targetStorageMap(c, params, 'target-storage', target, 'rootdir')
  return dispatchMigration(c, g, 'vzmigrate', caller, byHa, STEPS, opts)
}

/** a mount point as foreach_volume_full sees it: a volume, or a bind or device mount */
interface MountPoint {
  key: string
  volume: string
  type: 'volume' | 'bind' | 'device'
  shared: boolean
}

function mountPoints(values: Record<string, string>, unused: boolean): MountPoint[] {
  const out: MountPoint[] = []
  for (const key of Object.keys(values).sort()) {
    const value = values[key] as string
    if (unused && /^unused\d+$/.test(key)) {
      out.push({ key, volume: value, type: 'volume', shared: false })
      continue
    }
    if (!isLxcMountKey(key)) continue
    const props = parseVolumeProps(key, value, 'lxcMount')
    const volume = props.volume ?? ''
    const type = !volume.startsWith('/') ? 'volume' : volume.startsWith('/dev/') ? 'device' : 'bind'
    out.push({ key, volume, type, shared: props.shared === '1' })
  }
  return out
}

/** PVE::LXC::Migrate::prepare: returns whether the container ran (it is shut down for a restart migration) */
function prepare(c: Cluster, g: Guest, opts: Options, log: MigrationLog): boolean {
  const running = g.status === 'running'
  if (running) {
    if (opts.online) migrationFail('lxc live migration is currently not implemented')
    if (!opts.restart) migrationFail('running container can only be migrated in restart mode')
  }
  const here = (c.nodes.get(g.node) as NodeState).storage
  const there = (c.nodes.get(opts.target) as NodeState).storage
  for (const mp of mountPoints(g.conf.main(), true)) {
    if (mp.type !== 'volume') {
      if (mp.shared) continue
      migrationFail(`cannot migrate local ${mp.type} mount point '${mp.key}'`)
    }
    if (!mp.volume) migrationFail(`missing volume for mount point '${mp.key}'`)
    const s = splitVolid(mp.volume)
    if (!s) migrationFail(`can't determine assigned storage for mount point '${mp.key}'`)
    const [storage] = s
    const d = migrationStep(() => here.checkEnabled(storage))
    if (!d.content.includes('rootdir')) migrationFail(`content type 'rootdir' is not available on storage '${storage}'`)
    const targetsid = d.shared ? storage : mapId(opts.storagemap, storage)
    const td = migrationStep(() => there.checkEnabled(targetsid))
    if (!td.content.includes('rootdir'))
      migrationFail(`${mp.volume}: content type 'rootdir' is not available on storage '${targetsid}'`)
  }
  if (c.nodes.get(opts.target)?.online !== true) migrationFail("Can't connect to destination address using public key")
  if (opts.restart && running) {
    log.log('info', `shutdown CT ${g.vmid}`)
    if (g.ignoresShutdown) migrationFail('container did not stop')
    stopLxc(c, g, c.nodes.get(g.node) as NodeState)
  }
  return running
}

/** final_cleanup after a failed phase 1: the lock goes, and a restart migration starts the CT on the source again */
function finalCleanupOnError(c: Cluster, g: Guest, opts: Options, wasRunning: boolean, log: MigrationLog): void {
  log.log('info', 'start final cleanup')
  g.conf.delete('lock')
  if (opts.restart && wasRunning) {
    log.log('info', 'start container on source node')
    applyLxcPending(c, g, c.nodes.get(g.node) as NodeState)
    c.setStatus(g, 'running')
  }
}

/** phase1's volume walk: snapshots, then [PENDING], then the config (with unused volumes) */
function scanVolumes(c: Cluster, g: Guest, opts: Options, log: MigrationLog): Map<string, string> {
  const here = (c.nodes.get(g.node) as NodeState).storage
  const volumes = new Map<string, { ref: 'config' | 'snapshot'; targetsid: string }>()
  const errors = new Map<string, string>()
  const testVolid = (volid: string, snapname: string | undefined) => {
    if (/^[^:\s]+:\d+(\.\d+)?$/.test(volid)) {
      log.log('info', `volume '${volid}' does not exist (pending change?)`)
      return
    }
    const [sid, volname] = splitVolid(volid) ?? ['', volid]
    const d = migrationStep(() => here.checkEnabled(sid))
    if (d.shared) {
      if (snapname === undefined) log.log('info', `volume '${volid}' is on shared storage '${sid}'`)
      return
    }
    const targetsid = mapId(opts.storagemap, sid)
    migrationStep(() => (c.nodes.get(opts.target) as NodeState).storage.checkEnabled(targetsid))
    volumes.set(volid, { ref: snapname !== undefined ? 'snapshot' : 'config', targetsid })
    const owner = volumeOwner(volname)
    if (owner !== g.vmid) throw new MigrationError(`owned by other guest (owner = ${owner ?? ''})`)
    if (snapname !== undefined && d.type !== 'zfspool') throw new MigrationError('non-migratable snapshot exists')
  }
  const testMp = (mp: MountPoint, snapname: string | undefined) => {
    if (mp.type !== 'volume') {
      if (snapname === undefined)
        log.log('info', `ignoring shared '${mp.type}' mount point '${mp.key}' ('${mp.volume}')`)
      return
    }
    try {
      testVolid(mp.volume, snapname)
    } catch (e) {
      if (!(e instanceof MigrationError)) throw e
      if (!errors.has(mp.volume)) errors.set(mp.volume, e.message)
    }
  }
  for (const name of g.conf.snapshotNames())
    for (const mp of mountPoints(g.conf.snapshot(name) ?? {}, false)) testMp(mp, name)
  for (const mp of mountPoints(g.conf.pending(), false)) testMp(mp, undefined)
  for (const mp of mountPoints(g.conf.main(), true)) testMp(mp, undefined)
  for (const volid of [...volumes.keys()].sort()) {
    const base = /(?:^|\/)(base(?:vol)?-\d+-disk-\d+(?:\.\w+)?)\//.exec(splitVolid(volid)?.[1] ?? '')?.[1]
    if (base !== undefined && !errors.has(volid)) errors.set(volid, `clone of '${base}'`)
  }
  for (const volid of [...volumes.keys()].sort()) {
    const ref = volumes.get(volid)?.ref
    log.log(
      'info',
      ref === 'config'
        ? `found local volume '${volid}' (in current VM config)`
        : `found local volume '${volid}' (referenced by snapshot(s))`,
    )
  }
  for (const volid of [...errors.keys()].sort())
    log.log('warn', `can't migrate local volume '${volid}': ${errors.get(volid)}`)
  if (errors.size > 0) throw new MigrationError("can't migrate CT - check log")
  return new Map([...volumes].map(([volid, v]) => [volid, v.targetsid]))
}

type Plan = MigrationPlan<Map<string, string>>

/** the rest when the task ends: the copies, the config moved, phase3 frees the source copies, final_cleanup */
function finish(c: Cluster, g: Guest, opts: Options, plan: Plan, log: MigrationLog): void {
  const source = (c.nodes.get(g.node) as NodeState).storage
  const map = new Map<string, string>()
  try {
    for (const [volid, targetsid] of [...plan.volumes].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const to = copyVolume(c, g, volid, opts.target, targetsid, true)
      map.set(volid, to)
      log.log('info', `volume '${volid}' is '${to}' on the target`)
    }
  } catch (e) {
    if (!(e instanceof MigrationError)) throw e
    log.log('err', e.message)
    log.log('info', 'aborting phase 1 - cleanup resources')
    for (const to of map.values()) log.log('err', `found stale volume copy '${to}' on node '${opts.target}'`)
    finalCleanupOnError(c, g, opts, plan.running, log)
    throw e
  }
  moveConfig(g, opts.target, map)
  // phase3: the local copies go
  for (const volid of map.keys()) {
    try {
      source.free(volid)
    } catch (e) {
      log.log('err', `removing local copy of '${volid}' failed - ${e instanceof Error ? e.message : String(e)}`)
    }
  }
  log.log('info', 'start final cleanup')
  g.conf.delete('lock')
  if (opts.restart && plan.running) {
    log.log('info', 'start container on target node')
    log.log(
      'info',
      `# /usr/bin/ssh -e none -o 'BatchMode=yes' -o 'HostKeyAlias=${opts.target}' -o 'UserKnownHostsFile=/etc/pve/nodes/${opts.target}/ssh_known_hosts' -o 'GlobalKnownHostsFile=none' root@${c.nodeIp(opts.target)} pct start ${g.vmid}`,
    )
    applyLxcPending(c, g, c.nodes.get(opts.target) as NodeState)
    c.setStatus(g, 'running')
  }
}

const STEPS: MigrationSteps<Options, Map<string, string>> = {
  prepare,
  scan: (c, g, opts, _running, log) => scanVolumes(c, g, opts, log),
  phase1Cleanup: finalCleanupOnError,
  finish,
}
