/**
 * The planner's ports: the only way it touches PVE. `@proxops/pve-client` implements both structurally
 * (it does not import this file: the dependency runs planner -> pve-client/wire, never back). A
 * read-only client implements `LiveReader` alone, so diff, status and adopt cannot write.
 *
 * Values cross the port in PVE's own vocabulary (config keys, property strings) but already decoded from
 * PVE's lenient JSON: numbers as numbers, config values as strings, booleans as booleans.
 */

export type GuestType = 'qemu' | 'lxc'

/** One row of `GET /cluster/resources`. Fresh guests may lack name/template/status (PVE's stats lag). */
export interface ClusterResource {
  /** e.g. `qemu/100`, `lxc/101`, `node/pve1`, `storage/pve1/local` */
  id: string
  type: 'qemu' | 'lxc' | 'node' | 'storage' | 'sdn' | 'pool' | string
  node?: string
  vmid?: number
  name?: string
  /** guest: running | stopped | unknown; node: online | offline | unknown; storage: available | unknown */
  status?: string
  template?: boolean
  /** the raw PVE tag string (`;`-joined on PVE 9, but may be `,` or space separated) */
  tags?: string
  lock?: string
  pool?: string
  /** storage rows */
  storage?: string
  plugintype?: string
  content?: string
  shared?: boolean
}

/** `GET /nodes/{node}/{type}/{vmid}/config`: every key as PVE's string form, `digest` separated out. */
export interface GuestConfig {
  digest: string
  values: Readonly<Record<string, string>>
}

/** One row of `GET .../pending`. `delete` 1 = pending delete, 2 = forced delete. */
export interface PendingEntry {
  key: string
  value?: string
  pending?: string
  delete?: number
}

/** `GET .../status/current` */
export interface GuestStatus {
  status: 'running' | 'stopped' | string
  /** qemu: the QMP status (e.g. `paused`) when asked with full detail */
  qmpstatus?: string
  lock?: string
  template?: boolean
  name?: string
  /** HA managed: power requests answer `hastart`/`hastop` tasks that end before the guest changes state */
  haManaged?: boolean
  /** the HA manager's state of the service (`started`, `request_stop`, `stopped`, `error`, ...) */
  haState?: string
}

/**
 * One row of `GET /nodes/{node}/qemu` or `GET /nodes/{node}/lxc`: the node's own view of its guests, whose
 * `status` does not lag like `/cluster/resources`. `template` true for templates.
 */
export interface NodeGuest {
  vmid: number
  name?: string
  status: 'running' | 'stopped' | string
  template?: boolean
  lock?: string
  tags?: string
  /** qemu with `full=1`: `running`, `paused`, `prelaunch`, ... */
  qmpstatus?: string
}

/** `GET /nodes/{node}/storage` */
export interface StorageInfo {
  storage: string
  type: string
  content: string[]
  active: boolean
  enabled: boolean
  shared: boolean
  avail?: number
  total?: number
}

/** `GET /nodes/{node}/storage/{storage}/content` */
export interface StorageContentItem {
  volid: string
  content: string
  format?: string
  size?: number
  vmid?: number
}

export interface TaskRef {
  node: string
  upid: string
}

export interface TaskStatus {
  upid: string
  node: string
  type: string
  id: string
  status: 'running' | 'stopped'
  /** `OK`, `WARNINGS: n`, or the error text; only once stopped */
  exitstatus?: string
}

/** The outcome of waiting on a task: `ok` for `OK` and `WARNINGS: n`. */
export interface TaskResult {
  upid: string
  ok: boolean
  exitstatus: string
  /** the last lines of the task log (for failures) */
  log: string[]
}

export interface WaitOptions {
  timeoutMs?: number
  pollIntervalMs?: number
  signal?: AbortSignal
}

/** PVE parameters as sent: the client encodes booleans as 1/0 and builds the form body. */
export type PveParams = Readonly<Record<string, string | number | boolean>>

