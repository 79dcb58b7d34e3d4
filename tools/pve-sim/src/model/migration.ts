import { mapId, parseIdmap, PerlDie, type IdMap } from '../apidoc/formats.js'
import type { Caller } from './caller.js'
import type { Cluster, Guest, NodeState } from './cluster.js'
import { fail400, fail500 } from './errors.js'
import { type Volume } from './storage.js'
import type { TaskContext } from './tasks.js'

/**
 * What qemu-server's and pve-container's migrations share (pve-guest-common PVE::AbstractMigrate and the API
 * handlers' common checks): the target's checks, the storage map, the task log's timestamped lines, the volume
 * copy of storage_migrate, and moving the config to the target (move_config_to_node). The migrations themselves
 * are model/migrate-qemu.ts and model/migrate-lxc.ts (docs/simulator-model.md, "Migration").
 */

/** the checks both migrate_vm handlers make first: not the local node, quorum, a cluster member */
export function checkTarget(c: Cluster, node: string, target: string): void {
  if (target === node) throw fail400({ target: 'target is local node.' })
  c.checkCfsQuorum()
  c.checkNodeExists(target)
}

/** the start both migrate_vm handlers share: the node, the target's checks (checkTarget), the guest */
export function migrationSubject(
  c: Cluster,
  nodeName: string,
  type: 'qemu' | 'lxc',
  vmid: number,
  params: Record<string, unknown>,
): { g: Guest; target: string } {
  c.requireNode(nodeName)
  const target = String(params.target)
  checkTarget(c, nodeName, target)
  return { g: c.requireGuest(nodeName, type, vmid), target }
}

/**
 * The storage map parameter (qemu-server `targetstorage`, pve-container `target-storage`), parsed, each of its
 * target storages checked on the target for the guest type's content; undefined without one
 */
export function targetStorageMap(
  c: Cluster,
  params: Record<string, unknown>,
  param: 'targetstorage' | 'target-storage',
  target: string,
  content: 'images' | 'rootdir',
): IdMap | undefined {
  const map = parseStorageMap(params[param] === undefined ? undefined : String(params[param]), param)
  if (map) for (const sid of mapTargets(map)) checkTargetStorage(c, sid, target, content)
  return map
}

/** parse_idmap($targetstorage, 'pve-storage-id') as the handlers call it: a parse error is a parameter error */
export function parseStorageMap(text: string | undefined, param: string): IdMap | undefined {
  if (text === undefined || text === '') return undefined
  try {
    return parseIdmap(text, 'pve-storage-id')
  } catch (e) {
    if (e instanceof PerlDie) throw fail400({ [param]: `failed to parse storage map: ${e.message.trimEnd()}` })
    throw e
  }
}

/** the storages a map sends volumes to: every entry's target and the default */
export function mapTargets(map: IdMap): string[] {
  return [...new Set([...map.entries.values(), ...(map.default !== undefined ? [map.default] : [])])]
}

export { mapId, type IdMap }

/**
 * `$check_storage_access_migrate` (each handler has its own) without its privilege check, which the access layer
 * makes: the storage is enabled on the target node and takes the guest's volumes (qemu images, CT rootdirs)
 */
export function checkTargetStorage(c: Cluster, storage: string, target: string, content: 'images' | 'rootdir'): void {
  const d = (c.nodes.get(target) as NodeState).storage.checkEnabled(storage)
  if (!d.content.includes(content))
    throw fail500(`storage '${storage}' does not support ${content === 'images' ? 'vm images' : 'CT rootdirs'}`)
}

/** `%F %H:%M:%S` of the node's local time zone (UTC on simulated nodes) */
function stamp(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19)
}

/**
 * AbstractMigrate's log: each line prefixed with the time, `ERROR:` added for level `err`. Lines are collected
 * as the migration goes (prepare at dispatch, the rest when the task ends) and written to the task log at its end.
 */
export class MigrationLog {
  readonly lines: string[] = []
  readonly startMs: number

  constructor(private readonly c: Cluster) {
    this.startMs = c.now()
  }

