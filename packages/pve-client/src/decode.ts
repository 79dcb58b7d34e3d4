import { PveError } from './errors.js'
import type {
  MigratePrecondition,
  ClusterResource,
  GuestListItem,
  GuestStatus,
  GuestType,
  HaItem,
  HaObject,
  NodeInfo,
  NodeStatus,
  PendingEntry,
  PoolDetail,
  PoolInfo,
  SnapshotInfo,
  StorageConfigItem,
  StorageContentItem,
  StorageInfo,
  TaskLogLine,
  TaskStatus,
  VersionInfo,
} from './wire/types.js'
import { WireError } from './wire/errors.js'
import { optBool, optInt, optNumber, optStr, toInt, toKey, toStr, toVmid } from './wire/scalars.js'

/**
 * Lenient decoders from PVE's JSON to the typed results: every scalar may arrive as string, number or boolean.
 * A shape PVE never sends (e.g. an object where a list belongs) is a PVE_PROTOCOL error naming the endpoint and
 * the field. So is an item of a list without the id PVE always gives it (`toKey`, `toVmid`): the whole list is
 * unreadable, never read as if that item were absent (a create PVE would refuse).
 */

type Obj = Record<string, unknown>

export function decodeWith<T>(what: string, fn: () => T): T {
  try {
    return fn()
  } catch (err) {
    if (err instanceof WireError) throw new PveError('PVE_PROTOCOL', `${what}: ${err.message}`, { cause: err })
    throw err
  }
}

export function obj(v: unknown, field: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new WireError('WIRE_SCALAR', 'expected an object', field)
  return v as Obj
}

export function list(v: unknown, field: string): Obj[] {
  if (!Array.isArray(v)) throw new WireError('WIRE_SCALAR', 'expected a list', field)
  return v.map((item, i) => obj(item, `${field}[${i}]`))
}

/**
 * Decodes every row of a list. Field names (`resources[9999].maxmem`) are built only for an error: a
 * listing can hold 10,000 rows of 20 fields, and a name per field would be most of the decoding work.
 */
export function rows<T>(v: unknown, field: string, decode: (o: Obj) => T): T[] {
  if (!Array.isArray(v)) throw new WireError('WIRE_SCALAR', 'expected a list', field)
  const out: T[] = new Array<T>(v.length)
  for (let i = 0; i < v.length; i++) {
    try {
      out[i] = decode(obj(v[i], ''))
    } catch (err) {
      if (!(err instanceof WireError)) throw err
      throw new WireError(err.code, err.detail, err.field ? `${field}[${i}].${err.field}` : `${field}[${i}]`)
    }
  }
  return out
}

/** Copies only the keys that are present, so results have no `undefined` holes. */
export function defined<T extends object>(o: T): T {
  const out: Record<string, unknown> = {}
  for (const key in o) {
    const value = o[key]
    if (value !== undefined) out[key] = value
  }
  return out as T
}

export function decodeVersion(v: unknown): VersionInfo {
  const o = obj(v, 'version')
  return defined({
    version: toStr(o.version, 'version'),
    release: toStr(o.release ?? '', 'release'),
    repoid: optStr(o.repoid, 'repoid'),
  })
}

export function decodeNodes(v: unknown): NodeInfo[] {
  return list(v, 'nodes').map((o, i) =>
    defined({
      node: toKey(o.node, `nodes[${i}].node`),
      status: toStr(o.status ?? 'unknown', `nodes[${i}].status`),
      cpu: optNumber(o.cpu),
      maxcpu: optInt(o.maxcpu),
      mem: optNumber(o.mem),
      maxmem: optNumber(o.maxmem),
      disk: optNumber(o.disk),
      maxdisk: optNumber(o.maxdisk),
      uptime: optNumber(o.uptime),
      ssl_fingerprint: optStr(o.ssl_fingerprint),
    }),
  )
}

