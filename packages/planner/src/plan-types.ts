/**
 * The Plan: what plan() decided, as plain JSON-serialisable data. The executor runs `actions` in the
 * given order (respecting `dependsOn`), the CLI renders it, and `proxops apply --plan` reloads it.
 * Nothing here is derived from the clock or from randomness: the same inputs give the same bytes
 * (see serializePlan). Secret values never appear: they are references resolved at execute time.
 */
import type { AllowEmptyKind, DisruptionPolicy, Kind } from '@proxops/schema'
import type { FirewallWrite, GuestType, HaObject } from '@proxops/pve-client/wire'

/** 2: action types are verbs, the action's `kind` says which kind (docs/plan-format.md, "Compatibility") */
export const PLAN_FORMAT_VERSION = 2

/** the manifest kinds, from the schema's registry of kinds */
export type ResourceKind = Kind
/**
 * What an action's `kind` names: the kind that runs and confirms it. A manifest kind, or for what lives on a
 * guest without a manifest of its own, its HA resource or its firewall (the action carries the guest's address).
 */
export type ActionKind = ResourceKind | 'HA' | 'GuestFirewall' | 'SdnApply'
/** the access kinds (kinds/access, docs/access.md) */
export type AccessKind = 'Role' | 'Group' | 'User' | 'Token' | 'ACL'
export type GuestKind = 'VM' | 'TemplateVM' | 'LXC' | 'TemplateCT'
export type ArtifactKind = 'ISO' | 'CTTemplate' | 'DiskImage'
/** the kinds whose prunes the empty-desired guard holds back (`--allow-empty <Kind>` lifts it): the schema's */
export type { AllowEmptyKind }

/** the disruption policy is the schema's (`allow`, `none`, `hotplug`, `reboot`, `stop`) */
export type { DisruptionPolicy }

/** What a change does to a running guest (for a stopped guest every write is `none`). */
export type DisruptionClass =
  /** no effect on the guest (options, tags, cloud-init data, stopped guests, downloads) */
  | 'none'
  /** applied live by PVE's hotplug (NICs, scsi/virtio disks with hotplug=disk, resize, memory with hotplug=memory) */
  | 'hotplug'
  /** PVE keeps it pending until the guest restarts: the write (held pending), graceful shutdown, start */
  | 'reboot'
  /** the guest must be stopped first (mark-template, delete of a running guest, desired state stopped) */
  | 'stop'

export interface Policy {
  /** the ownership tag (lower-case); objects without it are never touched */
  ownershipTag: string
  /**
   * the cluster entry this plan is for: owned guests also carry `<ownershipTag>.<clusterEntry>`, and guests
   * marked for another entry are never touched (docs/safety.md, section 1). Without it the tag alone owns.
   */
  clusterEntry?: string
  /** node allowlist; live objects on other nodes are invisible. Empty = every node (reference behaviour). */
  nodes: readonly string[]
  /** deletions allowed per cycle: 0 = no prunes, `unlimited` must be written out */
  pruneBudget: number | 'unlimited'
  /** kinds for which "0 desired but >= 1 owned live" is accepted (the run passed `--allow-empty <Kind>`) */
  allowEmpty: readonly AllowEmptyKind[]
  /** a cycle that would prune more than this fraction of the owned objects of a kind is an anomaly; 1 disables */
  pruneRatioLimit: number
  /** cluster-wide default; a resource's `proxops/disruption` annotation overrides it */
  disruption: DisruptionPolicy
  /** graceful shutdown timeout for reboot/stop-class changes, stops and deletes */
  shutdownTimeoutSeconds: number
  /** when the graceful shutdown times out: false = the action fails (default), true = PVE force-stops */
  forceStopAfterTimeout: boolean
  /**
   * safety snapshots for every guest of the cluster (the cluster entry's `safety-snapshots`): a `snapshot` action
   * before a guest's restart- or stop-class change or disk resize, keeping the newest `keep` (docs/safety.md).
   * A guest's `proxops/safety-snapshots` annotation overrides it either way.
   */
  safetySnapshots?: { keep: number }
  /**
   * access as code (the cluster entry's `access`, docs/access.md): present when the cluster manages its access
   * objects. `rolePrefix`: a role whose id starts with it is this entry's (roles have no comment to carry a marker);
   * without it no role is ever deleted. `acknowledgeLockout`: the lock-out guards only warn. `credential`: the user
   * or token id ProxOps runs as (the lock-out guards protect what grants it).
   */
  access?: { rolePrefix?: string; acknowledgeLockout?: boolean; credential?: string }
  /**
   * `prune: never` (docs/operations.md, "Per-object policies"): deletes the prune stage never plans, reported as
   * `prune-never` skips; `all` for the whole cluster, else these objects by kind and name
   */
  pruneNever?: { all?: boolean; objects?: readonly { kind: string; name: string }[] }
  /** the cluster's `ignore-fields` per guest kind: manifest paths never compared (a manifest adds its own) */
  ignoreFields?: Readonly<Record<string, readonly string[]>>
}

