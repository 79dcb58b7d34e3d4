/**
 * LiveInventory: what observe() read of one cluster, as plain data. observe() fills it through the
 * LiveReader port; plan() reads it and nothing else of PVE. Anything that could not be read is marked
 * unknown (never "absent"), so the planner neither creates nor deletes on a failed read: every such read has
 * one form, `unreadable: <why>` (an `Observed<T>`, or an object's identity with `unreadable`).
 */
import type { GuestFirewall, GuestType, HaItem, MigratePrecondition, SdnObject } from '@proxops/pve-client/wire'
import type { AccessGroup, AccessRole, AccessUser, AclEntry, RealmInfo } from '@proxops/pve-client/wire'

/** One live read: what PVE showed, or why it could not be read this cycle (nothing is planned from it then). */
export type Observed<T> = { readonly known: T } | { readonly unreadable: string }

/** the value of a read that succeeded, else undefined */
export const known = <T>(o: Observed<T>): T | undefined => ('known' in o ? o.known : undefined)

export interface LiveNode {
  node: string
  online: boolean
}

export interface LiveGuest {
  type: GuestType
  vmid: number
  node: string
  name?: string
  template: boolean
  /** running | stopped | paused | unknown (PVE's resource view lags; observe prefers the node's guest list) */
  status: string
  /** qemu: the QMP status when it is not plain `running` (`paused`, `prelaunch`, `io-error`, ...) */
  qmpstatus?: string
  /** tags as PVE stores them, split on `;`, `,` and whitespace, lower-cased, de-duplicated, sorted */
  tags: string[]
  /** PVE's config lock (`create`, `clone`, `backup`, `migrate`, ...) when one is set */
  lock?: string
  /**
   * the HA manager reports the guest's service in `error` (/cluster/resources `hastate`; only a `disabled`
   * request takes it out, pve-ha-manager next_state_error); absent otherwise
   */
  haError?: true
  /** the config digest that updates must send */
  digest: string
  /** applied values (current=1 view), PVE string forms, without `digest` */
  config: Readonly<Record<string, string>>
  /** pending new values for keys that have them */
  pending: Readonly<Record<string, string>>
  /** keys with a pending delete */
  pendingDeletes: readonly string[]
}

/** A guest that exists but whose config/status could not be read this cycle. */
export interface UnknownGuest {
  type: GuestType
  vmid: number
  node: string
  name?: string
  tags: string[]
  /** why it could not be read */
  unreadable: string
}

/**
 * A desired vmid that a guest outside what observe() reads holds: on a node outside the allowlist (`node` and
 * what /cluster/resources says of it), or one the token cannot see at all (no `node`: PVE's
 * `/cluster/nextid?vmid=` answered that it exists).
 */
export interface HeldVmid {
  vmid: number
  node?: string
  type?: GuestType
  name?: string
}

export interface LiveStorage {
  node: string
  storage: string
  /** dir, lvmthin, zfspool, nfs, ... */
  type: string
  content: readonly string[]
  active: boolean
  enabled: boolean
  shared: boolean
}

/** A volume found in a storage listing (iso, vztmpl, import content). */
export interface LiveVolume {
  node: string
  storage: string
  volid: string
  content: string
  format?: string
  size?: number
}

