import { GuestConfig } from './config.js'
import { fail500, PveHttpError } from './errors.js'
import { Ha } from './ha.js'
import { FirewallFiles } from './firewall.js'
import { Pools } from './pools.js'
import { DatacenterConfig } from './datacenter.js'
import { BackupJobs } from './backup.js'
import { ReplicationJobs } from './replication.js'
import { Sdn } from './sdn.js'
import type { GuestType } from './options.js'
import { Rng } from './rng.js'
import { defaultStorages, NodeStorage, StorageConfig } from './storage.js'
import { TaskManager, type TaskWork } from './tasks.js'

export interface ClusterOptions {
  nodes: string[]
  pveVersion: '9.1' | '8.4'
  seed: number
  taskDurationMs: number
  /** how long fresh guests and power changes take to show in /cluster/resources (pvestatd cycle); default 500 ms */
  resourcesLagMs?: number
  now?: () => number
  estate?: { guests: number }
  /** window after dispatch in which task status/log answer 400 `no such task`; default 0 */
  noSuchTaskWindowMs?: number
  /** one HA CRM/LRM cycle: how long after a hastart/hastop the LRM starts the real task; default 2000 ms */
  haLagMs?: number
}

export type PowerState = 'running' | 'stopped'

/**
 * user.cfg's ACL tree is kept by the access layer (src/access); these are the cleanups pve-access-control runs
 * when the model removes what an ACL path names. The default does nothing (a model without access control).
 */
export interface AclCleanup {
  /** AccessControl remove_vm_access: the ACLs on /vms/<vmid> */
  vm(vmid: number): void
  /** AccessControl remove_storage_access: the ACLs on /storage/<id> */
  storage(id: string): void
  /** AccessControl delete_pool_acl: the ACL node of /pool/<poolid> */
  pool(poolid: string): void
}

export interface Guest {
  vmid: number
  type: GuestType
  node: string
  conf: GuestConfig
  status: PowerState
  /** qemu: `paused` while suspended */
  paused: boolean
  createdMs: number
  /** the status pvestatd last published, and when the real status last changed */
  seenStatus: PowerState | 'unknown'
  statusChangedMs: number
  startedMs?: number
  /** the guest ignores ACPI shutdown requests (shutdown times out) */
  ignoresShutdown: boolean
}

export interface NodeState {
  name: string
  online: boolean
  storage: NodeStorage
  /** boot time in ms, for uptime */
  bootMs: number
  /** process start in clock ticks, used as the pstart of UPIDs */
  pstartBase: number
  maxcpu: number
  maxmem: number
  /**
   * a failed node (control `failNode`): it crashed and left the quorate partition, so the HA manager fences it
   * once `fenceDelayMs` passed and recovers its HA services once its agent lock expired (`agentLockMs`)
   */
  failed?: { atMs: number; fenceDelayMs: number; agentLockMs: number }
}

/** a held flock on a guest config (`lock_config`), by a running task or by fault injection */
export interface FlockHold {
  mode: 'shared' | 'exclusive'
  /** the holding task, or undefined for injected contention */
  upid?: string
}

export const VERSIONS = {
  '9.1': { version: '9.1.1', release: '9.1', repoid: '42dca6b6c8b8d4a1', qemu: '10.1.2' },
  '8.4': { version: '8.4.1', release: '8.4', repoid: '2a5fa54a8503f96d', qemu: '9.2.0' },
} as const

