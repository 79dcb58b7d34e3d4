import type { Cluster, Guest } from './cluster.js'
import { parsePropString, FORMATS } from './propstring.js'
import { parseDiskSize, MiB } from './sizes.js'
import { isQemuDiskKey } from './options.js'

/** Read-only views: /version, /nodes, /cluster/resources, guest lists and status (pve-api.md section 5.1). */

export function memoryBytes(g: Guest): number {
  const m = g.conf.get('memory')
  if (m === undefined) return 512 * MiB
  // qemu memory is a property string `current=2048` (bare value = current), lxc an integer
  const current = m.includes('=') ? /(?:^|,)current=(\d+)/.exec(m)?.[1] : m.split(',')[0]
  return Number(current ?? 512) * MiB
}

export function cpuCount(c: Cluster, g: Guest): number {
  if (g.type === 'qemu') {
    const vcpus = Number(g.conf.get('vcpus') ?? 0)
    return vcpus > 0 ? vcpus : Number(g.conf.get('sockets') ?? 1) * Number(g.conf.get('cores') ?? 1)
  }
  return Number(g.conf.get('cores') ?? c.nodes.get(g.node)?.maxcpu ?? 1)
}

/** the size of the boot disk (qemu: first disk in bootdisk order; lxc: rootfs) */
export function maxDisk(g: Guest): number {
  const conf = g.conf
  if (g.type === 'lxc') return driveSize(conf.get('rootfs'), true)
  for (const bus of ['scsi', 'virtio', 'sata', 'ide']) {
    for (const k of conf
      .keys()
      .filter((k) => k.startsWith(bus) && isQemuDiskKey(k))
      .sort()) {
      const v = conf.get(k) ?? ''
      if (!v.includes('media=cdrom')) return driveSize(v, false)
    }
  }
  return 0
}

function driveSize(value: string | undefined, lxc: boolean): number {
  if (!value) return 0
  try {
    const p = parsePropString(value, lxc ? FORMATS.lxcMount : FORMATS.drive)
    return p.size ? (parseDiskSize(p.size) ?? 0) : 0
  } catch {
    return 0
  }
}

export function version(c: Cluster): Record<string, unknown> {
  const v = c.version
  return { version: v.version, release: v.release, repoid: v.repoid }
}

export function nodesList(c: Cluster): Record<string, unknown>[] {
  const now = c.now()
  return [...c.nodes.values()].map((n) => {
    const item: Record<string, unknown> = {
      node: n.name,
      status: n.online ? 'online' : 'offline',
      id: `node/${n.name}`,
      type: 'node',
      level: '',
      ssl_fingerprint: fingerprintFor(n.name),
    }
    if (n.online) {
      Object.assign(item, {
        cpu: 0.03,
        maxcpu: n.maxcpu,
        mem: Math.floor(n.maxmem / 8),
        maxmem: n.maxmem,
        disk: 10 * 1024 ** 3,
        maxdisk: 100 * 1024 ** 3,
        uptime: Math.floor((now - n.bootMs) / 1000),
      })
    }
    return item
  })
}

function fingerprintFor(node: string): string {
  let h = 0
  const bytes: string[] = []
  for (let i = 0; i < 32; i++) {
    h = (h * 31 + (node.charCodeAt(i % node.length) || 7) + i) & 0xff
    bytes.push(h.toString(16).toUpperCase().padStart(2, '0'))
  }
  return bytes.join(':')
}

/** config-derived sizes, cached per config version (the 10,000-guest /cluster/resources stays cheap) */
const sizeCache = new WeakMap<
  Guest,
  { version: number; conf: object; maxcpu: number; maxmem: number; maxdisk: number }
>()

function sizes(c: Cluster, g: Guest): { maxcpu: number; maxmem: number; maxdisk: number } {
  const hit = sizeCache.get(g)
  if (hit && hit.conf === g.conf && hit.version === g.conf.version) return hit
  const fresh = {
    version: g.conf.version,
    conf: g.conf,
    maxcpu: cpuCount(c, g),
    maxmem: memoryBytes(g),
    maxdisk: maxDisk(g),
  }
  sizeCache.set(g, fresh)
  return fresh
}

function guestStats(c: Cluster, g: Guest, status: string): Record<string, unknown> {
  const running = g.status === 'running'
  const { maxcpu, maxmem, maxdisk } = sizes(c, g)
  return {
    maxcpu,
    cpu: running ? 0.01 : 0,
    maxmem,
    mem: running ? Math.floor(maxmem / 4) : 0,
    maxdisk,
    disk: 0,
    netin: 0,
    netout: 0,
    diskread: 0,
    diskwrite: 0,
    uptime:
      running && g.startedMs !== undefined && status === 'running' ? Math.floor((c.now() - g.startedMs) / 1000) : 0,
  }
}