export function decodeNodeStatus(v: unknown): NodeStatus {
  const o = obj(v, 'status')
  const m = o.memory == null ? undefined : obj(o.memory, 'memory')
  return defined({
    uptime: optNumber(o.uptime, 'uptime'),
    cpu: optNumber(o.cpu, 'cpu'),
    pveversion: optStr(o.pveversion, 'pveversion'),
    kversion: optStr(o.kversion, 'kversion'),
    memory: m && defined({ total: optNumber(m.total), used: optNumber(m.used), free: optNumber(m.free) }),
  })
}

/** the ids a row of each type always has (PVE::API2::Cluster resources): a row without them is malformed */
const RESOURCE_IDS: Readonly<Record<string, readonly ('node' | 'vmid' | 'storage')[]>> = {
  qemu: ['vmid', 'node'],
  lxc: ['vmid', 'node'],
  node: ['node'],
  storage: ['storage', 'node'],
}

export function decodeClusterResources(v: unknown): ClusterResource[] {
  return rows(v, 'resources', (o) => {
    const type = toKey(o.type, 'type')
    for (const key of RESOURCE_IDS[type] ?? [])
      if (o[key] == null) throw new WireError('WIRE_SCALAR', `missing (a ${type} row always has it)`, key)
    return decodeResource(o, type)
  })
}

function decodeResource(o: Obj, type: string): ClusterResource {
  return defined({
    id: toKey(o.id, 'id'),
    type,
    node: o.node == null ? undefined : toKey(o.node, 'node'),
    vmid: o.vmid == null ? undefined : toVmid(o.vmid, 'vmid'),
    name: optStr(o.name, 'name'),
    status: optStr(o.status, 'status'),
    template: optBool(o.template, 'template'),
    tags: optStr(o.tags, 'tags'),
    lock: optStr(o.lock, 'lock'),
    pool: optStr(o.pool, 'pool'),
    storage: o.storage == null ? undefined : toKey(o.storage, 'storage'),
    plugintype: optStr(o.plugintype, 'plugintype'),
    content: optStr(o.content, 'content'),
    shared: optBool(o.shared, 'shared'),
    hastate: optStr(o.hastate, 'hastate'),
    maxmem: optNumber(o.maxmem, 'maxmem'),
    mem: optNumber(o.mem, 'mem'),
    maxcpu: optNumber(o.maxcpu, 'maxcpu'),
    cpu: optNumber(o.cpu, 'cpu'),
    maxdisk: optNumber(o.maxdisk, 'maxdisk'),
    disk: optNumber(o.disk, 'disk'),
    uptime: optNumber(o.uptime, 'uptime'),
  })
}

export function decodeGuestList(v: unknown, type: GuestType): GuestListItem[] {
  return rows(v, type, (o) =>
    defined({
      vmid: toVmid(o.vmid, 'vmid'),
      type,
      name: optStr(o.name, 'name'),
      status: toStr(o.status ?? 'unknown', 'status'),
      template: optBool(o.template, 'template') ?? false,
      lock: optStr(o.lock, 'lock'),
      tags: optStr(o.tags, 'tags'),
      qmpstatus: optStr(o.qmpstatus, 'qmpstatus'),
      cpus: optNumber(o.cpus, 'cpus'),
      maxmem: optNumber(o.maxmem, 'maxmem'),
      mem: optNumber(o.mem, 'mem'),
      maxdisk: optNumber(o.maxdisk, 'maxdisk'),
      uptime: optNumber(o.uptime, 'uptime'),
    }),
  ).sort((a, b) => a.vmid - b.vmid)
}

export function decodePending(v: unknown): PendingEntry[] {
  return rows(v, 'pending', (o) =>
    defined({
      key: toKey(o.key, 'key'),
      value: optStr(o.value, 'value'),
      pending: optStr(o.pending, 'pending'),
      delete: optInt(o.delete, 'delete'),
    }),
  )
}

