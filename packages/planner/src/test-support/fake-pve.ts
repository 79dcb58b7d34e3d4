/**
 * An in-memory stand-in for one PVE cluster that implements both planner ports (LiveReader and
 * PveWriter). It is deliberately small: enough PVE behaviour for unit tests of observe/execute/plan
 * (configs with digests and pending values, power state, locks, templates, storage content, tasks that
 * end OK or with an error), plus fault hooks and a call log. Integration tests use tools/pve-sim instead.
 */
import { createHash } from 'node:crypto'
import type {
  ClusterResource,
  GuestConfig,
  GuestListItem,
  GuestStatus,
  GuestType,
  PendingEntry,
  PveParams,
  StorageContentItem,
  StorageInfo,
  TaskRef,
  TaskResult,
  TaskStatus,
  WaitOptions,
} from '@proxops/pve-client/wire'
import type { LiveReader, PveWriter } from '../ports.js'

export interface FakeGuest {
  type: GuestType
  vmid: number
  node: string
  status: 'running' | 'stopped'
  config: Record<string, string>
  pending: Record<string, string>
  pendingDeletes: Set<string>
  /** next free disk number (vm-<vmid>-disk-<n>) */
  nextDisk: number
}

export interface FakeStorage {
  node: string
  storage: string
  type: string
  content: string[]
  shared?: boolean
  active?: boolean
}

export interface FakeCall {
  method: string
  args: unknown[]
}

/** Returns an Error to make that call fail (thrown for reads and immediate writes). */
export type FaultHook = (call: FakeCall) => Error | undefined
/** Returns an exit status other than OK to make a task fail (e.g. `VM 100 already running`). */
export type TaskFaultHook = (task: { type: string; node: string; id: string }) => string | undefined

export interface FakePveOptions {
  nodes?: string[]
  offline?: string[]
  storages?: FakeStorage[]
  /** omit the `digest` row from /pending (to test the config fallback) */
  pendingWithoutDigest?: boolean
  /** implement LiveReader.nodeGuests (default true) */
  nodeGuests?: boolean
}

/** Keys PVE applies to a running guest at once (the "fast" options, cloud-init, NICs, tags). */
const HOT_KEYS =
  /^(name|description|tags|onboot|protection|startup|hookscript|lock|ciuser|cipassword|sshkeys|nameserver|searchdomain|ipconfig\d+|net\d+|hostname|memory|swap|cores)$/

export class FakePve implements LiveReader, PveWriter {
  readonly guests = new Map<number, FakeGuest>()
  readonly storageDefs: FakeStorage[]
  readonly volumes: (StorageContentItem & { node: string; storage: string })[] = []
  readonly calls: FakeCall[] = []
  readonly nodes: string[]
  readonly offline: Set<string>
  readonly tasks = new Map<string, TaskStatus & { log: string[] }>()
  fault: FaultHook | undefined
  taskFault: TaskFaultHook | undefined
  private taskSeq = 0
  private readonly pendingWithoutDigest: boolean

  constructor(options: FakePveOptions = {}) {
    this.nodes = options.nodes ?? ['pve1', 'pve2', 'pve3']
    this.offline = new Set(options.offline ?? [])
    this.storageDefs =
      options.storages ??
      this.nodes.flatMap((node) => [
        { node, storage: 'local', type: 'dir', content: ['iso', 'vztmpl', 'import', 'snippets'] },
        { node, storage: 'local-lvm', type: 'lvmthin', content: ['images', 'rootdir'] },
      ])
    this.pendingWithoutDigest = options.pendingWithoutDigest ?? false
    if (options.nodeGuests === false) (this as { nodeGuests?: unknown }).nodeGuests = undefined
  }

  // ---- seeding helpers ----

