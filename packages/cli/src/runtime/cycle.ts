/**
 * One reconcile cycle of one cluster: the desired state from the tree, then the planner's reconcile()
 * (secret references, observe, plan, privilege preflight, saved-plan contract, execute). All logic lives in
 * the libraries; this file wires them and turns failures into an aborted cycle with a reason, never a
 * half-done plan.
 */
import type { PveReadOnlyClient } from '@proxops/pve-client'
import type { SopsCredentials } from '@proxops/sops'
import {
  blockedCount,
  convergence,
  DEFAULT_POLICY,
  ObserveError,
  reconcile,
  ReconcileError,
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
import { clientHooks, readOnlyClient } from './clients.js'
import { clusterTwins } from './identity.js'
import { openStorageLedger } from './storage-ledger.js'
import {
  cycleResult,
  findings,
  objectStates,
  plannedActions,
  type ClusterCycle,
  type DesiredObject,
} from '../status-model.js'
import type { CliContext } from './context.js'
import { loadDesired } from './desired.js'
import { parseObjectRef, planTargets, sameObject, type ObjectRef } from './targets.js'
import { readSuspensions, suspensionHolds, type Suspension } from './suspensions.js'
import { keptObjects } from './kept.js'
import { windowHolds } from './sync-window.js'
import type { SourceTree } from './source.js'
import { tokenSecretSink } from './token-secrets.js'

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
  /** `--target`, `status KIND/name`: only these objects and what they depend on (runtime/targets.ts) */
  targets?: readonly ObjectRef[]
  /** the data dir's suspensions, when the caller read them already (the daemon, once per tick) */
  suspensions?: readonly Suspension[]
  /** `--override-window`: disruptive changes run outside the cluster's sync windows */
  overrideWindow?: boolean
}

export interface CycleOutcome {
  cycle: ClusterCycle
  plan?: Plan
  report?: Report
  inventory?: LiveInventory
  /** the cluster's desired objects with the addresses the plan gives them (after the cycle loaded them) */
  desired?: readonly DesiredObject[]
  /** set when the cycle aborted */
  error?: CliError
}

export function policyFor(
  options: Pick<CycleOptions, 'cluster' | 'config' | 'pruneBudget' | 'allowEmpty'>,
  /** objects kept by their `proxops/prune: never` annotation, now or before (runtime/kept.ts) */
  kept: readonly { kind: string; name: string }[] = [],
): Policy {
  const p = options.cluster.policy
  const keep = [...(p?.keep ?? []), ...kept]
  return {
    ...DEFAULT_POLICY,
    clusterEntry: options.cluster.name,
    nodes: options.cluster.nodes,
    pruneBudget: options.pruneBudget,
    allowEmpty: options.allowEmpty ?? [],
    disruption: options.cluster.disruption ?? options.config.reconcile.disruption,
    shutdownTimeoutSeconds: Math.max(1, Math.round(options.config.reconcile.shutdownTimeoutMs / 1000)),
    ...(options.cluster.safetySnapshots ? { safetySnapshots: options.cluster.safetySnapshots } : {}),
    ...(p?.pruneNever || keep.length > 0
      ? { pruneNever: { ...(p?.pruneNever ? { all: true } : {}), objects: keep } }
      : {}),
    ...(p && Object.keys(p.ignoreFields).length > 0 ? { ignoreFields: p.ignoreFields } : {}),
    ...(options.cluster.access ? { access: accessPolicy(options.cluster) } : {}),
  }
}

/** the lock-out guards protect what grants the credential this cluster runs as (docs/access.md#lock-out) */
function accessPolicy(cluster: ResolvedCluster): NonNullable<Policy['access']> {
  const a = cluster.access
  const c = cluster.credentials
  const credential = c.method === 'token' ? c.tokenId : c.user
  return {
    ...(a?.rolePrefix !== undefined ? { rolePrefix: a.rolePrefix } : {}),
    ...(a?.acknowledgeLockout ? { acknowledgeLockout: true } : {}),
    ...(credential ? { credential } : {}),
  }
}

