/**
 * The planner's ports: the only way it touches PVE. They are written in `@proxops/pve-client/wire`'s types
 * (the client's own result and parameter types, through the subpath without I/O); the client implements both
 * ports structurally, which `ports.test-d.ts` checks at compile time. A read-only client implements
 * `LiveReader` alone, so diff, status and adopt cannot write.
 *
 * Values cross the port in PVE's own vocabulary (config keys, property strings) but already decoded from
 * PVE's lenient JSON: numbers as numbers, config values as strings, booleans as booleans.
 */
import type {
  ClusterResource,
  GuestConfig,
  GuestListItem,
  GuestStatus,
  GuestType,
  HaItem,
  HaObject,
  MigratePrecondition,
  PendingEntry,
  PoolDetail,
  PoolInfo,
  SdnObject,
  SdnZoneStatus,
  PveParams,
  SnapshotInfo,
  StorageConfigItem,
  StorageContentItem,
  StorageInfo,
  TaskRef,
  TaskResult,
  TaskStatus,
  VersionInfo,
  WaitOptions,
  GuestFirewall,
  FirewallWrite,
  AccessGroup,
  AccessRole,
  AccessUser,
  AclEntry,
  NewToken,
  RealmInfo,
} from '@proxops/pve-client/wire'

export interface LiveReader {
  version(): Promise<VersionInfo>
  clusterResources(type?: 'vm' | 'storage' | 'node'): Promise<ClusterResource[]>
  guestConfig(node: string, type: GuestType, vmid: number, options?: { current?: boolean }): Promise<GuestConfig>
  guestPending(node: string, type: GuestType, vmid: number): Promise<PendingEntry[]>
  guestStatus(node: string, type: GuestType, vmid: number): Promise<GuestStatus>
  /** `GET /nodes/{node}/{type}`: observe() reads power state here (two requests per node) */
  nodeGuests(node: string, type: GuestType): Promise<GuestListItem[]>
  storages(node: string): Promise<StorageInfo[]>
  storageContent(node: string, storage: string, content?: string): Promise<StorageContentItem[]>
  taskStatus(task: TaskRef): Promise<TaskStatus>
  /** `GET /access/permissions?path=`: the privileges the caller holds on one ACL path (the preflight) */
  privileges(path: string): Promise<readonly string[]>
  /** the guest firewall (options, rules, aliases, ipsets with entries) */
  guestFirewall(node: string, type: GuestType, vmid: number): Promise<GuestFirewall>
  /** `GET /cluster/ha/{object}` */
  haConfig(object: HaObject): Promise<HaItem[]>
  /** `GET /cluster/backup`: the vzdump jobs, each option in PVE's string form (property strings, sorted keys) */
  backupJobs(): Promise<{ id: string; values: Record<string, string> }[]>
  /** `GET /cluster/nextid?vmid=`: false when the vmid is used anywhere on the cluster, also by a hidden guest */
  vmidFree(vmid: number): Promise<boolean>
  /** `GET /cluster/sdn/{zones|vnets|controllers}?pending=1` */
  sdn(kind: 'zones' | 'vnets' | 'controllers'): Promise<SdnObject[]>
  /** `GET /cluster/sdn/vnets/{vnet}/subnets?pending=1` */
  sdnSubnets(vnet: string): Promise<SdnObject[]>
  /** `GET /nodes/{node}/sdn/zones`: each zone's status on the node */
  sdnZoneStatus(node: string): Promise<SdnZoneStatus[]>
  /** `GET /pools` */
  pools(): Promise<PoolInfo[]>
  /** `GET /pools?poolid=`: comment and members (guests by vmid, storages) */
  pool(poolid: string): Promise<PoolDetail>
  /** `GET /access/users?full=1`: users with their groups and tokens (kinds/access) */
  accessUsers(): Promise<AccessUser[]>
  /** `GET /access/groups` */
  accessGroups(): Promise<AccessGroup[]>
  /** `GET /access/roles` */
  accessRoles(): Promise<AccessRole[]>
  /** `GET /access/acl` */
  acl(): Promise<AclEntry[]>
  /** `GET /access/domains` */
  realms(): Promise<RealmInfo[]>
  /** `GET .../migrate`: PVE's precondition check for moving the guest (qemu; lxc from PVE 9) */
  migratePrecondition(node: string, type: GuestType, vmid: number): Promise<MigratePrecondition>
  /** `GET /cluster/options`: datacenter.cfg, every option as a string (property strings with sorted keys) */
  clusterOptions(): Promise<Record<string, string>>
  /** `GET /storage`: every storage.cfg section (no secret is ever in it), one request */
  storageConfigs(): Promise<StorageConfigItem[]>
  /** `GET .../snapshot` without PVE's `current` entry */
  snapshots(node: string, type: GuestType, vmid: number): Promise<SnapshotInfo[]>
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
  /**
   * `POST .../move_disk` (qemu) or `.../move_volume` (lxc): one volume to another storage; with `delete` PVE frees
   * the source once its copy is in the config
   */
  moveDisk(
    node: string,
    type: GuestType,
    vmid: number,
    disk: string,
    storage: string,
    options?: { delete?: boolean; digest?: string },
  ): Promise<TaskRef>
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
  /** One synchronous write to a guest firewall */
  firewallWrite(node: string, type: GuestType, vmid: number, write: FirewallWrite): Promise<void>
  /**
   * `POST /cluster/ha/{object}` (the id inside params), `PUT` or `DELETE /cluster/ha/{object}/{id}`: synchronous
   * section-config writes; `digest` makes PVE refuse a PUT when the file changed since it was read.
   */
  haWrite(
    object: HaObject,
    method: 'POST' | 'PUT' | 'DELETE',
    id: string,
    params: PveParams,
    options?: { digest?: string },
  ): Promise<void>
  /** `/cluster/backup` (PVE::API2::Backup): synchronous, no task */
  createBackupJob(params: PveParams): Promise<unknown>
  updateBackupJob(id: string, params: PveParams): Promise<unknown>
  deleteBackupJob(id: string): Promise<unknown>
  /** an SDN config-file edit below `/cluster/sdn` (synchronous; pending until applied) */
  sdnWrite(method: 'POST' | 'PUT' | 'DELETE', path: string, params: PveParams): Promise<void>
  /** `PUT /cluster/sdn`: a `reloadnetworkall` task */
  applySdn(): Promise<TaskRef>
  /** `PUT /cluster/options` (PVE::API2::Cluster set_options): synchronous */
  setClusterOptions(params: PveParams): Promise<unknown>
  /** `/storage` (PVE::API2::Storage::Config): synchronous, no task */
  createStorage(params: PveParams): Promise<unknown>
  updateStorage(storage: string, params: PveParams): Promise<unknown>
  deleteStorage(storage: string): Promise<unknown>
  /** `/pools` (PVE::API2::Pool): synchronous, no task */
  createPool(params: PveParams): Promise<unknown>
  updatePool(params: PveParams): Promise<unknown>
  deletePool(poolid: string): Promise<unknown>
  /** `/access` (pve-access-control API2::User, Group, Role, ACL): synchronous, no task */
  createUser(params: PveParams): Promise<unknown>
  updateUser(userid: string, params: PveParams): Promise<unknown>
  deleteUser(userid: string): Promise<unknown>
  createGroup(params: PveParams): Promise<unknown>
  updateGroup(groupid: string, params: PveParams): Promise<unknown>
  deleteGroup(groupid: string): Promise<unknown>
  createRole(params: PveParams): Promise<unknown>
  updateRole(roleid: string, params: PveParams): Promise<unknown>
  deleteRole(roleid: string): Promise<unknown>
  /** generate_token: the secret comes back this once, in a holder that prints `(sensitive)` */
  createToken(userid: string, tokenid: string, params: PveParams): Promise<NewToken>
  updateToken(userid: string, tokenid: string, params: PveParams): Promise<unknown>
  deleteToken(userid: string, tokenid: string): Promise<unknown>
  updateAcl(params: PveParams): Promise<unknown>
  /** `POST .../snapshot` and `DELETE .../snapshot/{snapname}`: tasks */
  createSnapshot(
    node: string,
    type: GuestType,
    vmid: number,
    snapname: string,
    options?: { description?: string },
  ): Promise<TaskRef>
  deleteSnapshot(node: string, type: GuestType, vmid: number, snapname: string): Promise<TaskRef>
  /** `POST .../migrate`: a qmigrate / vzmigrate task (hamigrate for an HA-managed guest) */
  migrateGuest(node: string, type: GuestType, vmid: number, params: PveParams): Promise<TaskRef>
  /** Waits for a task to stop; rejects with a TaskTimeout error, resolves with ok=false when it failed. */
  waitTask(task: TaskRef, options?: WaitOptions): Promise<TaskResult>
}

/**
 * ProxOps' own record of the storages a cluster entry wrote and of the fingerprints of the credentials it sent
 * (docs/storage.md#ownership-and-credentials). PVE storages carry no comment and PVE never returns a password or
 * keyring, so neither ownership nor a rotated secret can be read from PVE: the CLI keeps this in its data dir.
 * Without one, ProxOps never prunes a storage and sends a credential on create only.
 */
export interface StorageLedger {
  /** the storage ids this cluster entry created or changed, sorted */
  owned(): readonly string[]
  /** the fingerprint recorded for a storage's sensitive property when ProxOps last sent it */
  fingerprint(storage: string, key: string): string | undefined
  /** a keyed hash of a secret value: comparable, never the value and not reversible without the ledger's key */
  digest(value: string): string
  /** after a successful create or update: the storage is this entry's; merges the fingerprints of what was sent */
  record(storage: string, fingerprints: Readonly<Record<string, string>>): void
  /** after a successful delete */
  forget(storage: string): void
}
