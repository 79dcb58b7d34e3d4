import type { Cluster, Guest, NodeState } from './cluster.js'
import type { StorageDef } from './storage.js'
import { parsePropString, FORMATS } from './propstring.js'
import { parseDiskSize, MiB } from './sizes.js'
import { isQemuDiskKey } from './options.js'

/** Read-only views: /version, /nodes, /cluster/resources, guest lists and status. */

export function memoryBytes(g: Guest): number {
  const m = g.conf.get('memory')
  if (m === undefined) return 512 * MiB
  // qemu memory is a property string `current=2048` (bare value = current), lxc an integer
  const current = m.includes('=') ? /(?:^|,)current=(\d+)/.exec(m)?.[1] : m.split(',')[0]
  return Number(current ?? 512) * MiB
}

/** vmstatus `cpus`: qemu sockets x cores (at most the host's CPUs) or vcpus; lxc cores, else cpulimit, else the host's */
export function cpuCount(c: Cluster, g: Guest): number {
  const host = c.nodes.get(g.node)?.maxcpu ?? 1
  if (g.type === 'qemu') {
    const vcpus = Number(g.conf.get('vcpus') ?? 0)
    if (vcpus > 0) return vcpus
    return Math.min(host, Number(g.conf.get('sockets') ?? 1) * Number(g.conf.get('cores') ?? 1))
  }
  return Number(g.conf.get('cores') ?? 0) || Number(g.conf.get('cpulimit') ?? 0) || host
}

/**
 * qemu: bootdisk_size (the first non-cdrom drive of `boot: order=`, or the legacy `bootdisk`; 0 without one);
 * lxc: the rootfs size, 4 GiB without one (pve-container vmstatus)
 */