export function decodeGuestStatus(v: unknown): GuestStatus {
  const o = obj(v, 'status')
  const ha = o.ha == null || typeof o.ha !== 'object' ? undefined : (o.ha as Obj)
  return defined({
    status: toStr(o.status, 'status'),
    qmpstatus: optStr(o.qmpstatus, 'qmpstatus'),
    lock: optStr(o.lock, 'lock'),
    template: optBool(o.template, 'template'),
    name: optStr(o.name, 'name'),
    uptime: optNumber(o.uptime, 'uptime'),
    cpus: optNumber(o.cpus, 'cpus'),
    maxmem: optNumber(o.maxmem, 'maxmem'),
    mem: optNumber(o.mem, 'mem'),
    haManaged: ha ? optBool(ha.managed, 'ha.managed') : undefined,
    haState: ha ? optStr(ha.state, 'ha.state') : undefined,
  })
}

/** qemu-server's and pve-container's migrate_vm_precondition answers (qemu writes `_`, the container `-`) */
export function decodeMigratePrecondition(v: unknown): MigratePrecondition {
  const o = obj(v, 'migrate')
  const names = (x: unknown, field: string): string[] => {
    if (x == null) return []
    if (!Array.isArray(x)) throw new WireError('WIRE_SCALAR', 'expected a list', field)
    return x.map((s, i) => toStr(s, `${field}[${i}]`))
  }
  const notAllowed: Record<string, string[]> = {}
  const na = o.not_allowed_nodes ?? o['not-allowed-nodes']
  if (na != null) {
    for (const [node, info] of Object.entries(obj(na, 'not_allowed_nodes'))) {
      const i = obj(info, `not_allowed_nodes.${node}`)
      const reasons: string[] = []
      const storages = names(i.unavailable_storages, `not_allowed_nodes.${node}.unavailable_storages`)
      if (storages.length > 0) reasons.push(`storage ${storages.join(', ')} not available there`)
      const missing = names(i['unavailable-resources'], `not_allowed_nodes.${node}.unavailable-resources`)
      if (missing.length > 0) reasons.push(`mapped device ${missing.join(', ')} missing there`)
      if (i['blocking-ha-resources'] != null) {
        const blocking = list(i['blocking-ha-resources'], `not_allowed_nodes.${node}.blocking-ha-resources`)
        reasons.push(
          `HA resource ${blocking.map((b) => optStr(b.sid, 'sid') ?? '?').join(', ')} in negative affinity there`,
        )
      }
      notAllowed[node] = reasons
    }
  }
  const localDisks =
    o.local_disks == null
      ? []
      : list(o.local_disks, 'local_disks').map((d) =>
          defined({
            volid: toStr(d.volid, 'local_disks.volid'),
            cdrom: optBool(d.cdrom, 'local_disks.cdrom') ?? false,
            cloudInit: optBool(d.is_cloudinit, 'local_disks.is_cloudinit') || undefined,
            snapshots:
              d.referenced_in_snapshot == null
                ? undefined
                : Object.keys(obj(d.referenced_in_snapshot, 'local_disks.referenced_in_snapshot')).sort(),
            drive: optStr(d.drivename, 'local_disks.drivename'),
          }),
        )
  return {
    running: optBool(o.running, 'running') ?? false,
    allowedNodes: names(o.allowed_nodes ?? o['allowed-nodes'], 'allowed_nodes'),
    notAllowed,
    localDisks,
    localResources: names(o.local_resources, 'local_resources'),
    mappedResources: names(o['mapped-resources'], 'mapped-resources'),
  }
}

export function decodeStorages(v: unknown): StorageInfo[] {
  return rows(v, 'storage', (o) =>
    defined({
      storage: toKey(o.storage, 'storage'),
      type: toKey(o.type, 'type'),
      content: splitList(optStr(o.content, 'content')),
      active: optBool(o.active, 'active') ?? false,
      enabled: optBool(o.enabled, 'enabled') ?? true,
      shared: optBool(o.shared, 'shared') ?? false,
      avail: optNumber(o.avail, 'avail'),
      total: optNumber(o.total, 'total'),
      used: optNumber(o.used, 'used'),
    }),
  )
}