/** A resolver over the cluster's SOPS document: `cloud-init.ssh-keys.x` -> value (fails closed). */
export function secretLookup(sops: SopsCredentials | undefined): (ref: string) => string {
  return (ref) => {
    if (!sops) throw new CliError('SECRETS', `reference ${ref} needs a secrets-file for this cluster`)
    return sops.resolveRef(ref).reveal()
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
        unmanaged: 0,
        blocked: 0,
        blockedByReason: {},
        desiredStale: o.tree.stale,
        objects: [],
        plannedActions: [],
        findings: [],
      },
      error: error instanceof CliError ? error : new CliError('ABORTED', `cluster ${name}: cycle aborted: ${reason}`),
    }
  }
  try {
    if (o.blocked !== undefined) throw new CliError('CLUSTER_TWIN', `cluster ${name}: ${o.blocked}`)
    const loaded = await loadDesired(o.tree.root, name, o.tree.commit)
    objects = loaded.objects
    ctx.log.debug('desired state loaded', {
      cluster: name,
      commit: o.tree.commit,
      manifests: loaded.desired.manifests.length,
    })
    const targets = o.targets ? planTargets(o.targets, loaded.objects) : undefined
    // suspended objects are read and planned, never written: their actions become `suspended` skips
    const holds = [
      ...suspensionHolds(
        name,
        o.suspensions ?? readSuspensions(o.config.dataDir),
        loaded.desired.manifests,
        loaded.objects,
        (text) => parseObjectRef(text, 'suspension'),
      ),
      // outside its sync windows a disruptive change waits (and diff says until when); hotplug does not
      ...(o.overrideWindow ? [] : windowHolds(o.cluster.syncWindows ?? [], ctx.now())),
    ]
    const credentials = o.cluster.credentials
    // a token is created only where its secret can be sealed (outside the repository, to the SOPS recipients)
    const sink = o.cluster.access ? tokenSecretSink(o.cluster, o.config, o.tree.root, ctx.redactor) : undefined
    // secrets, observe, plan, privilege preflight, the saved plan's contract, execute: the planner's cycle
    const { inventory, plan, report } = await reconcile({
      desired: loaded.desired,
      reader: o.reader,
      ...(o.writer ? { writer: o.writer } : {}),
      policy: policyFor(o, keptObjects(o.config.dataDir, name, loaded.desired.manifests, o.writer !== undefined)),
      secrets: secretLookup(o.sops),
      ledger: openStorageLedger(o.config.dataDir, name, o.writer !== undefined),
      actor: credentials.method === 'token' ? credentials.tokenId : credentials.user,
      ...(o.savedPlan ? { savedPlan: o.savedPlan, comparable: (p: Plan) => ctx.redactor.strings(p) } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(o.onPlan ? { onPlan: o.onPlan } : {}),
      ...(targets ? { targets } : {}),
      ...(holds.length > 0 ? { holds } : {}),
      execute: {
        taskTimeoutMs: o.config.reconcile.taskTimeoutMs,
        ...(sink ? { tokenSecrets: sink } : {}),
        ...(o.onProgress ? { onProgress: o.onProgress } : {}),
        ...(o.progressIntervalMs ? { progressIntervalMs: o.progressIntervalMs } : {}),
      },
    }).catch((error: unknown) => {
      throw error instanceof ReconcileError ? new CliError(error.code, error.message) : error
    })
    ctx.log.debug('live state read', {
      cluster: name,
      guests: inventory.guests.length,
      unknown: inventory.unknownGuests.length,
      volumes: inventory.volumes.length,
    })
    // a narrowed plan says nothing about the other objects: they are left out, not shown converged
    if (o.targets) {
      const touched = new Set(plan.actions.map((a) => a.address))
      const refs = o.targets
      objects = objects.filter((d) => refs.some((r) => sameObject(r, d)) || d.addresses.some((a) => touched.has(a)))
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
      unmanaged: plan.gaps.filter((g) => g.unmanaged === true).length,
      blocked: blockedCount(state),
      blockedByReason: state.byReason,
      desiredStale: o.tree.stale,
      ...(o.targets ? { targets: o.targets.map((r) => `${r.kind}/${r.name}`) } : {}),
      objects: objectStates(name, objects, plan, report),
      plannedActions: plannedActions(plan, report),
      findings: findings(plan),
    }
    return { cycle, plan, inventory, desired: objects, ...(report ? { report } : {}) }
  } catch (error) {
    return aborted(error)
  }
}

/** Before any cycle: which selected clusters are the same PVE cluster as another (runtime/identity.ts). */
export async function twinGuard(
  ctx: CliContext,
  config: ResolvedConfig,
  /** the command's own clients per cluster, when it has them: their connections then serve the cycles too */
  clients?: ReadonlyMap<string, Pick<PveReadOnlyClient, 'get'>>,
): Promise<Map<string, string>> {
  return clusterTwins(config.clusters, async (name) => {
    const own = clients?.get(name)
    if (own) return own.get('/cluster/status', { signal: ctx.signal })
    const cluster = config.clusters.find((c) => c.name === name) as ResolvedCluster
    const reader = readOnlyClient(cluster, config, clientHooks(ctx))
    try {
      return await reader.get('/cluster/status', { signal: ctx.signal })
    } finally {
      await reader.close()
    }
  })
}