/** a /cluster/resources item for a guest; fresh guests have status unknown and no stats yet */
export function resourceItem(c: Cluster, g: Guest): Record<string, unknown> {
  const item: Record<string, unknown> = { id: `${g.type}/${g.vmid}`, type: g.type, vmid: g.vmid, node: g.node }
  if (c.isFresh(g)) {
    item.status = 'unknown'
    return item
  }
  const status = c.visibleStatus(g)
  item.status = status
  item.name = guestName(g)
  item.template = g.conf.get('template') === '1' ? 1 : 0
  Object.assign(item, guestStats(c, g, status))
  const tags = g.conf.get('tags')
  if (tags !== undefined) item.tags = tags
  const lock = g.conf.get('lock')
  if (lock !== undefined) item.lock = lock
  // pve-manager API2/Cluster.pm resources: the manager's service state, else the configured request state
  const hastate = c.ha.hastate(g)
  if (hastate !== undefined) item.hastate = hastate
  return item
}

export function guestName(g: Guest): string {
  if (g.type === 'lxc') return g.conf.get('hostname') ?? `CT${g.vmid}`
  return g.conf.get('name') ?? `VM ${g.vmid}`
}

export function clusterResources(c: Cluster, type: string | undefined): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  if (type === undefined || type === 'vm') {
    for (const g of c.guests.values()) {
      if (c.nodes.get(g.node)?.online === false) {
        out.push({
          id: `${g.type}/${g.vmid}`,
          type: g.type,
          vmid: g.vmid,
          node: g.node,
          status: 'unknown',
          name: guestName(g),
        })
      } else out.push(resourceItem(c, g))
    }
  }
  if (type === undefined || type === 'node') {
    for (const n of nodesList(c)) out.push({ ...n, id: `node/${n.node as string}` })
  }
  if (type === undefined || type === 'storage') {
    for (const n of c.nodes.values()) {
      for (const d of n.storage.defs) {
        const s = n.storage.statusItem(d)
        out.push({
          id: `storage/${n.name}/${d.id}`,
          type: 'storage',
          storage: d.id,
          node: n.name,
          status: n.online ? 'available' : 'unknown',
          plugintype: d.type,
          content: s.content,
          shared: 0,
          disk: s.used,
          maxdisk: s.total,
        })
      }
    }
  }
  return out
}

/** GET /nodes/{node}/qemu and /lxc items */
export function guestListItem(c: Cluster, g: Guest): Record<string, unknown> {
  const stats = guestStats(c, g, g.status)
  const item: Record<string, unknown> = { vmid: g.vmid, name: guestName(g), status: g.status }
  if (g.type === 'qemu') {
    Object.assign(item, {
      cpus: stats.maxcpu,
      maxmem: stats.maxmem,
      mem: stats.mem,
      maxdisk: stats.maxdisk,
      disk: 0,
      cpu: stats.cpu,
      uptime: stats.uptime,
      netin: 0,
      netout: 0,
      diskread: 0,
      diskwrite: 0,
    })
  } else {
    Object.assign(item, {
      type: 'lxc',
      cpus: stats.maxcpu,
      maxmem: stats.maxmem,
      mem: stats.mem,
      maxdisk: stats.maxdisk,
      disk: 0,
      cpu: stats.cpu,
      uptime: stats.uptime,
      maxswap: Number(g.conf.get('swap') ?? 512) * MiB,
      swap: 0,
      netin: 0,
      netout: 0,
      diskread: 0,
      diskwrite: 0,
    })
  }
  if (g.status === 'running') item.pid = 10000 + g.vmid
  if (g.conf.get('template') === '1') item.template = 1
  const tags = g.conf.get('tags')
  if (tags !== undefined) item.tags = tags
  const lock = g.conf.get('lock')
  if (lock !== undefined) item.lock = lock
  return item
}

/** GET .../status/current */
export function guestStatusCurrent(c: Cluster, g: Guest): Record<string, unknown> {
  const item = guestListItem(c, g)
  if (g.type === 'qemu') {
    item.qmpstatus = g.status === 'running' ? (g.paused ? 'paused' : 'running') : 'stopped'
    if (g.paused) item.status = 'running'
    item.ha = c.ha.serviceStatus(g)
    const agent = g.conf.get('agent')
    if (agent !== undefined && /^(1|enabled=1)/.test(agent)) item.agent = 1
    if (g.status === 'running') {
      item['running-qemu'] = c.version.qemu
      item['running-machine'] = 'pc-i440fx-' + c.version.qemu.split('.').slice(0, 2).join('.') + '+pve0'
    }
  } else {
    item.ha = c.ha.serviceStatus(g)
  }
  return item
}

/** compute the cached sizes of every guest up front (after preloading an estate) */
export function warmStats(c: Cluster): void {
  for (const g of c.guests.values()) sizes(c, g)
}