export function maxDisk(g: Guest): number {
  const conf = g.conf
  if (g.type === 'lxc') return driveSize(conf.get('rootfs'), true) || 4 * 1024 ** 3
  const boot = conf.get('boot')
  const order = boot !== undefined && /(^|,)order=/.test(boot) ? /(?:^|,)order=([^,]*)/.exec(boot)?.[1] : undefined
  const disks = order !== undefined ? order.split(/[;,\s]+/) : [conf.get('bootdisk') ?? '']
  for (const k of disks) {
    if (!isQemuDiskKey(k)) continue
    const v = conf.get(k)
    if (v === undefined || v.split(',').includes('media=cdrom')) continue
    return driveSize(v, false)
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
    // API2Tools extract_node_stats: an offline node keeps the sizes of its last rrd entry, but no usage
    if (n.online) {
      Object.assign(item, {
        cpu: 0.03,
        mem: Math.floor(n.maxmem / 8),
        disk: 10 * 1024 ** 3,
        uptime: Math.floor((now - n.bootMs) / 1000),
      })
    }
    Object.assign(item, { maxcpu: n.maxcpu, maxmem: n.maxmem, maxdisk: 100 * 1024 ** 3 })
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

type Item = Record<string, unknown>

/** the cgroup pressure averages vmstatus reports for running guests (PVE 9) */
function pressures(c: Cluster): Item {
  if (c.pveVersion !== '9.1') return {}
  return {
    pressurecpusome: 0,
    pressurecpufull: 0,
    pressureiosome: 0,
    pressureiofull: 0,
    pressurememorysome: 0,
    pressurememoryfull: 0,
  }
}

function uptimeOf(c: Cluster, g: Guest): number {
  return g.status === 'running' && g.startedMs !== undefined ? Math.floor((c.now() - g.startedMs) / 1000) : 0
}

/**
 * qemu-server PVE::QemuServer::vmstatus for one VM. Without `full`: config-derived sizes, pid, usage and
 * the markers (template, serial, lock, tags); `full` adds what QMP answers (query-status as `qmpstatus`,
 * blockstats, per-tap NIC counters, query-balloon, the running machine and QEMU version).
 */
function qemuVmstatus(c: Cluster, g: Guest, full: boolean): Item {
  const running = g.status === 'running'
  const { maxcpu, maxmem, maxdisk } = sizes(c, g)
  const d: Item = {
    vmid: g.vmid,
    status: running ? 'running' : 'stopped',
    disk: 0,
    maxdisk,
    cpus: maxcpu,
    name: guestName(g),
    maxmem,
  }
  if (running) d.pid = 10000 + g.vmid
  const balloon = Number(g.conf.get('balloon') ?? 0)
  if (balloon > 0) {
    d.balloon_min = balloon * MiB
    d.shares = Number(g.conf.get('shares') ?? 1000)
  }
  Object.assign(d, { uptime: 0, cpu: 0, mem: 0, netout: 0, netin: 0 })
  if (c.pveVersion === '9.1') d.memhost = 0
  if (g.conf.get('template') === '1') d.template = 1
  const keys = g.conf.keys()
  if (keys.some((k) => /^serial\d+$/.test(k))) d.serial = 1
  const lock = g.conf.get('lock')
  if (lock !== undefined) d.lock = lock
  const tags = g.conf.get('tags')
  if (tags !== undefined) d.tags = tags
  if (running) {
    d.uptime = uptimeOf(c, g)
    d.mem = Math.floor(maxmem / 4)
    if (c.pveVersion === '9.1') d.memhost = d.mem
    d.cpu = 0.01
    Object.assign(d, pressures(c))
  }
  if (!full) return d
  if (running) {
    const nics: Item = {}
    for (const k of keys.filter((k) => /^net\d+$/.test(k)).sort())
      nics[`tap${g.vmid}i${k.slice(3)}`] = { netin: 0, netout: 0 }
    if (Object.keys(nics).length > 0) d.nics = nics
    const blockstat: Item = {}
    for (const k of keys.filter((k) => isQemuDiskKey(k) || k === 'efidisk0').sort()) blockstat[k] = blockStats()
    d.blockstat = blockstat
    d.diskread = 0
    d.diskwrite = 0
    d['proxmox-support'] = PROXMOX_SUPPORT
    d['running-machine'] = runningMachine(c, g)
    d['running-qemu'] = c.version.qemu
    // query-balloon answers only with a balloon device (`balloon: 0` has none)
    if (g.conf.get('balloon') !== '0') {
      d.balloon = maxmem
      d.ballooninfo = { actual: maxmem, max_mem: maxmem }
    }
    d.qmpstatus = g.paused ? 'paused' : 'running'
  } else {
    d.qmpstatus = 'stopped'
  }
  return d
}

const PROXMOX_SUPPORT: Readonly<Item> = {
  'backup-fleecing': true,
  'backup-max-workers': true,
  'pbs-dirty-bitmap': true,
  'pbs-dirty-bitmap-migration': true,
  'pbs-dirty-bitmap-savevm': true,
  'pbs-library-version': '2.0.1',
  'pbs-masterkey': true,
  'query-bitmap-info': true,
}

function blockStats(): Item {
  return {
    rd_bytes: 0,
    wr_bytes: 0,
    rd_operations: 0,
    wr_operations: 0,
    flush_operations: 0,
    rd_total_time_ns: 0,
    wr_total_time_ns: 0,
    flush_total_time_ns: 0,
    rd_merged: 0,
    wr_merged: 0,
    failed_rd_operations: 0,
    failed_wr_operations: 0,
    invalid_rd_operations: 0,
    invalid_wr_operations: 0,
    unmap_bytes: 0,
    unmap_operations: 0,
    account_invalid: true,
    account_failed: true,
  }
}

/** current_from_query_machines: the machine the VM runs, a pinned version as pinned, else the newest */
function runningMachine(c: Cluster, g: Guest): string {
  const machine = g.conf.get('machine')
  const type = machine === undefined ? undefined : (/(?:^|,)type=([^,]+)/.exec(machine)?.[1] ?? machine.split(',')[0])
  if (type !== undefined && /^pc-(i440fx|q35)-\d/.test(type)) return type.includes('+pve') ? type : `${type}+pve0`
  const family = type !== undefined && /q35/.test(type) ? 'q35' : 'i440fx'
  return `pc-${family}-${c.version.qemu.split('.').slice(0, 2).join('.')}+pve0`
}

/** pve-container PVE::LXC::vmstatus for one container */
function lxcVmstatus(c: Cluster, g: Guest): Item {
  const running = g.status === 'running'
  const { maxcpu, maxmem, maxdisk } = sizes(c, g)
  const d: Item = {
    type: 'lxc',
    vmid: g.vmid,
    status: running ? 'running' : 'stopped',
    name: guestName(g).replace(/\s/g, ''),
    cpus: maxcpu,
  }
  if (running) d.pid = 20000 + g.vmid
  const tags = g.conf.get('tags')
  if (tags !== undefined) d.tags = tags
  // a running container reports its root filesystem's usage, a stopped one the configured size
  Object.assign(d, { disk: running ? Math.floor(maxdisk / 10) : 0, maxdisk, mem: 0, swap: 0, maxmem })
  d.maxswap = Number(g.conf.get('swap') ?? 0) * MiB
  Object.assign(d, { uptime: 0, cpu: 0, netout: 0, netin: 0, diskread: 0, diskwrite: 0 })
  if (g.conf.get('template') === '1') d.template = 1
  const lock = g.conf.get('lock')
  if (lock !== undefined) d.lock = lock
  if (running) {
    d.uptime = uptimeOf(c, g)
    d.mem = Math.floor(maxmem / 4)
    d.cpu = 0.01
    Object.assign(d, pressures(c))
  }
  return d
}

/**
 * A /cluster/resources item for a guest (pve-manager API2/Cluster.pm `resources`, API2Tools
 * `extract_vm_stats`): the stats come from the rrd data pvestatd last broadcast, so a guest it has not
 * seen yet is `unknown` without stats; `lock` and `tags` come from the config either way. The status is
 * pvestatd's `qmpstatus || status` (a paused VM is `paused`).
 */
export function resourceItem(c: Cluster, g: Guest): Item {
  const item: Item = { id: `${g.type}/${g.vmid}`, vmid: g.vmid, node: g.node, type: g.type, status: 'unknown' }
  if (!c.isFresh(g) && c.nodes.get(g.node)?.online !== false) {
    const status = c.visibleStatus(g)
    const running = status === 'running'
    const { maxcpu, maxmem, maxdisk } = sizes(c, g)
    const mem = running ? Math.floor(maxmem / 4) : 0
    Object.assign(item, {
      uptime: running ? uptimeOf(c, g) : 0,
      name: g.type === 'lxc' ? guestName(g).replace(/\s/g, '') : guestName(g),
      status: running && g.type === 'qemu' && g.paused ? 'paused' : status,
      template: g.conf.get('template') === '1' ? 1 : 0,
      maxcpu,
      cpu: running ? 0.01 : 0,
      maxmem,
      mem,
      maxdisk,
      disk: running && g.type === 'lxc' ? Math.floor(maxdisk / 10) : 0,
      netin: 0,
      netout: 0,
      diskread: 0,
      diskwrite: 0,
    })
    // PVE 9's pve-vm-9.0 rrd format carries the host view of the memory
    if (c.pveVersion === '9.1' && g.type === 'qemu') item.memhost = mem
  } else if (c.nodes.get(g.node)?.online === false) {
    item.name = guestName(g)
  }
  const lock = g.conf.get('lock')
  if (lock !== undefined) item.lock = lock
  const tags = g.conf.get('tags')
  if (tags !== undefined) item.tags = tags
  // pve-manager API2/Cluster.pm resources: the manager's service state, else the configured request state
  const hastate = c.ha.hastate(g)
  if (hastate !== undefined) item.hastate = hastate
  return item
}

export function guestName(g: Guest): string {
  if (g.type === 'lxc') return g.conf.get('hostname') ?? `CT${g.vmid}`
  return g.conf.get('name') ?? `VM ${g.vmid}`
}

/**
 * GET /cluster/resources (pve-manager API2/Cluster.pm `resources`): guests by vmid (as strings sort), then
 * nodes, then each storage on each node it is enabled on, then the local network zone of every node
 * (PVE 9 `network` items; PVE 8 `sdn` items).
 */
export function clusterResources(c: Cluster, type: string | undefined): Item[] {
  const out: Item[] = []
  // pools first (only without a type filter: the schema's enum has no `pool`), their figures summed from the
  // running members as the guests are listed
  const pools = new Map<string, Item>()
  if (type === undefined) {
    for (const pool of [...c.pools.pools.keys()].sort()) {
      const entry: Item = { id: `/pool/${pool}`, pool, type: 'pool' }
      pools.set(pool, entry)
      out.push(entry)
    }
  }
  if (type === undefined || type === 'vm') {
    const ids = [...c.guests.keys()].map(String).sort()
    for (const id of ids) {
      const item = resourceItem(c, c.guests.get(Number(id)) as Guest)
      const pool = c.pools.vmPool.get(Number(id))
      if (pool !== undefined) {
        item.pool = pool
        const pe = pools.get(pool)
        if (pe && typeof item.uptime === 'number' && item.uptime > 0) addPoolStats(pe, item)
      }
      out.push(item)
    }
  }
  if (type === undefined || type === 'node') {
    for (const n of c.nodes.values()) out.push(nodeResource(c, n))
  }
  if (type === undefined || type === 'storage') {
    const storeids = [...new Set([...c.nodes.values()].flatMap((n) => n.storage.defs.map((d) => d.id)))].sort()
    for (const sid of storeids) {
      for (const n of c.nodes.values()) {
        // storage_check_enabled per node: a disabled storage, or one restricted to other nodes, is not listed
        const d = n.storage.def(sid)
        if (!d || d.disable || !c.storage.onNode(d, n.name)) continue
        out.push(storageResourceItem(n, d))
      }
    }
  }
  if (c.pveVersion === '9.1' && (type === undefined || type === 'network')) {
    for (const n of c.nodes.values()) {
      out.push({
        id: `network/${n.name}/zone/localnetwork`,
        type: 'network',
        'network-type': 'zone',
        network: 'localnetwork',
        node: n.name,
        status: 'ok',
      })
    }
  }
  if (c.pveVersion === '8.4' && (type === undefined || type === 'sdn')) {
    for (const n of c.nodes.values()) {
      if (n.online)
        out.push({ id: `sdn/${n.name}/localnetwork`, sdn: 'localnetwork', node: n.name, type: 'sdn', status: 'ok' })
    }
  }
  return out
}

/** Cluster.pm resources: a pool's uptime is its longest-running member's, mem/maxmem/maxcpu add up, cpu is the
 *  maxcpu-weighted mean */
function addPoolStats(pe: Item, item: Item): void {
  const n = (v: unknown): number => (typeof v === 'number' ? v : 0)
  if (n(pe.uptime) < n(item.uptime)) pe.uptime = item.uptime
  pe.mem = n(pe.mem) + n(item.mem)
  pe.maxmem = n(pe.maxmem) + n(item.maxmem)
  const oldMax = n(pe.maxcpu)
  pe.cpu = (n(pe.cpu) * oldMax + n(item.cpu) * n(item.maxcpu)) / (oldMax + n(item.maxcpu))
  pe.maxcpu = oldMax + n(item.maxcpu)
}

/** API2Tools extract_storage_stats: sizes and `available` come from pvestatd, which publishes nothing for an
 *  offline storage */
export function storageResourceItem(n: NodeState, d: StorageDef): Item {
  const s = n.storage.statusItem(d)
  const item: Item = {
    id: `storage/${n.name}/${d.id}`,
    storage: d.id,
    node: n.name,
    type: 'storage',
    plugintype: d.type,
    status: 'unknown',
    shared: s.shared,
    content: s.content,
  }
  if (n.online && s.active === 1) Object.assign(item, { maxdisk: s.total, disk: s.used, status: 'available' })
  return item
}

/** API2Tools extract_node_stats: an offline node keeps its last sizes, but no usage */
function nodeResource(c: Cluster, n: Cluster['nodes'] extends Map<string, infer N> ? N : never): Item {
  const item: Item = {
    id: `node/${n.name}`,
    node: n.name,
    type: 'node',
    status: n.online ? 'online' : 'offline',
    level: '',
  }
  if (n.online) {
    Object.assign(item, {
      uptime: Math.floor((c.now() - n.bootMs) / 1000),
      cpu: 0.03,
      mem: Math.floor(n.maxmem / 8),
      disk: 10 * 1024 ** 3,
    })
  }
  Object.assign(item, { maxcpu: n.maxcpu, maxmem: n.maxmem, maxdisk: 100 * 1024 ** 3, 'cgroup-mode': 2 })
  return item
}

/** GET /nodes/{node}/qemu (vmlist: vmstatus, `full` adds the QMP part) and /lxc items */
export function guestListItem(c: Cluster, g: Guest, full = false): Item {
  return g.type === 'qemu' ? qemuVmstatus(c, g, full) : lxcVmstatus(c, g)
}

/** GET .../status/current: qemu vm_status (vmstatus with full, ha, spice, clipboard, agent); lxc vm_status (vmstatus, ha) */
export function guestStatusCurrent(c: Cluster, g: Guest): Item {
  if (g.type === 'lxc') return { ...lxcVmstatus(c, g), ha: c.ha.serviceStatus(g) }
  const item = qemuVmstatus(c, g, true)
  item.ha = c.ha.serviceStatus(g)
  const vga = g.conf.get('vga')
  if (vga !== undefined) {
    const vgaType = /(?:^|,)type=([^,]+)/.exec(vga)?.[1] ?? (vga.includes('=') ? undefined : vga.split(',')[0])
    if (vgaType !== undefined && /^(virtio|qxl)/.test(vgaType)) item.spice = 1
    // an unset clipboard is an undefined hash value, which JSON renders as null
    item.clipboard = /(?:^|,)clipboard=([^,]+)/.exec(vga)?.[1] ?? null
  }
  const agent = g.conf.get('agent')
  if (agent !== undefined && /^(1|enabled=1)(,|$)|(^|,)enabled=1(,|$)/.test(agent)) item.agent = 1
  return item
}

/** compute the cached sizes of every guest up front (after preloading an estate) */
export function warmStats(c: Cluster): void {
  for (const g of c.guests.values()) sizes(c, g)
}