export class Cluster {
  readonly rng: Rng
  readonly now: () => number
  readonly nodes = new Map<string, NodeState>()
  readonly guests = new Map<number, Guest>()
  readonly tasks: TaskManager
  readonly flocks = new Map<number, FlockHold[]>()
  /** storage.cfg (cluster-wide), shared volume namespaces, offline storages, held storage locks */
  readonly storage: StorageConfig
  resourcesLagMs: number
  readonly pveVersion: '9.1' | '8.4'
  /** remote files for download-url: url -> content (absent = a deterministic file derived from the URL) */
  readonly remote = new Map<string, { content: Buffer } | { error: string }>()
  /** the size a downloaded file reports (import images: the virtual size a disk imported from it gets) */
  readonly remoteSizes = new Map<string, number>()
  /** https URLs whose server certificate does not verify (wget needs `--no-check-certificate`) */
  readonly untrustedCertificates = new Set<string>()
  readonly ha: Ha
  /** /etc/pve/firewall/<vmid>.fw and cluster.fw (model/firewall.ts) */
  readonly firewalls = new FirewallFiles(() => Math.floor(this.now() / 1000))
  /** user.cfg's resource pools (pve-manager PVE::API2::Pool) */
  readonly pools = new Pools()
  /** datacenter.cfg (/cluster/options) */
  readonly datacenter = new DatacenterConfig()
  /** jobs.cfg's vzdump jobs (/cluster/backup) */
  readonly backupJobs: BackupJobs
  /** replication.cfg (/cluster/replication) */
  readonly replication: ReplicationJobs
  /** pve-network's SDN configuration: pending files, running config, each node's generated version */
  readonly sdn = new Sdn()
  /** guest_migration_lock (`/var/lock/pve-manager/pve-migrate-<vmid>`): the migration task holding it */
  readonly migrationLocks = new Map<number, string>()
  aclCleanup: AclCleanup = { vm: () => {}, storage: () => {}, pool: () => {} }

  constructor(readonly options: ClusterOptions) {
    this.rng = new Rng(options.seed)
    this.now = options.now ?? (() => Date.now())
    this.pveVersion = options.pveVersion
    this.resourcesLagMs = options.resourcesLagMs ?? 500
    this.tasks = new TaskManager(this.rng, this.now, options.taskDurationMs)
    this.tasks.noSuchTaskWindowMs = options.noSuchTaskWindowMs ?? 0
    this.ha = new Ha(this, options.haLagMs ?? 2000)
    this.backupJobs = new BackupJobs(this)
    this.replication = new ReplicationJobs(this)
    const t = this.now()
    this.storage = new StorageConfig(defaultStorages(options.pveVersion))
    for (const name of options.nodes) {
      this.nodes.set(name, {
        name,
        online: true,
        storage: new NodeStorage(name, this.storage),
        bootMs: t - 86_400_000 - this.rng.int(86_400_000),
        pstartBase: 1000 + this.rng.int(10_000_000),
        maxcpu: 16,
        maxmem: 64 * 1024 ** 3,
      })
    }
  }

  get version(): (typeof VERSIONS)['9.1' | '8.4'] {
    return VERSIONS[this.pveVersion]
  }

  settle(): void {
    this.tasks.settle()
    this.replication.settle()
    // CRM steps start LRM tasks; tasks that ended meanwhile are settled first so the CRM sees their outcome
    this.ha.settle()
  }

  /** the node's cluster address (corosync's ring0 address, what remote_node_ip answers) */
  nodeIp(name: string): string {
    return `10.0.0.${[...this.nodes.keys()].indexOf(name) + 1}`
  }

  /** votequorum: one vote per node, quorate while more than half of the nodes are online */
  quorate(): boolean {
    const nodes = [...this.nodes.values()]
    return 2 * nodes.filter((n) => n.online).length > nodes.length
  }

  /** PVE::Cluster::check_cfs_quorum */
  checkCfsQuorum(): void {
    if (!this.quorate()) throw fail500('cluster not ready - no quorum?')
  }

  /** PVE::Cluster::check_node_exists */
  checkNodeExists(name: string): void {
    if (!this.nodes.has(name)) throw fail500(`no such cluster node '${name}'`)
  }

  /** 500 `hostname lookup` for unknown nodes, 595 for offline ones (pveproxy cannot reach them) */
  requireNode(name: string): NodeState {
    const n = this.nodes.get(name)
    if (!n)
      throw fail500(
        `hostname lookup '${name}' failed - failed to get address info for: ${name}: Name or service not known`,
      )
    if (!n.online) throw new PveHttpError(595, 'No route to host')
    return n
  }

