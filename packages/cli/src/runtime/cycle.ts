/**
 * One reconcile cycle of one cluster: desired state, SOPS references, observe, plan, and (apply only)
 * execute. All logic lives in the libraries; this file wires them and turns failures into an aborted
 * cycle with a reason, never a half-done plan.
 */
import type { SopsCredentials } from '@proxops/sops'
import {
  blockedCount,
  convergence,
  checkPrivileges,
  DEFAULT_POLICY,
  execute,
  firewallVmids,
  guestVmids,
  neededPaths,
  privilegeNeeds,
  observe,
  ObserveError,
  plan as makePlan,
  type AllowEmptyKind,
  type LiveInventory,
  type LiveReader,
  type Plan,
  type Policy,
  type ProgressEvent,
  type PveWriter,
  type Report,
} from '@proxops/planner'
import { CliError, oneLine } from '../errors.js'
import type { PruneBudget, ResolvedCluster, ResolvedConfig } from '../config/types.js'
import { readOnlyClient } from './clients.js'
import { clusterTwins } from './identity.js'
import { cycleResult, objectStates, type ClusterCycle, type DesiredObject } from '../status-model.js'
import type { CliContext } from './context.js'
import { loadDesired, secretRefs } from './desired.js'
import { planDifference } from './saved-plan.js'
import type { SourceTree } from './source.js'

export interface CycleOptions {
  cluster: ResolvedCluster
  config: ResolvedConfig
  tree: SourceTree
  reader: LiveReader
  /** present = apply */
  writer?: PveWriter
  sops?: SopsCredentials
  pruneBudget: PruneBudget
  allowEmpty?: readonly AllowEmptyKind[]
  onProgress?: (event: ProgressEvent) => void
  /** the plan about to be executed (apply), before its first action starts */
  onPlan?: (plan: Plan) => void
  progressIntervalMs?: number
  /** a saved plan (apply --plan): the cycle runs only if a fresh plan equals it (runtime/saved-plan.ts) */
  savedPlan?: Plan
  /** why this cluster must not be reconciled at all (runtime/identity.ts: a twin of another entry) */
  blocked?: string
}

export interface CycleOutcome {
  cycle: ClusterCycle
  plan?: Plan
  report?: Report
  inventory?: LiveInventory
  /** set when the cycle aborted */
  error?: CliError
}

export function policyFor(options: Pick<CycleOptions, 'cluster' | 'config' | 'pruneBudget' | 'allowEmpty'>): Policy {
  return {
    ...DEFAULT_POLICY,
    clusterEntry: options.cluster.name,
    nodes: options.cluster.nodes,
    pruneBudget: options.pruneBudget,
    allowEmpty: options.allowEmpty ?? [],
    disruption: options.cluster.disruption ?? options.config.reconcile.disruption,
    shutdownTimeoutSeconds: Math.max(1, Math.round(options.config.reconcile.shutdownTimeoutMs / 1000)),
  }
}

/**
 * The token's privileges are checked before anything is written: every ACL path the plan's actions need is
 * read once (`GET /access/permissions?path=`), actions that cannot succeed leave the plan and each missing
 * privilege becomes an anomaly with the pveum line that grants it (docs/getting-started.md).
 */
export async function preflightPrivileges(
  plan: Plan,
  reader: LiveReader,
  credentials: ResolvedCluster['credentials'],
): Promise<Plan> {
  const actor = credentials.method === 'token' ? credentials.tokenId : credentials.user
  if (!reader.privileges || actor === 'root@pam' || plan.actions.length === 0) return plan
  const read = reader.privileges.bind(reader)
  const needs = privilegeNeeds(plan)
  const paths = neededPaths(needs)
  const granted = new Map<string, ReadonlySet<string>>()
  // a few paths per plan; 8 in flight like observe
  for (let i = 0; i < paths.length; i += 8) {
    const chunk = paths.slice(i, i + 8)
    const got = await Promise.all(chunk.map((p) => read(p)))
    chunk.forEach((p, j) => granted.set(p, new Set(got[j])))
  }
  return checkPrivileges(plan, needs, granted, actor)
}

