/**
 * The contract of an object kind (docs/architecture.md, "Object kinds"): one `Kind` value, declared in the kind's
 * folder (`kinds/<kind>/index.ts`) and listed once in the registry (`kinds/index.ts`), says everything the
 * pipeline needs of it: its identity (which manifests it declares, the addresses of their objects), what observe()
 * reads of it given the desired state, how it plans, where its deletes come in the one prune stage, how its
 * requests are sent and what each needs from the token, how its actions are read back and counted, and how live
 * objects become manifests. The pipeline (plan/, observe/, execute/, adopt/, reconcile/) reaches a kind only
 * through this value; a kind reaches only the kit (this folder) and the contract (plan-types, inventory, ports,
 * desired, errors). `eslint.config.mjs` enforces both.
 */
import type { Manifest, QemuManifest, ContainerManifest } from '@proxops/schema'
import type { GuestType } from '@proxops/pve-client/wire'
import type { DesiredState, SecretLookup } from '../desired.js'
import type { LiveGuest, LiveInventory } from '../inventory.js'
import type {
  Action,
  ActionKind,
  ActionType,
  Anomaly,
  Gap,
  PendingChange,
  PlanSummary,
  Policy,
  PveRequest,
  Skip,
} from '../plan-types.js'
import type { ClusterResource } from '@proxops/pve-client/wire'
import type { LiveReader, StorageLedger } from '../ports.js'
import type { Draft, DraftBase } from './draft.js'
import type { Runners } from './runners.js'
import type { Privileges } from './privileges.js'
import type { AdoptContext } from './adopt.js'
import type { VerbText } from './verbs.js'