/** `GET /pools`: poolid and the comment PVE keeps (an empty one is never stored) */
export function decodePools(v: unknown): PoolInfo[] {
  return rows(v, 'pools', (o) => defined({ poolid: toKey(o.poolid, 'poolid'), comment: optStr(o.comment, 'comment') }))
}

/** `GET .../snapshot`: the snapshots without PVE's `current` pseudo-entry */
export function decodeSnapshots(v: unknown): SnapshotInfo[] {
  return rows(v, 'snapshots', (o) =>
    defined({
      name: toKey(o.name, 'name'),
      snaptime: optInt(o.snaptime, 'snaptime'),
      description: optStr(o.description, 'description'),
      parent: optStr(o.parent, 'parent'),
      snapstate: optStr(o.snapstate, 'snapstate'),
    }),
  ).filter((s) => s.name !== 'current')
}

/** `GET /pools?poolid=`: a one-item list (read_pool's deprecated path answers the object itself) */
export function decodePoolDetail(v: unknown): PoolDetail {
  const o = Array.isArray(v) ? obj(v[0], 'pools[0]') : obj(v, 'pool')
  return defined({
    poolid: toKey(o.poolid, 'poolid'),
    comment: optStr(o.comment, 'comment'),
    members: rows(o.members ?? [], 'members', (m) => {
      const type = toKey(m.type, 'type')
      // a guest member is known by its vmid (kinds/pool/read.ts): without one it would read as no member
      const guest = type === 'qemu' || type === 'lxc'
      return defined({
        type,
        id: toKey(m.id, 'id'),
        node: optStr(m.node, 'node'),
        vmid: guest ? toVmid(m.vmid, 'vmid') : optInt(m.vmid, 'vmid'),
        storage: optStr(m.storage, 'storage'),
      })
    }),
  })
}

export function decodeStorageContent(v: unknown): StorageContentItem[] {
  return rows(v, 'content', (o) =>
    defined({
      volid: toKey(o.volid, 'volid'),
      content: toStr(o.content ?? '', 'content'),
      format: optStr(o.format, 'format'),
      size: optNumber(o.size, 'size'),
      vmid: optInt(o.vmid, 'vmid'),
      ctime: optNumber(o.ctime, 'ctime'),
      notes: optStr(o.notes, 'notes'),
    }),
  )
}

export function decodeTaskStatus(v: unknown, fallbackNode: string): TaskStatus {
  const o = obj(v, 'task')
  const status = toStr(o.status, 'status')
  return defined({
    upid: toStr(o.upid, 'upid'),
    node: toStr(o.node ?? fallbackNode, 'node'),
    type: toStr(o.type ?? '', 'type'),
    id: toStr(o.id ?? '', 'id'),
    status: status === 'stopped' ? ('stopped' as const) : ('running' as const),
    exitstatus: optStr(o.exitstatus, 'exitstatus'),
    user: optStr(o.user, 'user'),
    starttime: optNumber(o.starttime, 'starttime'),
  })
}

export function decodeTaskLog(v: unknown): TaskLogLine[] {
  return list(v, 'log').map((o, i) => ({ n: toInt(o.n, `log[${i}].n`), t: toStr(o.t ?? '', `log[${i}].t`) }))
}

function splitList(s: string | undefined): string[] {
  return s === undefined
    ? []
    : s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '')
        .sort()
}

/** the id of an item of each HA list (pve-ha-manager's API2::HA::Resources, Groups, Rules index) */
const HA_IDS: Readonly<Record<HaObject, string>> = { resources: 'sid', groups: 'group', rules: 'rule' }