/** A resolver over the cluster's SOPS document: `cloud-init.ssh-keys.x` -> value (fails closed). */
export function secretLookup(sops: SopsCredentials | undefined): (ref: string) => string {
  return (ref) => {
    if (!sops) throw new CliError('SECRETS', `reference ${ref} needs a secrets-file for this cluster`)
    return sops.resolveRef(ref).reveal()
  }
}

/** A saved plan may run only against the commit and the config digests it was made from. */
export function checkSavedPlan(saved: Plan, tree: SourceTree, live: LiveInventory): void {
  if (saved.commit !== undefined && saved.commit !== tree.commit) {
    throw new CliError(
      'PLAN_MISMATCH',
      `cluster ${saved.cluster}: the saved plan was made at commit ${saved.commit}, the repository is now at ${tree.commit}; run proxops diff --out again`,
    )
  }
  const guests = new Map(live.guests.map((g) => [g.vmid, g]))
  const unknown = new Set(live.unknownGuests.map((g) => g.vmid))
  for (const action of saved.actions) {
    if (action.vmid === undefined) continue
    const now = guests.get(action.vmid)
    if (unknown.has(action.vmid))
      throw new CliError(
        'PLAN_MISMATCH',
        `cluster ${saved.cluster}: ${action.address} cannot be read now; run proxops diff --out again`,
      )
    if (action.digest !== undefined && now?.digest !== action.digest) {
      throw new CliError(
        'PLAN_MISMATCH',
        `cluster ${saved.cluster}: ${action.address} changed on PVE since the plan was made (config digest differs); run proxops diff --out again`,
      )
    }
    if ((action.type === 'create' || action.type === 'clone') && now !== undefined) {
      throw new CliError(
        'PLAN_MISMATCH',
        `cluster ${saved.cluster}: ${action.address} exists on PVE now but the plan creates it; run proxops diff --out again`,
      )
    }
  }
}

/** What to check when PVE cannot be read. */
export function readHint(message: string, cluster: ResolvedCluster): string {
  const where = `pve.clusters.${cluster.name}`
  if (/\b401\b|authentication|permission|\b403\b/i.test(message))
    return `check the PVE credentials of ${where} (token or password, and its privileges)`
  if (/fingerprint|certificate|self[- ]signed|tls|ssl/i.test(message))
    return `check ${where}.tls (fingerprint or ca) against the PVE certificate`
  return `check that ${where}.base-url (${cluster.baseUrl}) is right and PVE is reachable`
}