  log(level: 'info' | 'warn' | 'err', message: string): void {
    const prefix = `${stamp(this.c.now())}${level === 'err' ? ' ERROR:' : ''}`
    for (const line of message.replace(/\n+$/, '').split('\n')) if (line !== '') this.lines.push(`${prefix} ${line}`)
  }

  /** `(duration HH:MM:SS)` since the migration began */
  duration(): string {
    const s = Math.floor((this.c.now() - this.startMs) / 1000)
    const pad = (n: number) => String(n).padStart(2, '0')
    return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`
  }
}

/** a migration step that died: its message, as `die "...\n"` gives it */
export class MigrationError extends Error {}

/**
 * pve-storage storage_migrate (local to local, with `allow_rename`): the volume is received on the target's storage
 * (NodeStorage.receive) and the source copy stays until the migration frees it. Returns the new volid.
 */
export function copyVolume(
  c: Cluster,
  g: Guest,
  volid: string,
  targetNode: string,
  targetStorage: string,
  ct: boolean,
): string {
  const source = (c.nodes.get(g.node) as NodeState).storage
  const v: Volume | undefined = source.get(volid)
  if (!v)
    throw new MigrationError(
      `storage migration for '${volid}' to storage '${targetStorage}' failed - volume '${volid}' does not exist`,
    )
  const target = (c.nodes.get(targetNode) as NodeState).storage
  try {
    return target.receive(targetStorage, v, g.vmid, { ct }).volid
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    throw new MigrationError(`storage migration for '${volid}' to storage '${targetStorage}' failed - ${message}`)
  }
}

/**
 * move_config_to_node: the config file moves to the target node's directory in /etc/pve (a rename in pmxcfs), so
 * the guest is the target's from now on; the copied volumes' ids are written into it first (update_volume_ids)
 */
export function moveConfig(g: Guest, target: string, volumeMap: ReadonlyMap<string, string>): void {
  if (volumeMap.size > 0) {
    // one volume per value: the positional first item, or `file=` / `volume=`
    const rename = (value: string) => {
      for (const [from, to] of volumeMap) {
        if (value === from || value.startsWith(`${from},`)) return to + value.slice(from.length)
        const named = new RegExp(`((?:^|,)(?:file|volume)=)${escape(from)}(?=,|$)`)
        if (named.test(value)) return value.replace(named, `$1${to}`)
      }
      return value
    }
    for (const k of g.conf.keys()) g.conf.set(k, rename(g.conf.get(k) as string))
    for (const [k, v] of Object.entries(g.conf.pending())) g.conf.setPending(k, rename(v))
    for (const name of g.conf.snapshotNames()) {
      const snap = g.conf.snapshot(name) as Record<string, string>
      g.conf.setSnapshot(name, Object.fromEntries(Object.entries(snap).map(([k, v]) => [k, rename(v)])))
    }
  }
  g.node = target
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')

/** a PVE die inside the worker: its message ends the migration */
export function migrationStep<T>(code: () => T): T {
  try {
    return code()
  } catch (e) {
    if (e instanceof Error && !(e instanceof MigrationError)) throw new MigrationError(e.message)
    throw e
  }
}

/** what prepare and phase 1 found, at dispatch: whether the guest ran, and the volumes `finish` moves */
export interface MigrationPlan<V> {
  running: boolean
  volumes: V
}

/** one guest type's migration steps (PVE::QemuMigrate, PVE::LXC::Migrate), given its handler's options */
export interface MigrationSteps<O extends { target: string }, V> {
  /** prepare, after check_lock: returns whether the guest runs */
  prepare(c: Cluster, g: Guest, opts: O, log: MigrationLog): boolean
  /** phase 1's volume scan, run at dispatch (after `lock: migrate`): the volumes to move */
  scan(c: Cluster, g: Guest, opts: O, running: boolean, log: MigrationLog): V
  /** what the type cleans up when the scan dies (phase1_cleanup; LXC also final_cleanup) */
  phase1Cleanup(c: Cluster, g: Guest, opts: O, running: boolean, log: MigrationLog): void
  /** the rest of the migration, when the task runs */
  finish(c: Cluster, g: Guest, opts: O, plan: MigrationPlan<V>, log: MigrationLog): void
}

/** `die "...\n"` in a migration step */
export function migrationFail(message: string): never {
  throw new MigrationError(message)
}

/**
 * The migration worker both guest types dispatch (`qmigrate`, `vzmigrate`): guest_migration_lock, then
 * PVE::AbstractMigrate::migrate around the type's steps. A second migration of the guest while one runs fails on
 * the lock; a step's die aborts the migration with its message in the task log; the migrate lock and the config
 * flock (lock_vm / lock_config) are held for the whole migration. Both types' prepare begin with check_lock.
 */
export function dispatchMigration<O extends { target: string }, V>(
  c: Cluster,
  g: Guest,
  taskType: 'qmigrate' | 'vzmigrate',
  caller: Caller,
  byHa: boolean,
  steps: MigrationSteps<O, V>,
  opts: O,
): string {
  const target = opts.target
  // an HA-managed guest is handed to HA (`hamigrate`: ha-manager migrate) unless the HA stack itself asks
  if (!byHa && c.ha.managed(g)) return c.ha.migrateRequest(g, target, caller)
  const vmid = g.vmid
  const source = g.node
  const log = new MigrationLog(c)
  const held = c.migrationLocks.get(vmid)
  const lockedOut = held !== undefined && c.tasks.peek(held)?.status === 'running'
  let plan: MigrationPlan<V> | undefined
  let failure: string | undefined
  if (!lockedOut) {
    try {
      const e = c.flockError(g.type, vmid)
      if (e) throw new MigrationError(e)
      const locked = c.lockError(g)
      if (locked) migrationFail(locked)
      const running = steps.prepare(c, g, opts, log)
      plan = { running, volumes: phase1(c, g, opts, running, log, steps) }
    } catch (e) {
      if (!(e instanceof MigrationError)) throw e
      failure = e.message
    }
  }
  const upid: string = c.dispatch(source, taskType, String(vmid), caller.actor, {
    run: (ctx) => {
      if (lockedOut) throw new Error(`can't lock file '/var/lock/pve-manager/pve-migrate-${vmid}' - got timeout`)
      try {
        if (failure !== undefined || plan === undefined) throw new MigrationError(failure ?? 'migration not prepared')
        steps.finish(c, g, opts, plan, log)
      } catch (e) {
        if (!(e instanceof MigrationError)) throw e
        log.log('err', `migration aborted (duration ${log.duration()}): ${e.message}`)
        flush(ctx, log)
        throw new Error('migration aborted')
      } finally {
        release()
      }
      log.log('info', `migration finished successfully (duration ${log.duration()})`)
      flush(ctx, log)
    },
    onError: () => {
      release()
      if (g.conf.get('lock') === 'migrate' && g.node === source) g.conf.delete('lock')
    },
  })
  const release = () => {
    if (c.migrationLocks.get(vmid) === upid) c.migrationLocks.delete(vmid)
  }
  if (!lockedOut) {
    c.migrationLocks.set(vmid, upid)
    c.holdFlock(vmid, { mode: 'exclusive', upid })
  }
  return upid
}

/**
 * phase1 up to the copies, as both types begin it: `starting migration`, `lock: migrate`, then the type's scan. A
 * die in the scan is logged, `aborting phase 1`, and the type's cleanup runs before the die goes on.
 */
function phase1<O extends { target: string }, V>(
  c: Cluster,
  g: Guest,
  opts: O,
  running: boolean,
  log: MigrationLog,
  steps: MigrationSteps<O, V>,
): V {
  const label = g.type === 'qemu' ? 'VM' : 'CT'
  log.log('info', `starting migration of ${label} ${g.vmid} to node '${opts.target}' (${c.nodeIp(opts.target)})`)
  g.conf.set('lock', 'migrate')
  try {
    return steps.scan(c, g, opts, running, log)
  } catch (e) {
    if (!(e instanceof MigrationError)) throw e
    log.log('err', e.message)
    log.log('info', 'aborting phase 1 - cleanup resources')
    steps.phase1Cleanup(c, g, opts, running, log)
    throw e
  }
}

function flush(ctx: TaskContext, log: MigrationLog): void {
  for (const line of log.lines) ctx.log(line)
  log.lines.length = 0
}
