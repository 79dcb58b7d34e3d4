/**
 * The shape every object kind has (docs/architecture.md, "Object kinds"). A kind is a folder under `kinds/`:
 * `read` (what observe() reads of it), `plan` (pure: desired and live in, its actions and findings out), `run`
 * (the requests its actions send), `confirm` (the read-back after them) and `adopt` (live objects to
 * manifests). plan() runs the kinds of `kinds/index.ts` in order and hands every kind's prune candidates to one
 * prune stage (plan/prune.ts).
 */
import type { Manifest, QemuManifest, ContainerManifest } from '@proxops/schema'
import type { GuestType } from '@proxops/pve-client/wire'
import type { DesiredState, SecretLookup } from '../desired.js'
import type { LiveGuest, LiveInventory } from '../inventory.js'
import type { Action, Anomaly, Gap, PendingChange, Policy, Skip } from '../plan-types.js'
import type { ClusterResource } from '@proxops/pve-client/wire'
import type { ObserveOptions } from '../observe/observe.js'
import type { LiveReader } from '../ports.js'
import type { Draft } from '../plan/order.js'
import type { Runners } from '../execute/task-call.js'

/** What plan() knows before any kind plans: the inputs and the lookups every kind shares. */
export interface PlanContext {
  readonly desired: DesiredState
  readonly live: LiveInventory
  readonly policy: Policy
  /** decrypted secret values, used only to compare `sshkeys` from refs; never copied into the plan */
  readonly secrets?: SecretLookup
  /** the desired manifests by `Kind/name` */
  readonly byKey: ReadonlyMap<string, Manifest>
  /** a manifest's level in the dependency graph (0 without prerequisites) */
  levelOf(key: string): number
  /** the node is in the cluster entry's allowlist (an empty allowlist allows every node) */
  allowedNode(node: string): boolean
  /** the node is offline or unknown this cycle */
  nodeDown(node: string): boolean
}

/**
 * A declared guest the guest kind planned this cycle (it was not unknown, foreign, locked or mismatched): the
 * kinds that live on a guest (its firewall, HA resource and pool membership) plan against it.
 */
export interface PlannedGuest {
  m: QemuManifest | ContainerManifest
  type: GuestType
  base: Pick<Draft, 'resource' | 'address' | 'kind' | 'name' | 'node' | 'vmid' | 'tier' | 'level'>
  /** the live guest; absent when this plan creates it */
  live?: LiveGuest
  /** the id of the create or clone action of a new guest */
  createdBy?: string
}

/** The kinds after the guest kind see what it planned. */
export interface KindContext extends PlanContext {
  readonly guests: readonly PlannedGuest[]
  /**
   * declared vmids held on PVE by a guest that is not this entry's (another entry's, an untagged guest of
   * another name, a guest of the other type or outside the allowlist), with why: the guest kind's verdict, which
   * everything that points at a guest (kinds/guest/managed.ts) follows
   */
  readonly foreignGuests: ReadonlyMap<number, string>
  /**
   * The ids of the actions the kinds before this one planned for an object: what lives on a guest (its
   * firewall, HA resource, pool membership) is written after the guest's own actions, in the order of the
   * kinds list.
   */
  actionsOf(address: string): string[]
}

/** What one kind's planning found. */
export interface KindPlan {
  drafts: Draft[]
  anomalies: Anomaly[]
  skips: Skip[]
  pending: PendingChange[]
  gaps: Gap[]
  /** the owned objects this kind would delete, for the one prune stage */
  prunes?: PruneGroup
  /** the guest kind's: the declared guests it planned, for the kinds that live on a guest */
  planned?: PlannedGuest[]
  /** the guest kind's: declared vmids held by a guest that is not this entry's (KindContext.foreignGuests) */
  foreign?: ReadonlyMap<number, string>
}

/** A read within the cluster's in-flight limit (and its abort signal). */
export type Read = <T>(fn: () => Promise<T>) => Promise<T>

/** What observe() hands every kind's read: the cluster listing it made and the shared request gate. */
export interface ReadContext {
  readonly reader: LiveReader
  readonly read: Read
  readonly pveVersion: string
  readonly resources: readonly ClusterResource[]
  /** the online nodes of the allowlist */
  readonly online: ReadonlySet<string>
  allowed(node: string | undefined): node is string
  readonly options: ObserveOptions
  /** the guest kind's readable guests, for the kinds that live on a guest */
  readonly guests: Promise<readonly LiveGuest[]>
}

/** One object kind (a folder under `kinds/`, listed in `kinds/index.ts`). */
export interface Kind {
  readonly name: string
  /** what observe() reads of this kind (failures become `unreadable`, never absence) */
  read?(ctx: ReadContext): Promise<Partial<LiveInventory>>
  /** pure: what this kind's objects need this cycle */
  plan(ctx: KindContext): KindPlan
  /** how its actions' requests are sent (execute/run-action.ts dispatches by request) */
  readonly run: Runners
  /** the read-back after one of its actions: a problem text, or undefined when it did what it meant */
  confirm(action: Action, reader: LiveReader): Promise<string | undefined>
}

export const emptyPlan = (): KindPlan => ({ drafts: [], anomalies: [], skips: [], pending: [], gaps: [] })

/** A delete the prune stage may choose. */
export interface PruneCandidate {
  /** the kind whose guards count it (VM, LXC, BackupJob, Pool, ...) */
  kind: string
  /** the delete action, planned when the budget and the guards allow it */
  draft: Draft
  /** candidates of the same group (their draft ids) that must be chosen first: when one is deferred, so is this */
  waitsFor?: readonly string[]
  /** the skip message when the budget defers it (default: `prune deferred (budget N per cycle)`) */
  overBudget?: string
}

/**
 * The deletes one kind proposes. The prune stage takes the groups in order (guests, backup jobs, pools, HA)
 * and spends one budget across them; each group's candidates may depend on what earlier groups chose (a pool
 * can go once the guests in it are pruned).
 */
export interface PruneGroup {
  /** the empty-desired and ratio guards apply (not to removing a declared guest's HA resource) */
  guarded: boolean
  /** how the guards' messages name the owned objects: `proxops-tagged` and `live object(s)` */
  owner: string
  noun: string
  /** per guard kind: owned live objects and desired manifests */
  owned: ReadonlyMap<string, number>
  desired: ReadonlyMap<string, number>
  /** the candidates in deferral order, given the deletes earlier groups chose; with what was found on the way */
  candidates(chosen: readonly Draft[]): { candidates: PruneCandidate[]; skips: Skip[]; anomalies: Anomaly[] }
}