  /** the guest of that type on that node, else PVE's `Configuration file ... does not exist` */
  requireGuest(node: string, type: GuestType, vmid: number): Guest {
    const g = this.guests.get(vmid)
    if (!g || g.node !== node || g.type !== type) {
      const dir = type === 'qemu' ? 'qemu-server' : 'lxc'
      throw fail500(`Configuration file 'nodes/${node}/${dir}/${vmid}.conf' does not exist`)
    }
    return g
  }

  flockPath(type: GuestType, vmid: number): string {
    return type === 'qemu' ? `/var/lock/qemu-server/lock-${vmid}.conf` : `/run/lock/lxc/pve-config-${vmid}.lock`
  }

  /** the error a lock_config call meets when someone else holds the flock (after PVE's wait); `self` is the
   *  calling task, whose own hold does not count */
  flockError(
    type: GuestType,
    vmid: number,
    mode: 'shared' | 'exclusive' = 'exclusive',
    self?: string,
  ): string | undefined {
    const holds = (this.flocks.get(vmid) ?? []).filter((h) => !h.upid || this.tasks.peek(h.upid)?.status === 'running')
    this.flocks.set(vmid, holds)
    const conflict = holds.some(
      (h) => (self === undefined || h.upid !== self) && (mode === 'exclusive' || h.mode === 'exclusive'),
    )
    return conflict ? `can't lock file '${this.flockPath(type, vmid)}' - got timeout` : undefined
  }

  /** throw the flock error as an immediate 500 */
  lockConfigSync(type: GuestType, vmid: number, mode: 'shared' | 'exclusive' = 'exclusive'): void {
    const e = this.flockError(type, vmid, mode)
    if (e) throw fail500(e)
  }

  holdFlock(vmid: number, hold: FlockHold): void {
    const holds = this.flocks.get(vmid) ?? []
    holds.push(hold)
    this.flocks.set(vmid, holds)
  }

  releaseInjectedFlock(vmid: number): void {
    const holds = (this.flocks.get(vmid) ?? []).filter((h) => h.upid !== undefined)
    this.flocks.set(vmid, holds)
  }

  /** `VM is locked (create)` / `CT is locked (backup)` */
  lockError(g: Guest): string | undefined {
    const lock = g.conf.get('lock')
    if (lock === undefined) return undefined
    return `${g.type === 'qemu' ? 'VM' : 'CT'} is locked (${lock})`
  }

  checkLock(g: Guest, skiplock = false): void {
    const e = skiplock ? undefined : this.lockError(g)
    if (e) throw fail500(e)
  }

  dispatch(node: string, type: string, id: string, actor: string, work: TaskWork): string {
    const n = this.nodes.get(node)
    return this.tasks.dispatch(node, type, id, actor, work, n?.pstartBase ?? 1000)
  }

  setStatus(g: Guest, status: PowerState): void {
    if (g.status === status) return
    g.seenStatus = this.visibleStatus(g)
    g.status = status
    g.paused = false
    g.statusChangedMs = this.now()
    g.startedMs = status === 'running' ? this.now() : undefined
    // the HA manager notices (the LRM restarts a guest that should run, stops one that should not)
    this.ha.powerChanged(g)
  }

  /** the status /cluster/resources shows: lags real changes by resourcesLagMs */
  visibleStatus(g: Guest): PowerState | 'unknown' {
    return this.now() - g.statusChangedMs < this.resourcesLagMs ? g.seenStatus : g.status
  }

  /** a guest pvestatd has not seen yet (created within the lag window) */
  isFresh(g: Guest): boolean {
    return this.now() - g.createdMs < this.resourcesLagMs
  }

  addGuest(vmid: number, type: GuestType, node: string, conf: GuestConfig): Guest {
    const now = this.now()
    const g: Guest = {
      vmid,
      type,
      node,
      conf,
      status: 'stopped',
      paused: false,
      createdMs: now,
      seenStatus: 'unknown',
      statusChangedMs: now,
      ignoresShutdown: false,
    }
    this.guests.set(vmid, g)
    return g
  }

  /** removes a guest and frees every volume it owns on its node */
  removeGuest(g: Guest): void {
    this.guests.delete(g.vmid)
  }

  /** next free vmid >= 100 (no reservation) */
  nextId(): number {
    let id = 100
    while (this.guests.has(id)) id++
    return id
  }
}
