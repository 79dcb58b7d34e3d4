/**
 * plan(desired, live, policy): the pure heart of ProxOps. Same inputs, same Plan (see serializePlan).
 * Reads nothing but its arguments; all PVE knowledge comes from the LiveInventory observe() produced.
 *
 * A short pipeline: check the inputs, let every object kind plan (kinds/index.ts), run the one prune stage
 * over every kind's deletes (prune.ts), then assemble the ordered plan (order.ts).
 */
import { DISRUPTION_POLICIES, identityIndex, type Manifest } from '@proxops/schema'
import { isArtifact, isGuest, type DesiredState, type SecretLookup } from '../desired.js'
import { PlanInputError } from '../errors.js'
import type { LiveInventory } from '../inventory.js'
import { KINDS } from '../kinds/index.js'
import type { KindContext, KindPlan, PlanContext, PlannedGuest, PruneGroup } from '../kit/kind.js'
import { DEFAULT_POLICY, type Plan, type Policy } from '../plan-types.js'
import { keyOf, levels } from '../kit/deps.js'
import type { Draft } from '../kit/draft.js'
import { assemblePlan } from './order.js'
import type { StorageLedger } from '../ports.js'
import { prune } from './prune.js'

export interface PlanOptions {
  /** decrypted secret values, used only to compare `sshkeys` from refs; never copied into the plan */
  secrets?: SecretLookup
  /** the storages this entry wrote and its credentials' fingerprints (ports.ts StorageLedger) */
  ledger?: StorageLedger
}

export function plan(
  desired: DesiredState,
  live: LiveInventory,
  policy: Policy = DEFAULT_POLICY,
  options: PlanOptions = {},
): Plan {
  const ctx = checkedContext(desired, live, policy, options)
  const results: KindPlan[] = []
  const groups: { order: number; group: PruneGroup }[] = []
  const ids = new Map<string, string[]>()
  let guests: readonly PlannedGuest[] = []
  let foreignGuests: ReadonlyMap<number, string> = new Map()
  for (const kind of KINDS) {
    const context: KindContext = {
      ...ctx,
      guests,
      foreignGuests,
      actionsOf: (address) => [...(ids.get(address) ?? [])],
    }
    const result = kind.plan(context)
    results.push(result)
    if (result.planned) guests = result.planned
    if (result.foreign) foreignGuests = result.foreign
    if (result.prunes) {
      // a kind that proposes deletes says where they come in the deletion order (kit/kind.ts, Kind.pruneOrder)
      if (kind.pruneOrder === undefined) throw new Error(`kind ${kind.name} proposes deletes without a pruneOrder`)
      groups.push({ order: kind.pruneOrder, group: result.prunes })
    }
    for (const d of result.drafts) {
      const list = ids.get(d.address)
      if (list) list.push(idOf(d))
      else ids.set(d.address, [idOf(d)])
    }
  }
  const pruned = prune(
    groups.sort((a, b) => a.order - b.order).map((g) => g.group),
    policy,
  )
  const drafts = [...results.flatMap((r) => r.drafts), ...pruned.drafts]
  return assemblePlan({
    desired,
    policy,
    drafts,
    out: {
      drafts,
      anomalies: [...results.flatMap((r) => r.anomalies), ...pruned.anomalies],
      skips: [...results.flatMap((r) => r.skips), ...pruned.skips],
      pending: results.flatMap((r) => r.pending),
      gaps: results.flatMap((r) => r.gaps),
    },
    byKey: ctx.byKey,
    levels: ctx.levels,
  })
}

const idOf = (d: Draft): string => d.id ?? `${d.address}#${d.type}`

/** The shared context, after every check of the inputs: nothing is planned from inputs that fail one. */
function checkedContext(
  desired: DesiredState,
  live: LiveInventory,
  policy: Policy,
  options: PlanOptions,
): PlanContext & { levels: ReturnType<typeof levels> } {
  checkPolicy(policy)
  const byKey = new Map<string, Manifest>()
  for (const m of desired.manifests) {
    const key = keyOf(m.kind, m.metadata.name)
    if (byKey.has(key)) throw new PlanInputError('PLAN_DUPLICATE', 'declared twice', key)
    byKey.set(key, m)
  }
  const graph = levels(byKey)
  // one PVE object, one manifest: the identity index validate reports from (schema identity.ts)
  const [twice] = identityIndex(desired.manifests).conflicts
  if (twice)
    throw new PlanInputError(
      'PLAN_DUPLICATE',
      `declares ${twice.second.identity.label}, as ${keyOf(twice.first.manifest.kind, twice.first.manifest.metadata.name)} does`,
      keyOf(twice.second.manifest.kind, twice.second.manifest.metadata.name),
    )
  const allow = new Set(policy.nodes)
  const allowedNode = (n: string) => allow.size === 0 || allow.has(n)
  const checkNode = (kind: string, name: string, node: string): void => {
    if (allowedNode(node)) return
    throw new PlanInputError(
      'PLAN_UNKNOWN_NODE',
      `references node ${JSON.stringify(node)}, which is not in the cluster's node allowlist (${policy.nodes.join(', ')})`,
      keyOf(kind, name),
    )
  }
  for (const m of desired.manifests) {
    if (isGuest(m)) checkNode(m.kind, m.metadata.name, m.spec.node)
    else if (isArtifact(m)) for (const node of m.spec.nodes) checkNode(m.kind, m.metadata.name, node)
  }
  const online = new Map(live.nodes.map((n) => [n.node, n.online]))
  return {
    desired,
    live,
    policy,
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.ledger ? { ledger: options.ledger } : {}),
    byKey,
    levels: graph,
    levelOf: (key) => graph.get(key)?.level ?? 0,
    allowedNode,
    nodeDown: (node) => online.get(node) !== true,
  }
}

function checkPolicy(p: Policy): void {
  if (p.pruneBudget !== 'unlimited' && !(Number.isInteger(p.pruneBudget) && p.pruneBudget >= 0)) {
    throw new PlanInputError(
      'PLAN_POLICY',
      `pruneBudget must be a whole number >= 0 or 'unlimited' (got ${String(p.pruneBudget)})`,
      'policy.pruneBudget',
    )
  }
  if (!(p.pruneRatioLimit > 0 && p.pruneRatioLimit <= 1)) {
    throw new PlanInputError('PLAN_POLICY', 'pruneRatioLimit must be in (0, 1]', 'policy.pruneRatioLimit')
  }
  if (!(DISRUPTION_POLICIES as readonly string[]).includes(p.disruption))
    throw new PlanInputError(
      'PLAN_POLICY',
      `unknown disruption policy ${JSON.stringify(p.disruption)}`,
      'policy.disruption',
    )
  if (!/^[a-z0-9_][a-z0-9_\-+.]*$/.test(p.ownershipTag))
    throw new PlanInputError('PLAN_POLICY', 'ownershipTag must be a lower-case PVE tag', 'policy.ownershipTag')
  if (p.clusterEntry !== undefined && !/^[a-z0-9][a-z0-9_\-+.]*$/.test(p.clusterEntry))
    throw new PlanInputError('PLAN_POLICY', 'clusterEntry must be a lower-case cluster name', 'policy.clusterEntry')
  if (!(Number.isInteger(p.shutdownTimeoutSeconds) && p.shutdownTimeoutSeconds > 0)) {
    throw new PlanInputError(
      'PLAN_POLICY',
      'shutdownTimeoutSeconds must be a whole number > 0',
      'policy.shutdownTimeoutSeconds',
    )
  }
}