/** What plan() knows before any kind plans: the inputs and the lookups every kind shares. */
export interface PlanContext {
  readonly desired: DesiredState
  readonly live: LiveInventory
  readonly policy: Policy
  /** decrypted secret values, used only to compare `sshkeys` from refs; never copied into the plan */
  readonly secrets?: SecretLookup
  /** the storages this entry wrote and its credentials' fingerprints (ports.ts StorageLedger); read only here */
  readonly ledger?: StorageLedger
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
  base: DraftBase
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
   * everything that points at a guest (kit/managed.ts) follows
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

export interface ObserveOptions {
  /** requests in flight at once for this cluster (default 8) */
  concurrency?: number
  /** node allowlist; objects on other nodes are invisible. Empty or absent = every node of the cluster. */
  nodes?: readonly string[]
  /** storage content types whose volumes are listed, one `content=` listing each (default iso, vztmpl, import) */
  contentTypes?: readonly string[]
  signal?: AbortSignal
  /** vmids whose guest firewall is read (the guests whose manifests declare spec.firewall), `all` for adopt */
  firewalls?: readonly number[] | 'all'
  /**
   * the desired guests' vmids: one that no allowlisted node lists is looked up in /cluster/resources (a guest on
   * another node) and else probed with `vmidFree` (a guest this token cannot see); see `heldVmids`
   */
  vmids?: readonly number[]
  /**
   * each desired guest's `spec.node` by vmid: a guest found on another allowlisted node gets PVE's migration
   * precondition check read (`migrationChecks`)
   */
  guestNodes?: Readonly<Record<number, string>>
  /**
   * the pools whose members are read with their own `GET /pools?poolid=` (exact, hidden guests and storages
   * included) besides every pool marked by ProxOps: the ones the desired state names. Every other pool's guest
   * members come from /cluster/resources. Absent or `all` = every pool its own request (adopt). kinds/pool/read.ts
   */
  pools?: readonly string[] | 'all'
  /**
   * whose marker makes a pool this entry's (the plan's policy): with it, of the marked pools only this entry's
   * (its prune candidates) are read member by member, so that other entries' or other tools' `managed-by=`
   * pools cost nothing; absent = every pool whose comment starts with `managed-by=`. kinds/pool/read.ts
   */
  ownership?: Pick<Policy, 'ownershipTag' | 'clusterEntry'>
  /** read the access objects (kinds/access): the cluster manages access, or adopt asks for them */
  access?: boolean
  /** read the SDN objects (kinds/sdn): the desired state declares some, or adopt */
  sdn?: boolean
  /**
   * the storages this entry's ledger owns that git no longer declares (prune candidates): each gets a content
   * listing on a node that sees it, so that one holding volumes is never removed. kinds/storage/read.ts
   */
  ownedStorages?: readonly string[]
  /** the storage ids the desired state declares (never prune candidates, so never listed) */
  declaredStorages?: readonly string[]
  /**
   * `all`: read storage.cfg even when nothing declares or owns a storage (adopt). Otherwise `GET /storage` is read
   * only when a Storage is declared or the ledger owns one, so an estate without storages pays nothing for them
   */
  storages?: 'all'
  /** read `/cluster/options` (a ClusterOptions is declared, or adopt) */
  clusterOptions?: boolean
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

/** The counts of a plan's summary that actions add to (PlanSummary less the findings and the total). */
export type SummaryCount = Exclude<keyof PlanSummary, 'anomalies' | 'skips' | 'pending' | 'actions'>

/** One object kind: a folder under `kinds/`, whose `index.ts` declares this value, listed in `kinds/index.ts`. */
export interface Kind {
  readonly name: string
  /**
   * Identity: the manifest kinds it declares (none for the kinds that live on a guest: its firewall, HA resource),
   * and the addresses under which a plan reports one manifest's object (docs/plan-format.md, `address`). With
   * `near`, the node of an action that requires it: an object on several nodes is named by its copy there, if any.
   */
  readonly manifests: readonly Manifest['kind'][]
  /**
   * The `kind` its actions carry besides its manifests' kinds (Action.kind): a kind that lives on a guest names its
   * own (`HA`). An action is run and confirmed by the kind whose manifests or action kinds hold its `kind`.
   */
  readonly actionKinds?: readonly ActionKind[]
  addresses(m: Manifest, near?: string): string[]
  /** what observe() should read for this desired state (ObserveOptions' parts this kind owns) */
  observe?(desired: DesiredState, policy: Policy): Partial<ObserveOptions>
  /** what observe() reads of this kind (failures become `unreadable`, never absence) */
  read(ctx: ReadContext): Promise<Partial<LiveInventory>>
  /** its read yields the guests the kinds that live on a guest wait for (ReadContext.guests): one kind does */
  readonly readsGuests?: true
  /** pure: what this kind's objects need this cycle */
  plan(ctx: KindContext): KindPlan
  /**
   * Its place in the one prune stage's deletion order (lower first), when it proposes deletes (KindPlan.prunes):
   * the budget is spent on the groups in this order, and a group sees what the earlier ones chose.
   */
  readonly pruneOrder?: number
  /** how its actions' requests are sent (execute/run-action.ts runs an action's requests with its kind's runners) */
  readonly run: Runners
  /** what each of its requests needs from the API token: one entry per call it runs */
  readonly privileges: Privileges
  /**
   * The read-back after one of its actions (the kind an action's `kind` names): a problem text, or undefined when
   * it did what it meant
   */
  confirm(action: Action, reader: LiveReader): Promise<string | undefined>
  /**
   * The verbs it plans, each with the summary count it adds to; the count gives the symbol a plan shows (`+` for
   * create, download and snapshot, `-` for delete, `~` for the rest)
   */
  readonly summary: Partial<Record<ActionType, SummaryCount>>
  /** where its verbs read or rank differently from the verbs' defaults (kit/verbs.ts) */
  readonly verbs?: { readonly [V in ActionType]?: Partial<VerbText> }
  /**
   * Live objects to manifests (adopt/adopt.ts): runs in `adopt.order` (lower first: a guest names the ISOs adopted
   * before it), writing files into the context or adding to the guests' files.
   */
  readonly adopt: { readonly order: number; run(live: LiveInventory, ctx: AdoptContext): void }
}

/**
 * Declares a kind: its privileges must name exactly the calls its runners send, checked at compile time (a
 * runner without its privileges, or privileges for a call it does not run, is a type error).
 */
export function defineKind<C extends PveRequest['call']>(
  kind: Omit<Kind, 'run' | 'privileges'> & {
    readonly run: { readonly [K in C]: NonNullable<Runners[K]> }
    readonly privileges: { readonly [K in C]: NonNullable<Privileges[K]> }
  },
): Kind {
  return kind
}

/** What a kind value lacks of the contract (a value built around the types, or a part left empty): none = whole. */
export function kindProblems(kind: Partial<Kind>): string[] {
  const out: string[] = []
  const fn = (part: keyof Kind) => {
    if (typeof kind[part] !== 'function') out.push(`no ${part}`)
  }
  if (typeof kind.name !== 'string' || kind.name === '') out.push('no name')
  if (!Array.isArray(kind.manifests)) out.push('no manifests')
  fn('addresses')
  fn('read')
  fn('plan')
  fn('confirm')
  const calls = Object.keys(kind.run ?? {})
  if (calls.length === 0) out.push('no runners')
  for (const call of calls)
    if (typeof kind.privileges?.[call as keyof Privileges] !== 'function') out.push(`no privileges for ${call}`)
  for (const call of Object.keys(kind.privileges ?? {}))
    if (!calls.includes(call)) out.push(`privileges for ${call}, which it does not run`)
  if (Object.keys(kind.summary ?? {}).length === 0) out.push('no summary')
  for (const verb of Object.keys(kind.verbs ?? {}))
    if (kind.summary?.[verb as ActionType] === undefined) out.push(`verbs for ${verb}, which it does not plan`)
  if (typeof kind.adopt?.run !== 'function') out.push('no adopt')
  return out
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
 * The deletes one kind proposes. The prune stage takes the groups in the kinds' `pruneOrder` (backup jobs,
 * guests, pools, HA removals) and spends one budget across them; each group's candidates may depend on what
 * earlier groups chose (a pool can go once the guests in it are pruned).
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
