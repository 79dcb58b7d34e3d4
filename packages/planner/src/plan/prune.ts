/**
 * The one prune stage (docs/safety.md, "Prunes"): every kind's deletes share one budget per cluster and cycle,
 * one set of guards and one deferral order. The groups come in the kinds' prune order (Kind.pruneOrder: backup
 * jobs, guests, pools, HA removals); within a group the candidates come in the group's order. Per guard kind,
 * the empty-desired guard holds back every candidate when git declares none of that kind while owned ones
 * exist, and the ratio guard holds back the chosen ones when they would be more than `pruneRatioLimit` of the
 * owned ones. A candidate waiting for another of its group is deferred with it. Pure.
 */
import type { Anomaly, Policy, Skip } from '../plan-types.js'
import { objectKind, type Draft } from '../kit/draft.js'
import type { PruneCandidate, PruneGroup } from '../kit/kind.js'
import { PRUNE_BUDGET_OVERRIDE, allowEmptyOverride } from '../kit/guard-overrides.js'
import { addressName } from './target.js'

export interface PruneResult {
  drafts: Draft[]
  anomalies: Anomaly[]
  skips: Skip[]
}

const guardDeferred = (kind: string) =>
  `prune deferred by the empty-desired or ratio guard (${allowEmptyOverride(kind)})`

/** Whether the object's `prune: never` policy keeps it (the cluster's, or the object's by kind and name). */
function neverPruned(policy: Policy, c: PruneCandidate): boolean {
  const keep = policy.pruneNever
  if (!keep) return false
  if (keep.all === true) return true
  const name = c.draft.name ?? addressName(c.draft.address)
  return (keep.objects ?? []).some((o) => o.kind === c.draft.kind && o.name === name)
}

export function prune(groups: readonly PruneGroup[], policy: Policy): PruneResult {
  const out: PruneResult = { drafts: [], anomalies: [], skips: [] }
  let left = policy.pruneBudget === 'unlimited' ? Number.POSITIVE_INFINITY : policy.pruneBudget
  const allowEmpty = new Set<string>(policy.allowEmpty)
  const skip = (c: PruneCandidate, code: Skip['code'], message: string) => {
    const d = c.draft
    out.skips.push({
      code,
      address: d.address,
      kind: objectKind(d.address),
      node: d.node,
      ...(d.vmid !== undefined ? { vmid: d.vmid } : {}),
      message,
    })
  }
  for (const group of groups) {
    const proposed = group.candidates(out.drafts)
    out.skips.push(...proposed.skips)
    out.anomalies.push(...proposed.anomalies)
    // `prune: never` first: kept objects are reported, count for no guard and spend no budget; what waits for
    // one of them is deferred with it
    const kept = new Set<PruneCandidate>()
    for (const c of proposed.candidates)
      if (neverPruned(policy, c)) {
        kept.add(c)
        skip(
          c,
          'prune-never',
          'owned and absent in git; kept by its prune: never policy (delete it by hand when meant)',
        )
      }
    const found = { candidates: proposed.candidates.filter((c) => !kept.has(c)) }
    const guards = (kind: string) => group.guarded && !allowEmpty.has(kind)
    // empty-desired: git declares none of a kind that still has owned objects to prune
    const held = new Set<string>()
    const kinds = [...new Set(found.candidates.map((c) => c.kind))]
    for (const kind of kinds) {
      if (!guards(kind) || (group.desired.get(kind) ?? 0) > 0) continue
      held.add(kind)
      const n = found.candidates.filter((c) => c.kind === kind).length
      out.anomalies.push({
        code: 'empty-desired',
        kind: kind as Anomaly['kind'] & string,
        message: `0 desired ${kind} but ${n} ${group.owner} ${group.noun} would be pruned: probable bad push; no ${kind} is pruned this cycle (${allowEmptyOverride(kind)})`,
      })
    }
    // the budget, in the group's order; a candidate waiting for a deferred one is deferred too
    const chosen: PruneCandidate[] = []
    const deferred = new Set<string>([...kept].flatMap((c) => (c.draft.id !== undefined ? [c.draft.id] : [])))
    for (const c of found.candidates) {
      if (held.has(c.kind)) {
        skip(c, 'prune-guard', guardDeferred(c.kind))
        continue
      }
      if (chosen.length >= left || (c.waitsFor ?? []).some((id) => deferred.has(id))) {
        deferred.add(c.draft.id as string)
        skip(
          c,
          'prune-budget',
          c.overBudget ?? `prune deferred (budget ${String(policy.pruneBudget)} per cycle: ${PRUNE_BUDGET_OVERRIDE})`,
        )
        continue
      }
      chosen.push(c)
    }
    // the ratio guard, per kind, on what the budget chose
    for (const kind of kinds) {
      if (!guards(kind) || held.has(kind)) continue
      const n = chosen.filter((c) => c.kind === kind).length
      const total = group.owned.get(kind) ?? 0
      if (n === 0 || n <= policy.pruneRatioLimit * total) continue
      held.add(kind)
      out.anomalies.push({
        code: 'prune-ratio',
        kind: kind as Anomaly['kind'] & string,
        message: `this cycle would prune ${n} of ${total} ${group.owner} ${kind} (more than ${Math.round(policy.pruneRatioLimit * 100)}%): probable bad push; no ${kind} is pruned this cycle (${allowEmptyOverride(kind)})`,
      })
    }
    for (const c of chosen) {
      if (held.has(c.kind)) skip(c, 'prune-guard', guardDeferred(c.kind))
      else out.drafts.push(c.draft)
    }
    left -= chosen.filter((c) => !held.has(c.kind)).length
  }
  return out
}