export const DEFAULT_POLICY: Policy = {
  ownershipTag: 'proxops',
  nodes: [],
  pruneBudget: 3,
  allowEmpty: [],
  pruneRatioLimit: 0.5,
  disruption: 'allow',
  shutdownTimeoutSeconds: 120,
  forceStopAfterTimeout: false,
}

/** The guest firewall as plain comparable data (a `firewall` request's `desired` and `live`; kinds/firewall/canon.ts). */
/** a rule's PVE fields as strings (`enable` is `0` or `1`); absent fields are not set */
export type CanonRule = Readonly<Record<string, string>>
export interface CanonAlias {
  name: string
  cidr: string
  comment?: string
}
export interface CanonEntry {
  cidr: string
  nomatch: boolean
  comment?: string
}
export interface CanonIpset {
  name: string
  comment?: string
  entries: CanonEntry[]
}
export interface CanonFirewall {
  /** PVE option keys; for a desired firewall only the declared (owned) ones */
  options: Record<string, string>
  rules: CanonRule[]
  /** sorted by lower-cased name */
  aliases: CanonAlias[]
  /** sorted by name, entries by cidr */
  ipsets: CanonIpset[]
}

/** A value resolved by the executor through its secrets port; the plan holds only the references. */
export interface SecretParam {
  secret: {
    /** SOPS document paths, e.g. `cloud-init.ssh-keys.alice`, `cloud-init.passwords.default` */
    refs: readonly string[]
    /**
     * `plain`: the single ref's value as is. `sshkeys`: every ref's value split into key lines, de-duplicated in
     * order, joined with `\n`, then percent-encoded as PVE's `sshkeys` wants (wire `encodeSshKeys`);
     * `inline` keys (public, not secret) are joined in after the refs' keys, in manifest order.
     */
    encoding: 'plain' | 'sshkeys'
    inline?: readonly string[]
  }
}

export type PlanParamValue = string | number | SecretParam
export type PlanParams = Readonly<Record<string, PlanParamValue>>

