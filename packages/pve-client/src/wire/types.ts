/**
 * The wire types: what the client returns and takes. Field names are PVE's; values are decoded from PVE's
 * lenient JSON (numbers as numbers, booleans as booleans, config values as strings). They are the one
 * definition: the planner's LiveReader / PveWriter ports are written in them (through this `/wire` subpath,
 * which carries no I/O), and `packages/planner/src/ports.test-d.ts` checks that the client fits the ports.
 */

export type GuestType = 'qemu' | 'lxc'

export interface VersionInfo {
  version: string
  release: string
  repoid?: string
}

export interface NodeInfo {
  node: string
  /** online | offline | unknown */
  status: string
  cpu?: number
  maxcpu?: number
  mem?: number
  maxmem?: number
  disk?: number
  maxdisk?: number
  uptime?: number
  ssl_fingerprint?: string
}

/** `GET /nodes/{node}/status` (the fields ProxOps reads) */
export interface NodeStatus {
  uptime?: number
  cpu?: number
  pveversion?: string
  kversion?: string
  memory?: { total?: number; used?: number; free?: number }
}

/** One row of `GET /cluster/resources`. Fresh guests may lack name/template/status (PVE's stats lag). */
export interface ClusterResource {
  id: string
  type: 'qemu' | 'lxc' | 'node' | 'storage' | 'sdn' | 'pool' | string
  node?: string
  vmid?: number
  name?: string
  status?: string
  template?: boolean
  tags?: string
  lock?: string
  pool?: string
  storage?: string
  plugintype?: string
  content?: string
  shared?: boolean
  hastate?: string
  maxmem?: number
  mem?: number
  maxcpu?: number
  cpu?: number
  maxdisk?: number
  disk?: number
  uptime?: number
}

/** One row of `GET /nodes/{node}/qemu|lxc`. */
export interface GuestListItem {
  vmid: number
  type: GuestType
  name?: string
  status: string
  template: boolean
  lock?: string
  tags?: string
  /** qemu listed with `full`: `running`, `paused`, `prelaunch`, ... */
  qmpstatus?: string
  cpus?: number
  maxmem?: number
  mem?: number
  maxdisk?: number
  uptime?: number
}

export interface GuestConfig {
  digest: string
  values: Readonly<Record<string, string>>
}

export interface PendingEntry {
  key: string
  value?: string
  pending?: string
  /** 1 = pending delete, 2 = forced delete */
  delete?: number
}

export interface GuestStatus {
  status: 'running' | 'stopped' | string
  qmpstatus?: string
  lock?: string
  template?: boolean
  name?: string
  uptime?: number
  cpus?: number
  maxmem?: number
  mem?: number
  /** HA managed (0/1 in PVE) */
  haManaged?: boolean
  /** the HA manager's state of the service (`started`, `request_stop`, `stopped`, `error`, ...) when managed */
  haState?: string
}

/**
 * `GET /nodes/{node}/{qemu|lxc}/{vmid}/migrate`: what PVE's migration precondition check says of moving the guest
 * (qemu-server / pve-container `migrate_vm_precondition`; the container's exists on PVE 9 only).
 */
export interface MigratePrecondition {
  running: boolean
  /** nodes PVE would migrate the guest to */
  allowedNodes: string[]
  /**
   * per other node, why PVE would not migrate there (`unavailable_storages`, missing mapped devices, blocking HA
   * resources); empty when it would
   */
  notAllowed: Record<string, string[]>
  /** qemu: volumes not on a shared storage (`check_vm_disks_local`) */
  localDisks: LocalDisk[]
  /** qemu: devices bound to this node (`check_local_resources`: hostpci, usb, serial, ...) */
  localResources: string[]
  /** qemu: devices bound through a resource mapping (they block a live migration) */
  mappedResources: string[]
}

/** One volume of `check_vm_disks_local`, with the attributes of qemu-server's foreach_volid that decide a move. */
export interface LocalDisk {
  volid: string
  /** in a CD drive (`media=cdrom`): an ISO, or the cloud-init drive */
  cdrom: boolean
  /** the cloud-init drive, which PVE regenerates or copies (`is_cloudinit`) */
  cloudInit?: boolean
  /** the names of the snapshots that reference the volume (`referenced_in_snapshot`), sorted */
  snapshots?: string[]
  drive?: string
}

export interface StorageInfo {
  storage: string
  type: string
  content: string[]
  active: boolean
  enabled: boolean
  shared: boolean
  avail?: number
  total?: number
  used?: number
}

/**
 * One section of `GET /storage` (pve-storage PVE::API2::Storage::Config index, api_storage_config): every option
 * in string form (booleans 1/0, content and nodes as PVE's comma lists); the `digest` of storage.cfg beside it.
 * The sensitive properties (password, keyring, the PBS key files) are never in it; a PBS `encryption-key` is the
 * key's fingerprint.
 */