export interface LiveReader {
  version(): Promise<{ version: string; release: string; repoid?: string }>
  clusterResources(type?: 'vm' | 'storage' | 'node'): Promise<ClusterResource[]>
  guestConfig(node: string, type: GuestType, vmid: number, options?: { current?: boolean }): Promise<GuestConfig>
  guestPending(node: string, type: GuestType, vmid: number): Promise<PendingEntry[]>
  guestStatus(node: string, type: GuestType, vmid: number): Promise<GuestStatus>
  /**
   * `GET /nodes/{node}/{type}`. Optional so older readers still fit; observe() uses it for power state (two
   * requests per node) and falls back to one `status/current` read per guest when a reader lacks it.
   */
  nodeGuests?(node: string, type: GuestType): Promise<NodeGuest[]>
  storages(node: string): Promise<StorageInfo[]>
  storageContent(node: string, storage: string, content?: string): Promise<StorageContentItem[]>
  taskStatus(task: TaskRef): Promise<TaskStatus>
  /**
   * `GET /access/permissions?path=`: the privileges the caller holds on one ACL path. Optional so older readers
   * still fit; without it the privilege preflight is skipped (docs/getting-started.md).
   */
  privileges?(path: string): Promise<readonly string[]>
  /**
   * `GET /cluster/backup`: the vzdump jobs, each option in PVE's string form (property strings printed with
   * sorted keys). Optional so older readers still fit; without it backup jobs are unknown (never planned).
   */
  backupJobs?(): Promise<{ id: string; values: Record<string, string> }[]>
}

export interface PveWriter {
  /** POST /nodes/{node}/{type} (qmcreate / vzcreate); params include `vmid`. */
  createGuest(node: string, type: GuestType, params: PveParams): Promise<TaskRef>
  /** POST .../{vmid}/clone; params include `newid` and optionally `target`, `full`, `storage`, `name`. */
  cloneGuest(node: string, type: GuestType, vmid: number, params: PveParams): Promise<TaskRef>
  /**
   * Writes config. qemu uses async POST (returns a task) and lxc the sync PUT (returns null).
   * `digest` makes PVE refuse the write if the config changed since it was read.
   */
  updateConfig(
    node: string,
    type: GuestType,
    vmid: number,
    params: PveParams,
    options?: { digest?: string },
  ): Promise<TaskRef | null>
  /** PUT .../resize; `size` like `+2G` or `40G` (grow only). qemu returns a task, lxc returns one too. */
  resizeDisk(
    node: string,
    type: GuestType,
    vmid: number,
    disk: string,
    size: string,
    options?: { digest?: string },
  ): Promise<TaskRef | null>
  start(node: string, type: GuestType, vmid: number): Promise<TaskRef>
  /** Graceful shutdown; `forceStop` stops it if the timeout passes. */
  shutdown(
    node: string,
    type: GuestType,
    vmid: number,
    options?: { timeoutSeconds?: number; forceStop?: boolean },
  ): Promise<TaskRef>
  stop(node: string, type: GuestType, vmid: number): Promise<TaskRef>
  reboot(node: string, type: GuestType, vmid: number): Promise<TaskRef>
  /** POST .../template; lxc answers null, qemu a task. */
  markTemplate(node: string, type: GuestType, vmid: number): Promise<TaskRef | null>
  /** DELETE /nodes/{node}/{type}/{vmid} with purge, never destroy-unreferenced-disks (docs/safety.md). */
  deleteGuest(node: string, type: GuestType, vmid: number): Promise<TaskRef>
  /** POST /nodes/{node}/storage/{storage}/download-url */
  downloadUrl(node: string, storage: string, params: PveParams): Promise<TaskRef>
  /**
   * `/cluster/backup` (PVE::API2::Backup): synchronous, no task. Optional so writers that predate backup jobs
   * still fit; an action that needs one fails without it.
   */
  createBackupJob?(params: PveParams): Promise<unknown>
  updateBackupJob?(id: string, params: PveParams): Promise<unknown>
  deleteBackupJob?(id: string): Promise<unknown>
  /** Waits for a task to stop; rejects with a TaskTimeout error, resolves with ok=false when it failed. */
  waitTask(task: TaskRef, options?: WaitOptions): Promise<TaskResult>
}
