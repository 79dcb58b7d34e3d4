/**
 * Actions held back from a plan, after it was made: a suspended cluster or object (`proxops suspend`, the
 * `proxops/suspend` annotation) or a change that waits for its sync window. A held action becomes a skip of its
 * object, with the actions it withheld in the message, so the object's drift is still shown while nothing is
 * written; an action that depends on a held one is held with it. Pure.
 */
import type { Action, Plan, Skip } from '../plan-types.js'
import { objectKind } from '../kit/draft.js'
import { summaryOf } from './order.js'
import { isTarget, type PlanTarget } from './target.js'

export interface PlanHold {
  /** the object held; absent: every object of the cluster */
  target?: PlanTarget
  code: Extract<Skip['code'], 'suspended' | 'sync-window'>
  /** why, first in the skip's message (`suspended since ...: incident 42`) */
  message: string
  /** which of the object's actions it holds; absent: all of them */
  holds?: (action: Action) => boolean
}

export function holdPlan(plan: Plan, holds: readonly PlanHold[]): Plan {
  if (holds.length === 0) return plan
  const heldBy = new Map<string, PlanHold>()
  for (const a of plan.actions) {
    const hold = holds.find(
      (h) =>
        (h.target === undefined || isTarget(h.target, { address: a.address, name: a.name })) && (h.holds?.(a) ?? true),
    )
    if (hold) heldBy.set(a.id, hold)
  }
  // what waits for a held action is held with it (the executor would never start it)
  for (let changed = true; changed;) {
    changed = false
    for (const a of plan.actions) {
      if (heldBy.has(a.id)) continue
      const dep = a.dependsOn.map((id) => heldBy.get(id)).find((h) => h !== undefined)
      if (dep) {
        heldBy.set(a.id, dep)
        changed = true
      }
    }
  }
  if (heldBy.size === 0) return plan
  // one skip per object and reason, naming every action it withheld
  const skips = new Map<string, { action: Action; hold: PlanHold; withheld: string[] }>()
  for (const a of plan.actions) {
    const hold = heldBy.get(a.id)
    if (!hold) continue
    const key = `${a.address}\0${hold.code}`
    const entry = skips.get(key) ?? { action: a, hold, withheld: [] }
    entry.withheld.push(`${a.type} (${a.reason})`)
    skips.set(key, entry)
  }
  const added: Skip[] = [...skips.values()].map(({ action: a, hold, withheld }) => ({
    code: hold.code,
    address: a.address,
    kind: objectKind(a.address),
    node: a.node,
    ...(a.vmid !== undefined ? { vmid: a.vmid } : {}),
    message: `${hold.message}; withheld: ${withheld.join(', ')}`,
  }))
  const actions = plan.actions.filter((a) => !heldBy.has(a.id))
  const all = [...plan.skips, ...added].sort((x, y) =>
    x.address < y.address ? -1 : x.address > y.address ? 1 : x.code < y.code ? -1 : x.code > y.code ? 1 : 0,
  )
  return { ...plan, actions, skips: all, summary: summaryOf(actions, plan.anomalies, all, plan.pending) }
}