export interface LiveInventory {
  cluster: string
  pveVersion: string
  /** the allowlisted nodes */
  nodes: readonly LiveNode[]
  /** the cluster's other nodes (outside the allowlist: nothing on them is read), sorted; absent = none */
  nodesOutside?: readonly string[]
  /** sorted by vmid */
  guests: readonly LiveGuest[]
  /** sorted by vmid */
  unknownGuests: readonly UnknownGuest[]
  /** sorted by node, storage */
  storages: readonly LiveStorage[]
  /** sorted by node, storage, volid */
  volumes: readonly LiveVolume[]
  /** listings that failed: volumes there are unknown, so artifacts there are neither created nor reported absent */
  unreadableStorages: readonly { node: string; storage: string; unreadable: string }[]
  /**
   * guest firewalls, read only for the guests observe() was asked about (`ObserveOptions.firewalls`), sorted by
   * vmid; an unreadable one is not planned this cycle
   */
  firewalls: readonly LiveFirewall[]
  /** the HA configuration (unreadable: nothing HA is planned) */
  ha: Observed<LiveHa>
  /** `/cluster/backup` jobs sorted by id (unreadable: no job is created, changed or deleted) */
  backupJobs: Observed<readonly LiveBackupJob[]>
  /** desired vmids (`ObserveOptions.vmids`) held by guests observe() does not read, sorted by vmid */
  heldVmids: readonly HeldVmid[]
  /** the resource pools the token may audit, sorted by id (unreadable: no pool or membership is planned) */
  pools: Observed<readonly LivePool[]>
  /** the access objects (kinds/access), read only when the cluster manages access (ObserveOptions.access) */
  access?: Observed<LiveAccess>
  /**
   * the SDN objects with their pending state (kinds/sdn): read only when the desired state declares SDN objects
   * (or for adopt); absent = not read this cycle
   */
  sdn?: Observed<LiveSdn>
  /**
   * PVE's migration precondition check of each guest that sits on another allowlisted node than its manifest's
   * `spec.node` (`ObserveOptions.guestNodes`), sorted by vmid; absent when no guest is away from its node
   */
  migrationChecks?: readonly MigrationCheck[]
  /** `GET /storage` sections sorted by id (kinds/storage); absent when not read (no Storage is planned) */
  storageConfigs?: Observed<readonly LiveStorageConfig[]>
  /**
   * the volumes of each storage this entry owns that git no longer declares (its prune candidates), from a content
   * listing on each node that sees it (ObserveOptions.ownedStorages); volids sorted
   */
  storageVolumes?: Readonly<Record<string, Observed<readonly string[]>>>
  /** `GET /cluster/options`, every option as a string (kinds/cluster-options); absent when not read */
  clusterOptions?: Observed<Readonly<Record<string, string>>>
}

/** One storage.cfg section as `GET /storage` lists it: options as strings, no secret (kinds/storage) */
export interface LiveStorageConfig {
  storage: string
  type: string
  values: Readonly<Record<string, string>>
  digest?: string
}

/** `GET .../migrate` of one guest, where it is now (kinds/guest/migrate.ts) */
export interface MigrationCheck {
  vmid: number
  node: string
  /** absent for a container on PVE 8, which has no precondition check */
  check?: Observed<MigratePrecondition>
}

/** `pending=1` listings of the SDN config files; subnets of the vnets git declares or ProxOps marked */
export interface LiveSdn {
  zones: readonly SdnObject[]
  vnets: readonly SdnObject[]
  controllers: readonly SdnObject[]
  subnets: readonly SdnObject[]
}

/** One job of `GET /cluster/backup`: every option as a string (property strings printed, keys sorted). */
export interface LiveBackupJob {
  id: string
  values: Readonly<Record<string, string>>
}

/** user.cfg as the access listings show it: five requests whatever its size (kinds/access/read.ts) */
export interface LiveAccess {
  users: readonly AccessUser[]
  groups: readonly AccessGroup[]
  roles: readonly AccessRole[]
  acl: readonly AclEntry[]
  realms: readonly RealmInfo[]
}

/** One pool as `/pools?poolid=` answers it (planner/src/pool) */
export interface LivePool {
  poolid: string
  comment?: string
  /** member guests that exist (whether or not this token can see them otherwise), sorted */
  vmids: readonly number[]
  /** member storages, sorted */
  storages: readonly string[]
}

export type LiveFirewall = { vmid: number } & Observed<GuestFirewall>

/** pve-ha-manager's resources and the node preferences of this PVE version (planner/src/ha) */
export interface LiveHa {
  /** groups on PVE 8, node-affinity (and other) rules on PVE 9 */
  form: 'groups' | 'rules'
  /** sorted by sid */
  resources: readonly HaItem[]
  /** groups or rules, sorted by id */
  preferences: readonly HaItem[]
}