export async function runCycle(ctx: CliContext, o: CycleOptions): Promise<CycleOutcome> {
  const startedAt = new Date(ctx.now()).toISOString()
  const name = o.cluster.name
  let objects: DesiredObject[]
  const aborted = (error: unknown): CycleOutcome => {
    const text = error instanceof Error ? error.message : String(error)
    const reason = oneLine(
      ctx.redactor.text(error instanceof ObserveError ? `${text}; ${readHint(text, o.cluster)}` : text),
    )
    ctx.log.debug('cycle aborted', { cluster: name, reason })
    return {
      cycle: {
        cluster: name,
        commit: o.tree.commit,
        startedAt,
        finishedAt: new Date(ctx.now()).toISOString(),
        mode: o.writer ? 'apply' : 'dry-run',
        result: 'aborted',
        abortReason: reason,
        actions: { planned: 0, ok: 0, failed: 0, skipped: 0 },
        pruned: 0,
        pruneDeferred: 0,
        anomalies: 0,
        skips: 0,
        blocked: 0,
        blockedByReason: {},
        desiredStale: o.tree.stale,
        objects: [],
      },
      error: error instanceof CliError ? error : new CliError('ABORTED', `cluster ${name}: cycle aborted: ${reason}`),
    }
  }
  try {
    if (o.blocked !== undefined) throw new CliError('CLUSTER_TWIN', `cluster ${name}: ${o.blocked}`)
    const loaded = await loadDesired(o.tree.root, name, o.tree.commit)
    objects = loaded.objects
    const lookup = secretLookup(o.sops)
    // every reference must resolve before any PVE call (fail closed)
    for (const ref of secretRefs(loaded.desired.manifests)) {
      try {
        lookup(ref)
      } catch (error) {
        throw new CliError('SECRETS', `cluster ${name}: ${ctx.redactor.text((error as Error).message)}`)
      }
    }
    ctx.log.debug('desired state loaded', {
      cluster: name,
      commit: o.tree.commit,
      manifests: loaded.desired.manifests.length,
    })
    const inventory = await observe(name, o.reader, {
      nodes: o.cluster.nodes,
      signal: ctx.signal,
      firewalls: firewallVmids(loaded.desired),
      vmids: guestVmids(loaded.desired),
    })
    ctx.log.debug('live state read', {
      cluster: name,
      guests: inventory.guests.length,
      unknown: inventory.unknownGuests.length,
      volumes: inventory.volumes.length,
    })
    // the privilege preflight is part of the plan: a saved plan went through it too, so they compare equal
    const plan = await preflightPrivileges(
      makePlan(loaded.desired, inventory, policyFor(o), { secrets: (ref) => o.sops?.resolveRef(ref).reveal() }),
      o.reader,
      o.cluster.credentials,
    )
    if (o.savedPlan) {
      // the specific refusals first (commit, digest, vanished or created objects), then the whole contract
      checkSavedPlan(o.savedPlan, o.tree, inventory)
      const difference = planDifference(ctx.redactor.strings(o.savedPlan), ctx.redactor.strings(plan))
      if (difference !== undefined) {
        throw new CliError(
          'PLAN_MISMATCH',
          `cluster ${name}: the saved plan is not the plan the repository and live PVE give now: ${difference}; run proxops diff --out again`,
        )
      }
    }
    let report: Report | undefined
    if (o.writer && plan.actions.length > 0) {
      o.onPlan?.(plan)
      report = await execute(plan, o.writer, {
        reader: o.reader,
        secrets: lookup,
        signal: ctx.signal,
        taskTimeoutMs: o.config.reconcile.taskTimeoutMs,
        ...(o.onProgress ? { onProgress: o.onProgress } : {}),
        ...(o.progressIntervalMs ? { progressIntervalMs: o.progressIntervalMs } : {}),
      })
    } else if (o.writer) {
      report = {
        cluster: name,
        ...(plan.commit ? { commit: plan.commit } : {}),
        results: [],
        summary: { actions: 0, ok: 0, failed: 0, skipped: 0 },
        cancelled: false,
        complete: true,
      }
    }
    const deferred = plan.skips.filter((s) => s.code === 'prune-budget' || s.code === 'prune-guard').length
    const state = convergence(plan, report)
    const cycle: ClusterCycle = {
      cluster: name,
      commit: o.tree.commit,
      startedAt,
      finishedAt: new Date(ctx.now()).toISOString(),
      mode: o.writer ? 'apply' : 'dry-run',
      result: cycleResult(plan, report),
      actions: {
        planned: plan.actions.length,
        ok: report?.summary.ok ?? 0,
        failed: report?.summary.failed ?? 0,
        skipped: report?.summary.skipped ?? 0,
      },
      pruned: report?.results.filter((r) => r.type === 'delete' && r.status === 'ok').length ?? 0,
      pruneDeferred: deferred,
      anomalies: plan.anomalies.length,
      skips: plan.skips.length,
      blocked: blockedCount(state),
      blockedByReason: state.byReason,
      desiredStale: o.tree.stale,
      objects: objectStates(name, objects, plan, report),
    }
    return { cycle, plan, inventory, ...(report ? { report } : {}) }
  } catch (error) {
    return aborted(error)
  }
}

/** Before any cycle: which selected clusters are the same PVE cluster as another (runtime/identity.ts). */
export async function twinGuard(ctx: CliContext, config: ResolvedConfig): Promise<Map<string, string>> {
  return clusterTwins(config.clusters, async (name) => {
    const cluster = config.clusters.find((c) => c.name === name) as ResolvedCluster
    const reader = readOnlyClient(cluster, config, { log: ctx.log })
    try {
      return await reader.get('/cluster/status', { signal: ctx.signal })
    } finally {
      await reader.close()
    }
  })
}