/** `GET /cluster/ha/{resources|groups|rules}`: every scalar option as a string; each item must carry its id. */
export function decodeHaConfig(v: unknown, object: HaObject): HaItem[] {
  const id = HA_IDS[object]
  return rows(v, object, (o) => {
    toKey(o[id], id)
    const out: Record<string, string> = {}
    for (const [k, x] of Object.entries(o))
      if (typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean') out[k] = String(x)
    return out
  })
}

/**
 * `GET /storage`: each section with its options as strings (numbers and booleans, which PVE may send as either,
 * become decimal text and 1/0). An item without a string `storage` id or `type` makes the list malformed.
 */
export function decodeStorageConfigs(v: unknown): StorageConfigItem[] {
  return rows(v, 'storage', (o) => {
    const storage = toKey(o.storage, 'storage')
    if (typeof o.type !== 'string' || o.type === '')
      throw new WireError('WIRE_SCALAR', 'expected a storage type', 'type')
    const values: Record<string, string> = {}
    for (const [k, x] of Object.entries(o)) {
      if (k === 'storage' || k === 'type' || k === 'digest' || x === null || x === undefined) continue
      if (typeof x === 'boolean') values[k] = x ? '1' : '0'
      else if (typeof x === 'string' || typeof x === 'number') values[k] = String(x)
      else throw new WireError('WIRE_SCALAR', 'expected a scalar option', k)
    }
    return defined({ storage, type: o.type, values, digest: optStr(o.digest, 'digest') })
  })
}

/**
 * `GET /cluster/options` (PVE::API2::Cluster get_options): datacenter.cfg with its property strings read back as
 * objects; here every option in string form again: an object as `key=value` pairs with sorted keys, a list joined
 * with `;` (registered-tags, user-allow-list), booleans 1/0. `allowed-tags` is not an option and is left out.
 */
export function decodeClusterOptions(v: unknown): Record<string, string> {
  const o = obj(v, 'options')
  const scalar = (x: unknown, field: string): string => {
    if (typeof x === 'boolean') return x ? '1' : '0'
    if (typeof x === 'string' || typeof x === 'number') return String(x)
    if (Array.isArray(x)) return x.map((y) => scalar(y, field)).join(';')
    throw new WireError('WIRE_SCALAR', 'expected a scalar', field)
  }
  const out: Record<string, string> = {}
  for (const [k, x] of Object.entries(o)) {
    if (k === 'allowed-tags' || x === null || x === undefined) continue
    if (typeof x === 'object' && !Array.isArray(x))
      out[k] = Object.keys(x)
        .sort()
        .filter((p) => (x as Record<string, unknown>)[p] != null)
        .map((p) => `${p}=${scalar((x as Record<string, unknown>)[p], `${k}.${p}`)}`)
        .join(',')
    else out[k] = scalar(x, k)
  }
  return out
}

/** One vzdump job of `GET /cluster/backup` (PVE::API2::Backup index), every option in string form. */
export interface BackupJobItem {
  id: string
  values: Record<string, string>
}

/**
 * `GET /cluster/backup`: `prune-backups`, `fleecing` and `performance` arrive as objects and are printed back as
 * property strings with sorted keys (as jobs.cfg holds them); booleans and numbers, which PVE may send as either,
 * become `1`/`0` and decimal text. `id`, `type` and the computed `next-run` are not options.
 */
export function decodeBackupJobs(v: unknown): BackupJobItem[] {
  return rows(v, 'backup jobs', (o) => {
    if (typeof o.id !== 'string' || o.id === '') throw new WireError('WIRE_SCALAR', 'expected a job id', 'id')
    // a job whose type is not a string is not "another kind of job" to leave out: the list is malformed
    if (o.type != null && typeof o.type !== 'string') throw new WireError('WIRE_SCALAR', 'expected a job type', 'type')
    const values: Record<string, string> = {}
    for (const [k, x] of Object.entries(o)) {
      if (k === 'id' || k === 'type' || k === 'next-run' || x === null || x === undefined) continue
      if (typeof x === 'boolean') values[k] = x ? '1' : '0'
      else if (Array.isArray(x)) values[k] = x.map(String).join(',')
      else if (typeof x === 'object')
        values[k] = Object.keys(x)
          .sort()
          .map((p) => `${p}=${String((x as Record<string, unknown>)[p])}`)
          .join(',')
      else values[k] = String(x)
    }
    return { id: o.id, type: o.type, values }
  })
    .filter((j) => j.type === undefined || j.type === 'vzdump')
    .map(({ id, values }) => ({ id, values }))
}
