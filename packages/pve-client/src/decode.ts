import { PveError } from './errors.js'
import type {
  ClusterResource,
  GuestListItem,
  GuestStatus,
  GuestType,
  NodeInfo,
  NodeStatus,
  PendingEntry,
  StorageContentItem,
  StorageInfo,
  TaskLogLine,
  TaskStatus,
  VersionInfo,
} from './types.js'
import { WireError } from './wire/errors.js'
import { optBool, optInt, optNumber, optStr, toInt, toStr } from './wire/scalars.js'

/**
 * Lenient decoders from PVE's JSON to the typed results: every scalar may arrive as string, number or boolean.
 * A shape PVE never sends (e.g. an object where a list belongs) is a PVE_PROTOCOL error naming the field.
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
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new WireError('WIRE_SCALAR', 'expected an object', field)
  return v as Obj
}

export function list(v: unknown, field: string): Obj[] {
  if (!Array.isArray(v)) throw new WireError('WIRE_SCALAR', 'expected a list', field)
  return v.map((item, i) => obj(item, `${field}[${i}]`))
}

/** Copies only the keys that are present, so results have no `undefined` holes. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T
}

export function decodeVersion(v: unknown): VersionInfo {
  const o = obj(v, 'version')
  return defined({ version: toStr(o.version, 'version'), release: toStr(o.release ?? '', 'release'), repoid: optStr(o.repoid, 'repoid') })
}

export function decodeNodes(v: unknown): NodeInfo[] {
  return list(v, 'nodes').map((o, i) =>
    defined({
      node: toStr(o.node, `nodes[${i}].node`),
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

export function decodeClusterResources(v: unknown): ClusterResource[] {
  return list(v, 'resources').map((o, i) => {
    const f = (k: string) => `resources[${i}].${k}`
    return defined({
      id: toStr(o.id, f('id')),
      type: toStr(o.type, f('type')),
      node: optStr(o.node, f('node')),
      vmid: optInt(o.vmid, f('vmid')),
      name: optStr(o.name, f('name')),
      status: optStr(o.status, f('status')),
      template: optBool(o.template, f('template')),
      tags: optStr(o.tags, f('tags')),
      lock: optStr(o.lock, f('lock')),
      pool: optStr(o.pool, f('pool')),
      storage: optStr(o.storage, f('storage')),
      plugintype: optStr(o.plugintype, f('plugintype')),
      content: optStr(o.content, f('content')),
      shared: optBool(o.shared, f('shared')),
      hastate: optStr(o.hastate, f('hastate')),
      maxmem: optNumber(o.maxmem, f('maxmem')),
      mem: optNumber(o.mem, f('mem')),
      maxcpu: optNumber(o.maxcpu, f('maxcpu')),
      cpu: optNumber(o.cpu, f('cpu')),
      maxdisk: optNumber(o.maxdisk, f('maxdisk')),
      disk: optNumber(o.disk, f('disk')),
      uptime: optNumber(o.uptime, f('uptime')),
    })
  })
}

export function decodeGuestList(v: unknown, type: GuestType): GuestListItem[] {
  return list(v, type)
    .map((o, i) => {
      const f = (k: string) => `${type}[${i}].${k}`
      return defined({
        vmid: toInt(o.vmid, f('vmid')),
        type,
        name: optStr(o.name, f('name')),
        status: toStr(o.status ?? 'unknown', f('status')),
        template: optBool(o.template, f('template')) ?? false,
        lock: optStr(o.lock, f('lock')),
        tags: optStr(o.tags, f('tags')),
        qmpstatus: optStr(o.qmpstatus, f('qmpstatus')),
        cpus: optNumber(o.cpus, f('cpus')),
        maxmem: optNumber(o.maxmem, f('maxmem')),
        mem: optNumber(o.mem, f('mem')),
        maxdisk: optNumber(o.maxdisk, f('maxdisk')),
        uptime: optNumber(o.uptime, f('uptime')),
      })
    })
    .sort((a, b) => a.vmid - b.vmid)
}

export function decodePending(v: unknown): PendingEntry[] {
  return list(v, 'pending').map((o, i) => {
    const f = (k: string) => `pending[${i}].${k}`
    return defined({
      key: toStr(o.key, f('key')),
      value: optStr(o.value, f('value')),
      pending: optStr(o.pending, f('pending')),
      delete: optInt(o.delete, f('delete')),
    })
  })
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
  })
}

export function decodeStorages(v: unknown): StorageInfo[] {
  return list(v, 'storage').map((o, i) => {
    const f = (k: string) => `storage[${i}].${k}`
    return defined({
      storage: toStr(o.storage, f('storage')),
      type: toStr(o.type, f('type')),
      content: splitList(optStr(o.content, f('content'))),
      active: optBool(o.active, f('active')) ?? false,
      enabled: optBool(o.enabled, f('enabled')) ?? true,
      shared: optBool(o.shared, f('shared')) ?? false,
      avail: optNumber(o.avail, f('avail')),
      total: optNumber(o.total, f('total')),
      used: optNumber(o.used, f('used')),
    })
  })
}

export function decodeStorageContent(v: unknown): StorageContentItem[] {
  return list(v, 'content').map((o, i) => {
    const f = (k: string) => `content[${i}].${k}`
    return defined({
      volid: toStr(o.volid, f('volid')),
      content: toStr(o.content ?? '', f('content')),
      format: optStr(o.format, f('format')),
      size: optNumber(o.size, f('size')),
      vmid: optInt(o.vmid, f('vmid')),
      ctime: optNumber(o.ctime, f('ctime')),
      notes: optStr(o.notes, f('notes')),
    })
  })
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
  return s === undefined ? [] : s.split(',').map((x) => x.trim()).filter((x) => x !== '').sort()
}