export interface StorageConfigItem {
  storage: string
  type: string
  values: Record<string, string>
  digest?: string
}

export interface StorageContentItem {
  volid: string
  content: string
  format?: string
  size?: number
  vmid?: number
  ctime?: number
  notes?: string
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
  exitstatus?: string
  user?: string
  starttime?: number
}

export interface TaskLogLine {
  n: number
  t: string
}

export interface TaskResult {
  upid: string
  /** true for `OK` and `WARNINGS: n` */
  ok: boolean
  exitstatus: string
  /** the last lines of the task log (filled for failures) */
  log: string[]
}

export interface WaitOptions {
  /** give up after this long (PVE_TASK_TIMEOUT); default 30 min */
  timeoutMs?: number
  /** default 1 s, as PVE clients commonly poll */
  pollIntervalMs?: number
  signal?: AbortSignal
  /** how long a `400 no such task` right after dispatch is tolerated; default 10 s */
  startGraceMs?: number
  /** log lines kept for failures; default 20 */
  logLines?: number
  /**
   * how long the task's node may stay unreachable (every poll transient: 5xx, 595/596, network) before waiting
   * stops with that error; default 30 s. The task may still finish on PVE; the next plan sees what it did.
   */
  unreachableTimeoutMs?: number
}

/** PVE parameters as sent: booleans become 1/0, everything goes through URLSearchParams. */
export type PveParams = Readonly<Record<string, string | number | boolean>>

/** `GET /nodes/{node}/{type}/{vmid}/firewall/*`: each section with the digest PVE checks on writes to it. */
export interface GuestFirewall {
  options: Readonly<Record<string, string>>
  optionsDigest: string
  /** each rule as `GET .../firewall/rules` lists it, without `pos`, `digest`, `ipversion` and `errors` */
  rules: readonly Readonly<Record<string, string>>[]
  rulesDigest: string
  aliases: readonly { name: string; cidr: string; comment?: string }[]
  aliasesDigest: string
  /** sorted by name; each with its entries (sorted by cidr, as PVE stores them) and their list digest */
  ipsets: readonly {
    name: string
    comment?: string
    entries: readonly { cidr: string; nomatch: boolean; comment?: string }[]
    digest: string
  }[]
  ipsetsDigest: string
}

/** One write to a guest firewall (pve-firewall's VM/CT option, rule, alias and ipset handlers). */
export type FirewallWrite =
  | { op: 'options'; set: Readonly<Record<string, string>>; digest?: string }
  | { op: 'rule-create'; rule: Readonly<Record<string, string>> }
  | {
      op: 'rule-update'
      pos: number
      set: Readonly<Record<string, string>>
      delete: readonly string[]
      digest?: string
    }
  | { op: 'rule-move'; pos: number; moveto: number; digest?: string }
  | { op: 'rule-delete'; pos: number; digest?: string }
  | { op: 'alias-create'; name: string; cidr: string; comment?: string }
  | { op: 'alias-update'; name: string; cidr: string; comment?: string; digest?: string }
  | { op: 'alias-delete'; name: string; digest?: string }
  | { op: 'ipset-create'; name: string; comment?: string }
  | { op: 'ipset-comment'; name: string; comment: string; digest?: string }
  | { op: 'ipset-delete'; name: string }
  | { op: 'ipset-add'; name: string; cidr: string; nomatch: boolean; comment?: string }
  | { op: 'ipset-update'; name: string; cidr: string; nomatch: boolean; comment?: string; digest?: string }
  | { op: 'ipset-remove'; name: string; cidr: string; digest?: string }
/** pve-ha-manager's section configs under `/cluster/ha` */
export type HaObject = 'resources' | 'groups' | 'rules'

/** One item of `GET /cluster/ha/{object}`: every scalar as a string (nested values such as `errors` are left out). */
export type HaItem = Readonly<Record<string, string>>

/** One pool of `GET /pools` (pve-manager PVE::API2::Pool index): the pools the caller may audit */
export interface PoolInfo {
  poolid: string
  comment?: string
}

/** One member of `GET /pools?poolid=`: a guest (`qemu`, `lxc`) by vmid, or a storage by id */
export interface PoolMember {
  type: string
  id: string
  node?: string
  vmid?: number
  storage?: string
}

/** `GET /pools?poolid=`: the pool with the members that still exist */
export interface PoolDetail extends PoolInfo {
  members: PoolMember[]
}

/**
 * One snapshot of `GET /nodes/{node}/{qemu|lxc}/{vmid}/snapshot` (PVE::API2::Qemu / PVE::API2::LXC
 * snapshot_list); the `current` pseudo-entry PVE appends ("You are here!") is left out.
 */
export interface SnapshotInfo {
  name: string
  /** seconds since the epoch; absent for a snapshot PVE lists without one */
  snaptime?: number
  description?: string
  parent?: string
  /** set while a snapshot is being taken or deleted (`prepare`, `delete`) */
  snapstate?: string
}