/**
 * The requests a kind declares from its own folder, one entry per call keyed by the call, by declaration merging in
 * its `index.ts` (docs/architecture.md, "Adding a kind"):
 * `declare module '../../plan-types.js' { interface KindRequests { createZone: { call: 'createZone'; ... } } }`.
 * The kinds that came before it list theirs in PveRequest below.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the kinds' declaration merging
export interface KindRequests {}

/** One PVE call, named after the PveWriter method that makes it. Executed in order within an action. */
export type PveRequest =
  | KindRequests[keyof KindRequests]
  | { call: 'createGuest'; node: string; guest: GuestType; params: PlanParams }
  | { call: 'cloneGuest'; node: string; guest: GuestType; vmid: number; params: PlanParams }
  | {
      call: 'updateConfig'
      node: string
      guest: GuestType
      vmid: number
      params: PlanParams
      /** the digest read at plan time; absent when an earlier request of the same action changes the config */
      digest?: string
      /**
       * keys whose value is sent only if the slot is empty in the config read just before the write: absent, or
       * an empty CD drive (`none`). Used after a clone: the clone may have inherited a cloud-init drive, an EFI
       * disk or a TPM state that must not be rewritten, or not, when its template lacks them.
       */
      onlyIfAbsent?: readonly string[]
      /**
       * keys whose volume a disk move of this plan replaced first (key -> the volume the planned value names): the
       * executor puts the volume the config names just before the write in its place
       */
      moved?: Readonly<Record<string, string>>
    }
  | { call: 'resizeDisk'; node: string; guest: GuestType; vmid: number; disk: string; size: string; digest?: string }
  /**
   * one volume to `storage` (qemu-server move_vm_disk, pve-container move_volume) with `delete`: PVE frees the source
   * only once its copy is in the config; a running VM's disk is mirrored online
   */
  | {
      call: 'moveDisk'
      node: string
      guest: GuestType
      vmid: number
      disk: string
      /** the volume the slot held at plan time (`local-lvm:vm-100-disk-0`), which the move frees */
      volume: string
      storage: string
      digest?: string
    }
  | { call: 'start' | 'stop' | 'reboot' | 'markTemplate' | 'deleteGuest'; node: string; guest: GuestType; vmid: number }
  | { call: 'shutdown'; node: string; guest: GuestType; vmid: number; timeoutSeconds: number; forceStop: boolean }
  | { call: 'downloadUrl'; node: string; storage: string; params: PlanParams }
  /**
   * a safety snapshot `proxops-<UTC timestamp>` (the executor picks the time) whose description starts with
   * `mark` (this entry's `managed-by=<tag>.<entry>`), after the guest's older snapshots that carry the same mark
   * are pruned to the newest `keep - 1`; `digest` is the config digest read at plan time
   */
  | { call: 'snapshot'; node: string; guest: GuestType; vmid: number; keep: number; digest: string; mark: string }
  /**
   * `POST .../migrate` from `node` (where the guest is) to `target`: qemu `online`, `with-local-disks`,
   * `targetstorage`; lxc `restart`, `target-storage` (qemu-server / pve-container migrate_vm)
   */
  | { call: 'migrate'; node: string; guest: GuestType; vmid: number; target: string; params: PlanParams }
  | {
      call: 'firewall'
      node: string
      guest: GuestType
      vmid: number
      /** what the manifest owns (firewall/canon.ts) */
      desired: CanonFirewall
      /** the firewall as read at plan time; absent for a guest this plan creates (the writes are then re-derived) */
      live?: CanonFirewall
      /** the writes planned against `live` (digests are read just before each one) */
      writes: readonly FirewallWrite[]
    }
  | {
      call: 'haWrite'
      object: HaObject
      method: 'POST' | 'PUT' | 'DELETE'
      /** sid, group or rule id */
      id: string
      params: PlanParams
      /** the guest a requested-state change concerns: the executor waits until it is in `power` (bounded) */
      guest?: { node: string; guest: GuestType; vmid: number; power: 'running' | 'stopped' }
    }
  /** `/cluster/backup` (docs/schema-reference.md#backupjob): cluster-wide, no task */
  | { call: 'createBackupJob'; params: PlanParams }
  | { call: 'updateBackupJob'; id: string; params: PlanParams }
  | { call: 'deleteBackupJob'; id: string }
  /** `/pools` (planner/src/pool): cluster-wide, no task */
  | { call: 'createPool'; params: PlanParams }
  | { call: 'updatePool'; params: PlanParams }
  | { call: 'deletePool'; poolid: string }
  /** `/access` (kinds/access): cluster-wide, synchronous, user.cfg under its lock */
  | { call: 'createRole'; params: PlanParams }
  | { call: 'updateRole'; roleid: string; params: PlanParams }
  | { call: 'deleteRole'; roleid: string }
  | { call: 'createGroup'; params: PlanParams }
  | { call: 'updateGroup'; groupid: string; params: PlanParams }
  | { call: 'deleteGroup'; groupid: string }
  | { call: 'createUser'; params: PlanParams }
  | { call: 'updateUser'; userid: string; params: PlanParams }
  | { call: 'deleteUser'; userid: string }
  /** the secret PVE answers is written age-encrypted by the executor's token sink, never kept in the plan or report */
  | { call: 'createToken'; userid: string; tokenid: string; params: PlanParams }
  | { call: 'updateToken'; userid: string; tokenid: string; params: PlanParams }
  | { call: 'deleteToken'; userid: string; tokenid: string }
  /** `PUT /access/acl`: roles granted to (or with `delete=1` taken from) users, groups and tokens on one path */
  | { call: 'updateAcl'; params: PlanParams }
  /** an SDN config-file edit below `/cluster/sdn` (kinds/sdn): pending until the plan's one `applySdn` */
  | { call: 'sdnWrite'; method: 'POST' | 'PUT' | 'DELETE'; path: string; params: PlanParams }
  /** `PUT /cluster/sdn`: the pending SDN config becomes running, every node reloads (kinds/sdn) */
  | { call: 'applySdn' }
  /** `/storage` (kinds/storage): storage.cfg, cluster-wide, no task; secrets as references */
  | { call: 'createStorage'; params: PlanParams }
  | { call: 'updateStorage'; storage: string; params: PlanParams }
  | { call: 'deleteStorage'; storage: string }
  /** `PUT /cluster/options` (kinds/cluster-options): datacenter.cfg, no task */
  | { call: 'setClusterOptions'; params: PlanParams }