  addGuest(guest: {
    type?: GuestType
    vmid: number
    node?: string
    status?: 'running' | 'stopped'
    config?: Record<string, string>
  }): FakeGuest {
    const g: FakeGuest = {
      type: guest.type ?? 'qemu',
      vmid: guest.vmid,
      node: guest.node ?? this.nodes[0]!,
      status: guest.status ?? 'stopped',
      config: { ...(guest.config ?? {}) },
      pending: {},
      pendingDeletes: new Set(),
      nextDisk: 0,
    }
    this.guests.set(g.vmid, g)
    return g
  }

  addVolume(node: string, storage: string, volid: string, content: string, size?: number): void {
    this.volumes.push({ node, storage, volid, content, ...(size !== undefined ? { size } : {}) })
  }

  /** writes made so far (every PveWriter call except waitTask) */
  writes(): FakeCall[] {
    return this.calls.filter((c) => WRITE_METHODS.has(c.method))
  }

  reads(): FakeCall[] {
    return this.calls.filter(
      (c) => !WRITE_METHODS.has(c.method) && c.method !== 'waitTask' && c.method !== 'taskStatus',
    )
  }

  digestOf(g: FakeGuest): string {
    const text = JSON.stringify([
      Object.entries(g.config).sort(),
      Object.entries(g.pending).sort(),
      [...g.pendingDeletes].sort(),
    ])
    return createHash('sha1').update(text).digest('hex')
  }

  // ---- LiveReader ----

  async version(): Promise<{ version: string; release: string }> {
    this.record('version', [])
    return { version: '9.1.1', release: '9.1' }
  }

