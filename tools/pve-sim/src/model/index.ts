/**
 * The simulator's PVE model: nodes, storages, guests, tasks. `createModel` returns the model's state (which the
 * route handlers of src/api serve; src/sim-cluster.ts joins the two) and its control methods for tests, faults
 * and drift. The model imports nothing from the layers above it (src/http, src/api, src/access, src/control).
 */
import { Cluster, type AclCleanup, type ClusterOptions, type PowerState } from './cluster.js'
import type { GuestType } from './options.js'
import type { TaskBehaviour } from './tasks.js'
import type { ContentType } from './storage.js'
import { controls } from './control.js'
import { preloadEstate } from './estate.js'
import { warmStats } from './views.js'

export type { AclCleanup, ClusterOptions, PowerState, GuestType, TaskBehaviour, ContentType }
export { ESTATE_ARTIFACTS } from './estate.js'

export interface GuestInfo {
  vmid: number
  type: GuestType
  node: string
  status: PowerState
  /** the current (applied) config values as stored in the file */
  config: Record<string, string>
  /** LXC: the raw `lxc.*` lines, in file order */
  rawLxc: [string, string][]
  pending: Record<string, string>
  /** pending deletions: key -> force */
  pendingDelete: Record<string, boolean>
  lock?: string
  digest: string
}

export interface TaskInfo {
  upid: string
  node: string
  type: string
  id: string
  status: 'running' | 'stopped'
  exitstatus?: string
  log: string[]
}

export interface VolumeSpec {
  /** the file name inside the content directory (`debian-12.qcow2`) for iso/vztmpl/import/snippets/backup */
  filename: string
  content: ContentType
  /** bytes; for import images the virtual size a disk imported from it gets (default 2 GiB) */
  size?: number
  /** the file's bytes, from which download-url computes checksums of an existing file */
  data?: string | Buffer
}

/** a guest loaded as an existing config file (`loadGuest`) */
export interface GuestSpec {
  vmid: number
  type: 'qemu' | 'lxc'
  node: string
  /** the config file's main section, key by key, as PVE stores it */
  config: Record<string, string>
  /** default stopped */
  status?: PowerState
}

export interface SimModel {
  readonly pveVersion: '9.1' | '8.4'

  // --- drift: out-of-band edits, as `qm set`/`pct set` by hand (no hotplug, no normalisation beyond the file)
  /** set a config key in the main section (`description` is trimmed like PVE does) */
  driftSet(vmid: number, key: string, value: string): void
  /** delete a config key from the main section */
  driftDelete(vmid: number, key: string): void
  /** change the power state out of band (a guest crashed or was started by hand) */
  driftPower(vmid: number, status: PowerState): void
  /**
   * replace the raw `lxc.*` lines of a container config, as an admin edits the file by hand (the API cannot
   * write them); GET .../config returns them as `lxc: [[key, value], ...]`
   */
  setRawLxc(vmid: number, pairs: [string, string][]): void

  /**
   * a guest that already exists, with this config file (as the preloaded estate's guests): the volumes it names
   * as its own are registered on its node with their `size=`; no task, no defaults added
   */
  loadGuest(spec: GuestSpec): void

  /**
   * the ACL cleanups PVE runs when a guest, storage or pool goes (remove_vm_access, remove_storage_access,
   * delete_pool_acl): the ACL tree is the access layer's, which registers here
   */
  setAclCleanup(cleanup: AclCleanup): void
  /** a backup job's options as jobs.cfg stores them (file values), or undefined */
  backupJob(id: string): Record<string, string> | undefined
  /** whether replication.cfg has this job id */
  replicationJobExists(id: string): boolean

  // --- inspection
  /** user.cfg's pools: members by vmid and storage id (what pool ACLs reach) */
  pools(): { poolid: string; comment?: string; vms: number[]; storage: string[] }[]
  /** the config file text exactly as PVE would store it (digest = SHA-1 of it), or undefined */
  configText(vmid: number): string | undefined
  /** the guest's /etc/pve/firewall/<vmid>.fw text, or undefined when there is none */
  firewallText(vmid: number): string | undefined
  /** an admin's hand edit of <vmid>.fw (undefined or '' removes it); the next request parses it as PVE would */
  setFirewallText(vmid: number, text: string | undefined): void
  /** /etc/pve/firewall/cluster.fw (cluster options, rules, aliases, ipsets, security groups), or undefined */
  clusterFirewallText(): string | undefined
  /** an admin's hand edit of cluster.fw (undefined or '' removes it); guests' `dc/` names resolve against it */
  setClusterFirewallText(text: string | undefined): void
  guest(vmid: number): GuestInfo | undefined
  guests(): GuestInfo[]
  tasks(): TaskInfo[]
  /** finish every task that is due now (the model also does this on every request) */
  settle(): void