/**
 * A verb; the action's `kind` names what it acts on (a new kind plans `create`, `update` and `delete`). How a plan
 * shows each one and where it falls in a level come from its kind (kit/verbs.ts, Kind.verbs).
 */
export type ActionType =
  | 'create'
  | 'clone'
  | 'download'
  | 'update'
  /** a reboot/stop-class update of a running guest: the write (held pending), shutdown (PVE applies it), start (if desired started) */
  | 'shutdown-then-update'
  | 'resize'
  /** a volume moves to the storage its manifest entry declares (online for a running VM; a container is stopped) */
  | 'move-disk'
  /** apply owned changes PVE holds pending on a running guest: shutdown, start */
  | 'restart'
  | 'start'
  | 'stop'
  | 'mark-template'
  | 'delete'
  /** kind `Pool`: the guest joins the pool `spec.pool` names (update_pool `vms=`, `allow-move` from another pool) */
  | 'join'
  /** a safety snapshot the guest's disruptive actions of this plan wait for (docs/safety.md) */
  | 'snapshot'
  /** the guest moves to `spec.node` (PVE's migrate: online, restart or offline; docs/safety.md#migration) */
  | 'migrate'

export interface FieldDiff {
  /** manifest path, e.g. `spec.memory`, `spec.disks[0].iothread` */
  field: string
  /** the PVE config key, e.g. `memory`, `scsi0` */
  key: string
  /** absent = not set on PVE; `(sensitive)` for secrets */
  before?: string
  /** absent = removed; `(sensitive)` for secrets */
  after?: string
}

export interface Action {
  /**
   * unique within the plan: `<address>#<type>` (`#resize:<disk>` for resizes, `#move-disk:<disk>` for moves; what
   * lives on a guest keeps its own: `#firewall`, `#ha-create`, `#ha-update`, `#ha-delete`, `#pool`)
   */
  id: string
  /** `Kind/node/vmid(name)` for guests, `Kind/node/storage/filename` for artifacts, `BackupJob/<id>`, `Pool/<id>` */
  address: string
  /** the kind that runs and confirms it (an HA resource's or a firewall's action has the guest's address) */
  kind: ActionKind
  /** metadata.name of the resource; absent for prunes of objects not in git */
  name?: string
  /** empty for cluster-wide objects (BackupJob, Pool) */
  node: string
  vmid?: number
  storage?: string
  filename?: string
  type: ActionType
  /** human text, e.g. `VM/web: config drift (memory, net0)` */
  reason: string
  diffs: readonly FieldDiff[]
  disruption: DisruptionClass
  /** 0 = create/update/power/mark, 9 = prunes (always last) */
  tier: 0 | 9
  /** topological level of the resource */
  level: number
  /** ids of actions in this plan that must succeed first */
  dependsOn: readonly string[]
  /**
   * addresses of prerequisite resources (from the dependency model), whether or not they have an action in
   * this plan: the executor defers this action when any action on one of them failed or was skipped this cycle
   */
  requires: readonly string[]
  /** the config digest this action was planned against (guests that exist) */
  digest?: string
  /** the PVE calls, in order */
  requests: readonly PveRequest[]
}

