/**
 * A plan narrowed to some objects (`--target KIND/name` of diff and apply): their actions, and the actions of what
 * they depend on, transitively (the actions they wait for, and those on the objects the dependency model says they
 * need, such as the ISO a VM boots or the template it is cloned from). What the plan says about those objects
 * (anomalies, skips, pending changes, gaps) stays; the rest of the cluster is left for another run. Pure.
 */
import type { Action, Plan, ResourceKind } from '../plan-types.js'
import { summaryOf } from './order.js'

export interface PlanTarget {
  kind: ResourceKind
  /** `metadata.name`; for an object no longer in git (a prune), the name PVE shows */
  name: string
  /** the addresses the plan gives the object, when the caller knows them (one per node for an artifact) */
  addresses?: readonly string[]
}

/** The name in a guest's address (`VM/pve1/400(web)` -> `web`), or the id of a cluster-wide object (`Pool/web`). */
export function addressName(address: string): string | undefined {
  return /\(([^()]*)\)$/.exec(address)?.[1] ?? /^(?:BackupJob|Pool)\/(.+)$/.exec(address)?.[1]
}

export const isTarget = (t: PlanTarget, a: { kind?: ResourceKind; address: string; name?: string }): boolean =>
  (a.kind === undefined || a.kind === t.kind) &&
  (t.addresses?.includes(a.address) === true ||
    (a.address.startsWith(`${t.kind}/`) && (a.name ?? addressName(a.address)) === t.name))

export function targetPlan(plan: Plan, targets: readonly PlanTarget[]): Plan {
  const byId = new Map(plan.actions.map((a) => [a.id, a]))
  const byAddress = new Map<string, Action[]>()
  for (const a of plan.actions) byAddress.set(a.address, [...(byAddress.get(a.address) ?? []), a])
  const addresses = new Set(targets.flatMap((t) => t.addresses ?? []))
  const chosen = new Set<string>()
  // an action by the object its address names (an HA resource's action is its guest's), whatever kind runs it
  const queue = plan.actions.filter((a) => targets.some((t) => isTarget(t, { address: a.address, name: a.name })))
  while (queue.length > 0) {
    const a = queue.pop()!
    if (chosen.has(a.id)) continue
    chosen.add(a.id)
    addresses.add(a.address)
    for (const id of a.dependsOn) {
      const dep = byId.get(id)
      if (dep) queue.push(dep)
    }
    for (const address of a.requires) {
      addresses.add(address)
      queue.push(...(byAddress.get(address) ?? []))
    }
  }
  const about = (x: { address?: string; kind?: ResourceKind }): boolean =>
    x.address !== undefined &&
    (addresses.has(x.address) || targets.some((t) => isTarget(t, { ...x, address: x.address! })))
  const actions = plan.actions.filter((a) => chosen.has(a.id))
  const anomalies = plan.anomalies.filter(about)
  const skips = plan.skips.filter(about)
  const pending = plan.pending.filter(about)
  const gaps = plan.gaps.filter(about)
  return { ...plan, actions, anomalies, skips, pending, gaps, summary: summaryOf(actions, anomalies, skips, pending) }
}