  // --- faults
  /** set (or clear with null) the config `lock` property, as a crashed backup would leave it */
  setLock(vmid: number, lock: string | null): void
  /** hold the config flock of a vmid: writes fail with `can't lock file '...' - got timeout` until released */
  setFlockContention(vmid: number, held: boolean): void
  /** a storage whose connection check fails: `storage '<id>' is not online` wherever PVE activates it */
  setStorageOnline(storage: string, online: boolean): void
  /**
   * someone else holds the storage's lock: allocation, clone and free on it fail with
   * `cfs-lock 'storage-<id>' error: got lock request timeout` (shared) or `can't lock file ... got timeout` (local)
   */
  setStorageLockContention(storage: string, held: boolean): void
  /** per task type (`qmstart`, `qmcreate`, `download`, ...): fail with a message, take longer, add warnings; null resets */
  setTaskBehaviour(type: string, behaviour: TaskBehaviour | null): void
  setTaskDuration(ms: number): void
  /** window after dispatch during which task status/log answer 400 `no such task` */
  setNoSuchTaskWindow(ms: number): void
  setResourcesLag(ms: number): void
  /** one HA CRM/LRM cycle (how long after a hastart/hastop the LRM runs the real task) */
  setHaLag(ms: number): void
  /** the HA manager's log lines (syslog of pve-ha-crm and pve-ha-lrm on PVE; no API serves them), oldest first */
  haLog(): string[]
  /** a node that is offline or (again) online; a failed node that comes back online was reset (guests stopped) */
  setNodeOnline(node: string, online: boolean): void
  /**
   * a node fails: it leaves the cluster (offline, its guests stop with it), the HA manager fences it once the fence
   * delay passed and recovers its HA services on other nodes once its agent lock expired (defaults: 6 and 12 HA
   * cycles, for PVE's 60 s and 120 s at a 10 s CRM cycle); `setNodeOnline(node, true)` brings it back
   */
  failNode(node: string, timing?: { fenceDelayMs?: number; agentLockMs?: number }): void
  /** make a guest ignore ACPI shutdown (shutdown without forceStop then times out) */
  setIgnoresShutdown(vmid: number, ignores: boolean): void

  // --- storage
  /** add a file to a storage (iso, vztmpl, import, snippets, backup); returns the volid */
  addVolume(node: string, storage: string, spec: VolumeSpec): string
  /** the content listing of a storage, as GET .../content returns it */
  storageContent(node: string, storage: string): Record<string, unknown>[]
  /**
   * what the guest wrote into a disk volume: a marker a migration, a disk move or a reassignment carries to the
   * volume's new place, so a test can tell a moved disk from a fresh one (`readVolume`: undefined when never written
   * or when the volume does not exist on that node)
   */
  writeVolume(node: string, volid: string, data: string): void
  readVolume(node: string, volid: string): string | undefined
  /**
   * how many times PVE ran `qemu-img info` so far: a content listing of a file storage (dir, nfs, cifs) that takes
   * in images or rootdir (no `content=`, or `content=images`) inspects every image on it, on every call
   */
  imageInfoRuns(): number
  /**
   * what download-url fetches from a URL: bytes (checksums are computed over them), or an error message;
   * `untrustedCertificate` makes an https download fail unless `verify-certificates` is 0
   */
  setRemoteFile(
    url: string,
    file: { content: string | Buffer; size?: number; untrustedCertificate?: boolean } | { error: string },
  ): void
  /** the checksum of what download-url would fetch from `url` */
  remoteChecksum(url: string, algorithm: 'md5' | 'sha1' | 'sha224' | 'sha256' | 'sha384' | 'sha512'): string
}

/** the model's state (for the route handlers) and its controls */
export function createModel(options: ClusterOptions): { state: Cluster; model: SimModel } {
  const c = new Cluster(options)
  if (options.estate && options.estate.guests > 0) {
    preloadEstate(c, options.estate.guests)
    warmStats(c)
  }
  const pools = () =>
    [...c.pools.pools.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([poolid, e]) => ({
        poolid,
        ...(e.comment !== undefined ? { comment: e.comment } : {}),
        vms: [...e.vms].sort((a, b) => a - b),
        storage: [...e.storage].sort(),
      }))
  const setAclCleanup = (cleanup: AclCleanup) => {
    c.aclCleanup = cleanup
  }
  const backupJob = (id: string) => {
    const job = c.backupJobs.jobs.get(id)
    return job ? { ...job } : undefined
  }
  const replicationJobExists = (id: string) => c.replication.jobs.has(id)
  return {
    state: c,
    model: {
      pveVersion: options.pveVersion,
      ...controls(c),
      pools,
      setAclCleanup,
      backupJob,
      replicationJobExists,
    },
  }
}