export type AnomalyCode =
  | 'empty-desired'
  | 'prune-ratio'
  | 'live-only-slot'
  | 'volume-pool'
  | 'volume-shrink'
  | 'volume-format'
  | 'volume-kind'
  | 'bind-path'
  | 'create-only-option'
  | 'unsupported-option'
  /** SDN edits someone left pending: `PUT /cluster/sdn` would apply them too, so no SDN write is planned (kinds/sdn) */
  | 'sdn-pending'
  | 'kind-mismatch'
  | 'node-mismatch'
  | 'protected'
  | 'template-linked-clones'
  | 'clone-source'
  /** a guest to be created from a source (a clone's template, a disk image, a CTTemplate) that is not on its node */
  | 'source-node'
  | 'invalid-live'
  | 'vmid-taken'
  | 'renumbered'
  /** the guest at a desired vmid carries another cluster entry's ownership marker */
  | 'owned-elsewhere'
  /** the API token lacks a privilege an action needs (or the option is for root@pam only): the action is not attempted */
  | 'missing-privilege'
  /** an HA node preference ProxOps would write conflicts with one it does not own */
  | 'ha-conflict'
  /** `spec.pool` names a pool that is neither on PVE nor declared */
  | 'pool-missing'
  /** safety snapshots are on but a volume of the guest cannot be snapshotted: its disruptive changes are not made */
  | 'snapshot-unsupported'
  /** a guest to be marked as a template has snapshots, which PVE's template conversion refuses */
  | 'template-snapshots'
  /** a prune whose destroy (purge) would make PVE delete an object this entry does not own (a backup job, an HA rule) */
  | 'purge-effect'
  /** PVE would refuse the storage a volume or artifact is declared on (not on the node, no such content type) */
  | 'storage-refused'
  /** PVE would refuse moving the guest to `spec.node` (local devices, a storage the target lacks, an offline target) */
  | 'migration-refused'
  /** a backup job's selection reaches a guest or pool this entry does not manage (docs/safety.md#backup-jobs) */
  | 'unmanaged-selection'
  /** the HA manager holds a guest's service in `error`: nothing HA does moves it until it is disabled (docs/safety.md#ha-error) */
  | 'ha-error'
  /**
   * PVE would refuse an access write for a reason diff sees: an unknown privilege for the cluster's version, a role,
   * group, user or token that neither git nor PVE has, a realm that does not exist (docs/access.md)
   */
  | 'access-refused'
  /**
   * the plan would remove or weaken what the running credential holds, or the last principal with
   * Permissions.Modify on `/`: blocked unless the cluster acknowledges it (docs/access.md#lock-out)
   */
  | 'lockout'

/** A non-destructive observation; never executed. */
export interface Anomaly {
  code: AnomalyCode
  /** the object it concerns; absent for cluster-level guards */
  address?: string
  kind?: ResourceKind
  /** the config key or manifest field concerned */
  field?: string
  message: string
}

export type SkipCode =
  | 'untagged'
  /** a live guest marked for another cluster entry: that entry's to manage */
  | 'owned-elsewhere'
  /** tagged without an entry marker and claimed by no manifest: never pruned (docs/safety.md, section 1) */
  | 'unmarked'
  | 'unknown'
  | 'locked'
  | 'paused'
  | 'storage-unreadable'
  | 'node-offline'
  | 'prune-budget'
  | 'prune-guard'
  | 'disruption'
  | 'invalid-desired'
  /** depends on an action the token lacks privileges for */
  | 'missing-privilege'
  /** the object or its cluster is suspended (`proxops suspend`, `proxops/suspend`): read, never written */
  | 'suspended'
  /** a disruptive change outside its cluster's sync window: it waits for the next allowed window */
  | 'sync-window'
  /** owned and absent in git, but its `prune: never` policy keeps it: reported, never deleted */
  | 'prune-never'

/** Something plan() deliberately did not act on this cycle, with the reason. */
export interface Skip {
  code: SkipCode
  address: string
  kind: ResourceKind
  node: string
  vmid?: number
  message: string
}

/** Owned changes PVE holds pending on a running guest (applied at its next restart). */
export interface PendingChange {
  address: string
  keys: readonly string[]
  message: string
}

/** A known limit met while planning this object (e.g. `spec.extra` is sent on create only). */
export interface Gap {
  address: string
  field: string
  note: string
  /** `field` is a live PVE key that nothing in the manifest owns: listed, never written (plan/keys.ts) */
  unmanaged?: true
  /** the guest is on this node, where HA placed it, and not on its `spec.node` (its preferred node): not moved */
  placedOn?: string
  /** an unmanaged key that changes what the guest or its host executes: what it does (called out in `status`) */
  executes?: string
}

export interface PlanSummary {
  create: number
  update: number
  resize: number
  power: number
  markTemplate: number
  /** safety snapshots */
  snapshot: number
  delete: number
  download: number
  anomalies: number
  skips: number
  pending: number
  /** total actions */
  actions: number
}

export interface Plan {
  format_version: typeof PLAN_FORMAT_VERSION
  cluster: string
  /** the repository commit the desired state came from, when known */
  commit?: string
  /** what the policy that shaped this plan allowed (for rendering and for `apply --plan` checks) */
  policy: {
    pruneBudget: number | 'unlimited'
    disruption: DisruptionPolicy
    ownershipTag: string
  }
  actions: readonly Action[]
  anomalies: readonly Anomaly[]
  skips: readonly Skip[]
  pending: readonly PendingChange[]
  gaps: readonly Gap[]
  summary: PlanSummary
}
