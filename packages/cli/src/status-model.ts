/**
 * Object states for `status`, `apply` reports and the daemon's /status (RB 9.7): every desired object and
 * every object the plan touches, with what this cycle knows about it. Pure.
 */
import type { Action, ActionResult, Plan, Report } from '@proxops/planner'

export type ObjectState =
  'converged' | 'drift' | 'in_progress' | 'failed' | 'skipped' | 'pruned' | 'anomalous' | 'deferred'

export interface DesiredObject {
  kind: string
  name: string
  node?: string
  vmid?: number
}

export interface ObjectStatus {
  cluster: string
  kind: string
  name: string
  node: string
  vmid?: number
  state: ObjectState
  /** the action planned or carried out (`update`, `delete`, ...) */
  action?: string
  reason?: string
  error?: string
}

export type CycleResult = 'converged' | 'drift' | 'incomplete' | 'aborted'

export interface ClusterCycle {
  cluster: string
  commit?: string
  startedAt: string
  finishedAt: string
  mode: 'dry-run' | 'apply'
  result: CycleResult
  abortReason?: string
  actions: { planned: number; ok: number; failed: number; skipped: number }
  pruned: number
  pruneDeferred: number
  anomalies: number
  skips: number
  desiredStale: boolean
  objects: ObjectStatus[]
}

const key = (kind: string, name: string): string => `${kind}\0${name}`

/** States of this cycle's objects, sorted by kind, name. */
export function objectStates(
  cluster: string,
  desired: readonly DesiredObject[],
  plan: Plan,
  report?: Report,
): ObjectStatus[] {
  const results = new Map<string, ActionResult>((report?.results ?? []).map((r) => [r.id, r]))
  const byObject = new Map<string, Action[]>()
  const prunes: Action[] = []
  for (const action of plan.actions) {
    if (action.name === undefined) prunes.push(action)
    else byObject.set(key(action.kind, action.name), [...(byObject.get(key(action.kind, action.name)) ?? []), action])
  }
  const anomalous = new Set(plan.anomalies.map((a) => a.address).filter((a): a is string => a !== undefined))
  const skipped = new Map(plan.skips.map((s) => [s.address, s]))
  const out: ObjectStatus[] = []
  const seen = new Set<string>()

  const stateOf = (actions: readonly Action[]): Pick<ObjectStatus, 'state' | 'action' | 'reason' | 'error'> => {
    const last = actions[actions.length - 1] as Action
    const reason = actions.map((a) => a.reason).join('; ')
    if (!report) return { state: 'drift', action: actions.map((a) => a.type).join('+'), reason }
    const failed = actions.map((a) => results.get(a.id)).find((r) => r?.status === 'failed')
    if (failed)
      return { state: 'failed', action: failed.type, reason, ...(failed.error ? { error: failed.error } : {}) }
    const skip = actions.map((a) => results.get(a.id)).find((r) => r?.status === 'skipped' || r === undefined)
    if (skip) return { state: 'skipped', action: skip.type ?? last.type, reason: skip.skip?.reason ?? 'not run' }
    return {
      state: last.type === 'delete' ? 'pruned' : 'converged',
      action: actions.map((a) => a.type).join('+'),
      reason,
    }
  }

  for (const object of desired) {
    const id = key(object.kind, object.name)
    if (seen.has(id)) continue
    seen.add(id)
    const actions = byObject.get(id) ?? []
    const address = actions[0]?.address
    const base = {
      cluster,
      kind: object.kind,
      name: object.name,
      node: object.node ?? actions[0]?.node ?? '-',
      ...(object.vmid !== undefined ? { vmid: object.vmid } : {}),
    }
    if (actions.length > 0) out.push({ ...base, ...stateOf(actions) })
    else {
      const skip = [...skipped.values()].find((s) => s.address.includes(`(${object.name})`) && s.kind === object.kind)
      const isAnomalous =
        [...anomalous].some((a) => a.includes(`(${object.name})`)) || (address !== undefined && anomalous.has(address))
      if (skip)
        out.push({
          ...base,
          state: skip.code === 'prune-budget' || skip.code === 'prune-guard' ? 'deferred' : 'skipped',
          reason: skip.message,
        })
      else if (isAnomalous)
        out.push({
          ...base,
          state: 'anomalous',
          reason: plan.anomalies.find((a) => a.address?.includes(`(${object.name})`))?.message ?? '',
        })
      else out.push({ ...base, state: 'converged' })
    }
  }
  for (const prune of prunes) {
    out.push({
      cluster,
      kind: prune.kind,
      name: prune.address,
      node: prune.node,
      ...(prune.vmid !== undefined ? { vmid: prune.vmid } : {}),
      ...stateOf([prune]),
    })
  }
  for (const skip of plan.skips) {
    if (skip.code !== 'prune-budget' && skip.code !== 'prune-guard') continue
    out.push({
      cluster,
      kind: skip.kind,
      name: skip.address,
      node: skip.node,
      ...(skip.vmid !== undefined ? { vmid: skip.vmid } : {}),
      state: 'deferred',
      reason: skip.message,
    })
  }
  return out.sort((a, b) =>
    a.kind === b.kind ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.kind < b.kind ? -1 : 1,
  )
}

/** The cycle's overall result. */
export function cycleResult(plan: Plan, report?: Report): CycleResult {
  if (!report) return plan.actions.length === 0 && !lacksPrivileges(plan) ? 'converged' : 'drift'
  return report.summary.failed > 0 || report.summary.skipped > 0 || report.cancelled || lacksPrivileges(plan)
    ? 'incomplete'
    : 'converged'
}

/** actions left out because the token lacks privileges: PVE does not match git, whatever else ran */
export function lacksPrivileges(plan: Plan): boolean {
  return plan.anomalies.some((a) => a.code === 'missing-privilege')
}