  async clusterResources(): Promise<ClusterResource[]> {
    this.record('clusterResources', [])
    const rows: ClusterResource[] = []
    for (const node of this.nodes)
      rows.push({ id: `node/${node}`, type: 'node', node, status: this.offline.has(node) ? 'offline' : 'online' })
    for (const s of this.storageDefs) {
      rows.push({
        id: `storage/${s.node}/${s.storage}`,
        type: 'storage',
        node: s.node,
        storage: s.storage,
        plugintype: s.type,
        content: s.content.join(','),
        shared: s.shared ?? false,
        status: s.active === false || this.offline.has(s.node) ? 'unknown' : 'available',
      })
    }
    for (const g of this.guests.values()) {
      rows.push({
        id: `${g.type}/${g.vmid}`,
        type: g.type,
        node: g.node,
        vmid: g.vmid,
        status: this.offline.has(g.node) ? 'unknown' : g.status,
        template: g.config.template === '1',
        ...(g.config.tags !== undefined ? { tags: g.config.tags } : {}),
        ...(this.nameOf(g) !== undefined ? { name: this.nameOf(g)! } : {}),
      })
    }
    return rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  async nodeGuests(node: string, type: GuestType): Promise<GuestListItem[]> {
    this.record('nodeGuests', [node, type])
    this.assertOnline(node)
    return [...this.guests.values()]
      .filter((g) => g.node === node && g.type === type)
      .map((g) => ({
        vmid: g.vmid,
        type: g.type,
        status: g.status,
        template: g.config.template === '1',
        ...(this.nameOf(g) !== undefined ? { name: this.nameOf(g)! } : {}),
        ...(g.config.lock !== undefined ? { lock: g.config.lock } : {}),
        ...(g.config.tags !== undefined ? { tags: g.config.tags } : {}),
      }))
  }

  async guestConfig(
    node: string,
    type: GuestType,
    vmid: number,
    options?: { current?: boolean },
  ): Promise<GuestConfig> {
    this.record('guestConfig', [node, type, vmid, options])
    const g = this.guestOn(node, type, vmid)
    const values: Record<string, string> = { ...g.config }
    if (!options?.current) {
      Object.assign(values, g.pending)
      for (const key of g.pendingDeletes) delete values[key]
    }
    return { digest: this.digestOf(g), values }
  }

  async guestPending(node: string, type: GuestType, vmid: number): Promise<PendingEntry[]> {
    this.record('guestPending', [node, type, vmid])
    const g = this.guestOn(node, type, vmid)
    const keys = new Set([...Object.keys(g.config), ...Object.keys(g.pending), ...g.pendingDeletes])
    const rows: PendingEntry[] = []
    if (!this.pendingWithoutDigest) rows.push({ key: 'digest', value: this.digestOf(g) })
    for (const key of [...keys].sort()) {
      const row: PendingEntry = { key }
      if (g.config[key] !== undefined) row.value = g.config[key]
      if (g.pending[key] !== undefined) row.pending = g.pending[key]
      if (g.pendingDeletes.has(key)) row.delete = 1
      rows.push(row)
    }
    return rows
  }

  async guestStatus(node: string, type: GuestType, vmid: number): Promise<GuestStatus> {
    this.record('guestStatus', [node, type, vmid])
    const g = this.guestOn(node, type, vmid)
    return {
      status: g.status,
      ...(g.config.lock !== undefined ? { lock: g.config.lock } : {}),
      ...(g.config.template === '1' ? { template: true } : {}),
    }
  }

  async storages(node: string): Promise<StorageInfo[]> {
    this.record('storages', [node])
    this.assertOnline(node)
    return this.storageDefs
      .filter((s) => s.node === node)
      .map((s) => ({
        storage: s.storage,
        type: s.type,
        content: s.content,
        active: s.active !== false,
        enabled: true,
        shared: s.shared ?? false,
      }))
  }

  async storageContent(node: string, storage: string, content?: string): Promise<StorageContentItem[]> {
    this.record('storageContent', [node, storage, content])
    this.assertOnline(node)
    const s = this.storageDefs.find((x) => x.node === node && x.storage === storage)
    if (!s) throw new Error(`storage '${storage}' does not exist`)
    return this.volumes
      .filter((v) => (s.shared ? v.storage === storage : v.node === node && v.storage === storage))
      .filter((v) => !content || v.content === content)
      .map(({ node: _n, storage: _s, ...item }) => item)
  }

  async taskStatus(task: TaskRef): Promise<TaskStatus> {
    this.record('taskStatus', [task])
    const t = this.tasks.get(task.upid)
    if (!t) throw new Error('no such task')
    const { log: _log, ...status } = t
    return status
  }

  // ---- PveWriter ----

  async createGuest(node: string, type: GuestType, params: PveParams): Promise<TaskRef> {
    this.record('createGuest', [node, type, params])
    const vmid = Number(params.vmid)
    if (this.guests.has(vmid))
      throw new Error(`unable to create ${type === 'qemu' ? 'VM' : 'CT'} ${vmid} - already exists on node '${node}'`)
    return this.task(node, type === 'qemu' ? 'qmcreate' : 'vzcreate', String(vmid), () => {
      const {
        vmid: _v,
        start,
        storage: _s,
        pool: _p,
        ostemplate: _o,
        password: _pw,
        'ssh-public-keys': _k,
        ...rest
      } = params
      const g = this.addGuest({ type, vmid, node })
      g.config = allocateDisks(g, stringify(rest))
      if (g.config.tags !== undefined) g.config.tags = normaliseTags(g.config.tags)
      if (start === true || start === 1 || start === '1') g.status = 'running'
    })
  }

  async cloneGuest(node: string, type: GuestType, vmid: number, params: PveParams): Promise<TaskRef> {
    this.record('cloneGuest', [node, type, vmid, params])
    const source = this.guestOn(node, type, vmid)
    const newid = Number(params.newid)
    if (this.guests.has(newid)) throw new Error(`unable to create VM ${newid}: config file already exists`)
    return this.task(node, type === 'qemu' ? 'qmclone' : 'vzclone', String(vmid), () => {
      const config: Record<string, string> = {}
      for (const [key, value] of Object.entries(source.config)) {
        if (key === 'template' || /^unused\d+$/.test(key)) continue
        config[key] = value.replace(new RegExp(`(base|vm)-${vmid}-`, 'g'), `vm-${newid}-`)
      }
      if (params.name !== undefined) config[type === 'qemu' ? 'name' : 'hostname'] = String(params.name)
      const target = params.target !== undefined ? String(params.target) : node
      const g = this.addGuest({ type, vmid: newid, node: target, config })
      g.status = 'stopped'
    })
  }

  async updateConfig(
    node: string,
    type: GuestType,
    vmid: number,
    params: PveParams,
    options?: { digest?: string },
  ): Promise<TaskRef | null> {
    this.record('updateConfig', [node, type, vmid, params, options])
    const g = this.guestOn(node, type, vmid)
    if (options?.digest !== undefined && options.digest !== this.digestOf(g))
      throw new Error('checksum mismatch (file change by other user?)')
    if (g.config.lock !== undefined) throw new Error(`VM is locked (${g.config.lock})`)
    const { delete: deleteList, ...values } = params
    const deletes =
      deleteList === undefined
        ? []
        : String(deleteList)
            .split(/[,;\s]+/)
            .filter(Boolean)
    for (const key of deletes) if (key in values) throw new Error(`option '${key}' may not be set and deleted at once`)
    const apply = (): void => {
      for (const [key, raw] of Object.entries(stringify(values))) {
        const value = key === 'tags' ? normaliseTags(raw) : raw
        if (g.status === 'running' && !HOT_KEYS.test(key)) g.pending[key] = value
        else g.config[key] = allocateDisks(g, { [key]: value })[key]!
      }
      for (const key of deletes) {
        if (g.status === 'running' && !HOT_KEYS.test(key)) g.pendingDeletes.add(key)
        else delete g.config[key]
      }
    }
    if (type === 'lxc') {
      apply()
      return null
    }
    return this.task(node, 'qmconfig', String(vmid), apply)
  }

  async resizeDisk(
    node: string,
    type: GuestType,
    vmid: number,
    disk: string,
    size: string,
    options?: { digest?: string },
  ): Promise<TaskRef | null> {
    this.record('resizeDisk', [node, type, vmid, disk, size, options])
    const g = this.guestOn(node, type, vmid)
    return this.task(node, 'resize', String(vmid), () => {
      if (options?.digest !== undefined && options.digest !== this.digestOf(g))
        throw new Error('checksum mismatch (file change by other user?)')
      const current = g.config[disk]
      if (current === undefined) throw new Error(`disk '${disk}' does not exist`)
      const currentGiB = Number(/size=(\d+)G/.exec(current)?.[1] ?? 0)
      const wanted = size.startsWith('+') ? currentGiB + Number(size.slice(1, -1)) : Number(size.replace(/G$/, ''))
      if (wanted < currentGiB) throw new Error('shrinking disks is not supported')
      g.config[disk] = /size=\d+G/.test(current)
        ? current.replace(/size=\d+G/, `size=${wanted}G`)
        : `${current},size=${wanted}G`
    })
  }

  async start(node: string, type: GuestType, vmid: number): Promise<TaskRef> {
    this.record('start', [node, type, vmid])
    const g = this.guestOn(node, type, vmid)
    if (type === 'lxc' && g.status === 'running') throw new Error(`CT ${vmid} already running`)
    return this.task(node, type === 'qemu' ? 'qmstart' : 'vzstart', String(vmid), () => {
      if (g.config.template === '1') throw new Error("you can't start a vm if it's a template")
      if (g.status === 'running') throw new Error(`VM ${vmid} already running`)
      this.applyPending(g)
      g.status = 'running'
    })
  }

  async shutdown(
    node: string,
    type: GuestType,
    vmid: number,
    options?: { timeoutSeconds?: number; forceStop?: boolean },
  ): Promise<TaskRef> {
    this.record('shutdown', [node, type, vmid, options])
    const g = this.guestOn(node, type, vmid)
    if (type === 'lxc' && g.status === 'stopped') throw new Error(`CT ${vmid} not running`)
    return this.task(node, type === 'qemu' ? 'qmshutdown' : 'vzshutdown', String(vmid), () => {
      this.stopGuest(g)
    })
  }

  /** an API stop of a running guest applies [PENDING] (qemu-server vm_stop_cleanup, pve-container's post-stop hook) */
  private stopGuest(g: FakeGuest): void {
    if (g.status !== 'running') return
    g.status = 'stopped'
    this.applyPending(g)
  }

  async stop(node: string, type: GuestType, vmid: number): Promise<TaskRef> {
    this.record('stop', [node, type, vmid])
    const g = this.guestOn(node, type, vmid)
    if (type === 'lxc' && g.status === 'stopped') throw new Error(`CT ${vmid} not running`)
    return this.task(node, type === 'qemu' ? 'qmstop' : 'vzstop', String(vmid), () => {
      this.stopGuest(g)
    })
  }

  async reboot(node: string, type: GuestType, vmid: number): Promise<TaskRef> {
    this.record('reboot', [node, type, vmid])
    const g = this.guestOn(node, type, vmid)
    if (g.status !== 'running') throw new Error(`VM ${vmid} not running`)
    return this.task(node, type === 'qemu' ? 'qmreboot' : 'vzreboot', String(vmid), () => this.applyPending(g))
  }

  async markTemplate(node: string, type: GuestType, vmid: number): Promise<TaskRef | null> {
    this.record('markTemplate', [node, type, vmid])
    const g = this.guestOn(node, type, vmid)
    if (g.config.template === '1') throw new Error("you can't convert a template to a template")
    if (g.status === 'running') throw new Error("you can't convert a VM to template if VM is running")
    const mark = (): void => {
      g.config.template = '1'
      for (const [key, value] of Object.entries(g.config))
        g.config[key] = value.replace(new RegExp(`vm-${vmid}-disk`, 'g'), `base-${vmid}-disk`)
    }
    if (type === 'lxc') {
      mark()
      return null
    }
    return this.task(node, 'qmtemplate', String(vmid), mark)
  }

  async deleteGuest(node: string, type: GuestType, vmid: number): Promise<TaskRef> {
    this.record('deleteGuest', [node, type, vmid])
    const g = this.guestOn(node, type, vmid)
    const label = type === 'qemu' ? 'VM' : 'CT'
    if (g.status === 'running') throw new Error(`${label} ${vmid} is running - destroy failed`)
    if (g.config.protection === '1') throw new Error(`can't remove ${label} ${vmid} - protection mode enabled`)
    return this.task(node, type === 'qemu' ? 'qmdestroy' : 'vzdestroy', String(vmid), () => {
      this.guests.delete(vmid)
    })
  }

  async downloadUrl(node: string, storage: string, params: PveParams): Promise<TaskRef> {
    this.record('downloadUrl', [node, storage, params])
    const s = this.storageDefs.find((x) => x.node === node && x.storage === storage)
    if (!s) throw new Error(`storage '${storage}' does not exist`)
    const content = String(params.content)
    if (!s.content.includes(content))
      throw new Error(`storage '${storage}' is not configured for content-type '${content}'`)
    const filename = String(params.filename)
    return this.task(node, 'download', filename, () => {
      const volid = `${storage}:${content}/${filename}`
      if (this.volumes.some((v) => v.storage === storage && v.volid === volid && (s.shared || v.node === node))) {
        if (params.checksum === undefined) throw new Error(`refusing to override existing file '${filename}'`)
        return
      }
      this.volumes.push({ node, storage, volid, content, format: content === 'iso' ? 'iso' : 'raw', size: 1 << 20 })
    })
  }

  async waitTask(task: TaskRef, options?: WaitOptions): Promise<TaskResult> {
    this.record('waitTask', [task])
    options?.signal?.throwIfAborted()
    const t = this.tasks.get(task.upid)
    if (!t) throw new Error(`no such task ${task.upid}`)
    const exitstatus = t.exitstatus ?? 'OK'
    return { upid: t.upid, ok: exitstatus === 'OK' || /^WARNINGS: \d+$/.test(exitstatus), exitstatus, log: t.log }
  }

  // ---- internals ----

  private record(method: string, args: unknown[]): void {
    const call = { method, args }
    this.calls.push(call)
    const error = this.fault?.(call)
    if (error) throw error
  }

  private assertOnline(node: string): void {
    if (this.offline.has(node)) throw new Error(`hostname lookup '${node}' failed - failed to get address info`)
  }

  private guestOn(node: string, type: GuestType, vmid: number): FakeGuest {
    this.assertOnline(node)
    const g = this.guests.get(vmid)
    if (!g || g.node !== node || g.type !== type) {
      throw new Error(
        `Configuration file 'nodes/${node}/${type === 'qemu' ? 'qemu-server' : 'lxc'}/${vmid}.conf' does not exist`,
      )
    }
    return g
  }

  private nameOf(g: FakeGuest): string | undefined {
    return g.type === 'qemu' ? g.config.name : g.config.hostname
  }

  private applyPending(g: FakeGuest): void {
    Object.assign(g.config, g.pending)
    for (const key of g.pendingDeletes) delete g.config[key]
    g.pending = {}
    g.pendingDeletes.clear()
  }

  /** Runs `work` now (tasks finish at once); a thrown error or a task fault becomes the task's exit status. */
  private task(node: string, type: string, id: string, work: () => void): TaskRef {
    const upid = `UPID:${node}:${(0x1000 + ++this.taskSeq).toString(16).toUpperCase().padStart(8, '0')}:00000001:65000000:${type}:${id}:root@pam!proxops:`
    let exitstatus = this.taskFault?.({ type, node, id })
    if (exitstatus === undefined) {
      try {
        work()
        exitstatus = 'OK'
      } catch (error) {
        exitstatus = error instanceof Error ? error.message : String(error)
      }
    }
    const log = [exitstatus === 'OK' ? 'TASK OK' : `TASK ERROR: ${exitstatus}`]
    this.tasks.set(upid, { upid, node, type, id, status: 'stopped', exitstatus, log })
    return { node, upid }
  }
}

const WRITE_METHODS = new Set([
  'createGuest',
  'cloneGuest',
  'updateConfig',
  'resizeDisk',
  'start',
  'shutdown',
  'stop',
  'reboot',
  'markTemplate',
  'deleteGuest',
  'downloadUrl',
])

function stringify(params: Readonly<Record<string, string | number | boolean>>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(params))
    out[key] = typeof value === 'boolean' ? (value ? '1' : '0') : String(value)
  return out
}

function normaliseTags(raw: string): string {
  return [
    ...new Set(
      raw
        .split(/[;,\s]+/)
        .filter(Boolean)
        .map((t) => t.toLowerCase()),
    ),
  ]
    .sort()
    .join(';')
}

/** `local-lvm:8` (create form) becomes `local-lvm:vm-<id>-disk-<n>,size=8G`, as PVE stores it. */
function allocateDisks(g: FakeGuest, values: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const m = /^(?:volume=)?([a-z][a-z0-9_-]*):(\d+)(,.*)?$/.exec(value)
    const isDisk = /^(scsi|virtio|sata|ide|efidisk|tpmstate|rootfs|mp)\d*$/.test(key)
    if (isDisk && m) {
      const [, storage, size, rest = ''] = m
      const prefix = key.startsWith('mp') ? 'volume=' : ''
      out[key] = `${prefix}${storage}:vm-${g.vmid}-disk-${g.nextDisk++}${rest},size=${size}G`
    } else out[key] = value
  }
  return out
}
