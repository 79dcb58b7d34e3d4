/**
 * reconcile(): one cycle of one cluster, the way the CLI runs it, for every caller (the CLI, the daemon,
 * embedders, the tests and the benchmarks): check that every secret reference resolves (before any PVE
 * call), observe, plan, run the privilege preflight, hold a saved plan to its contract, then execute. Each
 * check fails closed with a ReconcileError before anything is written. Shaped like changesets'
 * `getReleasePlan`: plain inputs in, plain data out.
 */
import { mapLimit } from '@proxops/pve-client/wire'
import { execute, type ExecuteOptions, type Report } from '../execute/execute.js'
import type { DesiredState } from '../desired.js'
import { KINDS } from '../kinds/index.js'
import type { LiveInventory } from '../inventory.js'
import { observe, type ObserveOptions } from '../observe/observe.js'
import { plan as makePlan } from '../plan/plan.js'
import { targetPlan, type PlanTarget } from '../plan/target.js'
import { holdPlan, type PlanHold } from '../plan/hold.js'
import type { Plan, Policy } from '../plan-types.js'
import type { LiveReader, PveWriter, StorageLedger } from '../ports.js'
import { checkPrivileges, neededPaths, privilegeNeeds } from '../privileges.js'
import { ReconcileError } from './errors.js'
import { checkSavedPlan, planDifference } from './saved-plan.js'
import { secretRefs } from './secrets.js'

export interface ReconcileOptions {
  desired: DesiredState
  reader: LiveReader
  /** present = apply; absent = plan only (a dry run, as `proxops diff`) */
  writer?: PveWriter
  policy: Policy
  /**
   * Decrypted secret values by reference (`cloud-init.ssh-keys.alice`). Every reference the manifests use
   * must resolve (a value, not undefined or a throw) before PVE is read.
   */
  secrets?: (ref: string) => string | undefined
  /**
   * the storages this cluster entry wrote and its credentials' fingerprints (ports.ts StorageLedger): plan reads
   * it, execute records into it; without one no storage is pruned and a credential is sent on create only
   */
  ledger?: StorageLedger
  /**
   * The caller's PVE identity (token id or user): the plan's actions are checked against its privileges
   * when the reader can read them (`reader.privileges`); `root@pam` and absent skip the check.
   */
  actor?: string
  /** a saved plan (`apply --plan`): runs only if the fresh plan is this plan (docs/safety.md) */
  savedPlan?: Plan
  /** the form both plans are compared in (the CLI passes its redactor, as saved plans are written redacted) */
  comparable?: (plan: Plan) => Plan
  signal?: AbortSignal
  /** called with the plan once it passed every check, before its first action starts (apply only) */
  onPlan?: (plan: Plan) => void
  /** `--target`: only these objects and what they depend on are planned and applied (plan/target.ts) */
  targets?: readonly PlanTarget[]
  /** actions held back (suspensions, sync windows): skips of their objects, never run (plan/hold.ts) */
  holds?: readonly PlanHold[]
  observe?: Omit<ObserveOptions, 'nodes' | 'signal'>
  execute?: Omit<ExecuteOptions, 'reader' | 'secrets' | 'signal'>
}

export interface ReconcileResult {
  inventory: LiveInventory
  plan: Plan
  /** present when a writer was given (empty when the plan had no actions) */
  report?: Report
}

export async function reconcile(options: ReconcileOptions): Promise<ReconcileResult> {
  const { desired, reader, writer, policy } = options
  const cluster = desired.cluster
  const lookup = options.secrets ?? (() => undefined)
  // every reference must resolve before any PVE call (fail closed)
  for (const ref of secretRefs(desired.manifests)) {
    let value: string | undefined
    try {
      value = lookup(ref)
    } catch (error) {
      throw new ReconcileError('SECRETS', `cluster ${cluster}: ${(error as Error).message}`)
    }
    if (value === undefined)
      throw new ReconcileError('SECRETS', `cluster ${cluster}: secret reference ${ref} does not resolve`)
  }

  const inventory = await observe(cluster, reader, {
    // what each kind asks to read for this desired state (Kind.observe)
    ...(Object.assign({}, ...KINDS.map((k) => k.observe?.(desired, policy) ?? {})) as Partial<ObserveOptions>),
    ...(options.ledger ? { ownedStorages: options.ledger.owned() } : {}),
    ...options.observe,
    nodes: policy.nodes,
    ...(options.signal ? { signal: options.signal } : {}),
  })
  // the privilege preflight is part of the plan: a saved plan went through it too, so they compare equal
  const full = await preflightPrivileges(
    makePlan(desired, inventory, policy, { secrets: lookup, ...(options.ledger ? { ledger: options.ledger } : {}) }),
    reader,
    options.actor,
  )
  // narrowed before a saved plan is compared with it (a saved targeted plan was narrowed the same way) and before
  // anything runs; the prune guards above it saw the whole cluster
  const narrowed = options.targets ? targetPlan(full, options.targets) : full
  const plan = options.holds ? holdPlan(narrowed, options.holds) : narrowed
  if (options.savedPlan) {
    // the specific refusals first (commit, digest, vanished or created objects), then the whole contract
    checkSavedPlan(options.savedPlan, desired.commit, inventory)
    const comparable = options.comparable ?? ((p: Plan) => p)
    const difference = planDifference(comparable(options.savedPlan), comparable(plan))
    if (difference !== undefined) {
      throw new ReconcileError(
        'PLAN_MISMATCH',
        `cluster ${cluster}: the saved plan is not the plan the repository and live PVE give now: ${difference}; run proxops diff --out again`,
      )
    }
  }
  if (!writer) return { inventory, plan }
  if (plan.actions.length === 0) {
    const report: Report = {
      cluster,
      ...(plan.commit ? { commit: plan.commit } : {}),
      results: [],
      summary: { actions: 0, ok: 0, failed: 0, skipped: 0 },
      cancelled: false,
      complete: true,
    }
    return { inventory, plan, report }
  }
  options.onPlan?.(plan)
  const report = await execute(plan, writer, {
    ...options.execute,
    ...(options.ledger ? { ledger: options.ledger } : {}),
    reader,
    secrets: (ref) => {
      const value = lookup(ref)
      if (value === undefined) throw new Error(`secret reference ${ref} does not resolve`)
      return value
    },
    ...(options.signal ? { signal: options.signal } : {}),
  })
  return { inventory, plan, report }
}

/**
 * The token's privileges are checked before anything is written: every ACL path the plan's actions need is
 * read once (`GET /access/permissions?path=`), actions that cannot succeed leave the plan and each missing
 * privilege becomes an anomaly with the pveum line that grants it (docs/getting-started.md).
 */
export async function preflightPrivileges(plan: Plan, reader: LiveReader, actor: string | undefined): Promise<Plan> {
  if (!reader.privileges || actor === undefined || actor === 'root@pam' || plan.actions.length === 0) return plan
  const read = reader.privileges.bind(reader)
  const needs = privilegeNeeds(plan)
  const paths = neededPaths(needs)
  // a few paths per plan; 8 in flight like observe
  const got = await mapLimit(paths, 8, (p) => read(p))
  const granted = new Map(paths.map((p, i): [string, ReadonlySet<string>] => [p, new Set(got[i])]))
  return checkPrivileges(plan, needs, granted, actor)
}
