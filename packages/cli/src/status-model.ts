/**
 * Object states for `status`, `apply` reports and the daemon's /status: every desired object and every object the
 * plan touches, with what this cycle knows about it. What "converged" and "blocked" mean comes from the planner's
 * `convergence()` (see docs/cli.md, "Convergence"). Pure.
 */
import {
  convergence,
  describeAction,
  type Action,
  type ActionResult,
  type Blocked,
  type BlockReason,
  type DisruptionClass,
  type Plan,
  type Report,
} from '@proxops/planner'

/** `format_version` of the JSON that `status` and `apply` print (`--output json`); raised on a breaking change */
export const STATUS_FORMAT_VERSION = 2

/** `blocked`: the object does not match git and this cycle cannot make it so (see `blocked` for why) */
export type ObjectState = 'converged' | 'drift' | 'in_progress' | 'failed' | 'skipped' | 'pruned' | 'blocked'

export interface DesiredObject {
  kind: string
  name: string
  node?: string
  vmid?: number
  /**
   * the addresses the plan gives this object (docs/plan-format.md: one per node for an artifact): what the
   * planner reports under them is this object's
   */
  addresses: readonly string[]
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
  /** state `blocked`: why */
  blocked?: BlockReason
  reason?: string
  error?: string
  /** the guest is on this node, not on its `spec.node`: where HA placed it (`reason` says so); not moved */
  placedOn?: string
  /**
   * live keys set on PVE that the manifest does not own (listed, never written), sorted; `executes` says what a
   * key that changes what the guest or its host runs does (hookscript, args, host devices)
   */
  unmanaged?: UnmanagedKey[]
}

export interface UnmanagedKey {
  key: string
  executes?: string
}

/** `blocked`: nothing can be done this cycle, yet PVE does not match git */
export type CycleResult = 'converged' | 'drift' | 'blocked' | 'incomplete' | 'aborted'

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
  /** unmanaged live keys over all objects (see ObjectStatus.unmanaged) */
  unmanaged: number
  /** objects that do not match git and cannot be converged this cycle, in all and per reason */
  blocked: number
  blockedByReason: Partial<Record<BlockReason, number>>
  desiredStale: boolean
  /** `--target`: the objects the cycle was narrowed to (`KIND/name`); the rest of the cluster was not planned */
  targets?: string[]
  objects: ObjectStatus[]
  /** the cycle's plan, action by action in plan order, with the result of each after execute */
  plannedActions: PlannedAction[]
  /** the plan's anomalies, then its gaps other than unmanaged keys (those are listed under their object) */
  findings: Finding[]
}

export interface PlannedAction {
  address: string
  kind: string
  type: string
  /** what the action does to a running guest (docs/plan-format.md) */
  disruption: DisruptionClass
  reason: string
  /** after execute; `not run` for an action a cancelled run never reached */
  result?: 'ok' | 'failed' | 'skipped' | 'not run'
  /** PVE's error (failed) or why it was skipped */
  detail?: string
}

export interface Finding {
  type: 'anomaly' | 'gap'
  /** the anomaly's code, or the gap's field */
  code: string
  /** absent for a cluster-level anomaly */
  address?: string
  message: string
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
    else {
      // under the object its address names: a guest's HA resource, firewall and pool membership are the guest's
      const id = key(action.address.split('/')[0]!, action.name)
      byObject.set(id, [...(byObject.get(id) ?? []), action])
    }
  }
  // what the planner says blocks each address, the first reason first (as convergence() counts it)
  const blockedAt = new Map<string, Blocked[]>()
  for (const b of convergence(plan).blocked) blockedAt.set(b.address, [...(blockedAt.get(b.address) ?? []), b])
  const blockedOf = (addresses: readonly string[]): Pick<ObjectStatus, 'blocked' | 'reason'> | undefined => {
    const found = addresses.flatMap((a) => blockedAt.get(a) ?? [])
    if (found.length === 0) return undefined
    return { blocked: found[0]!.reason, reason: [...new Set(found.map((b) => b.message))].join('; ') }
  }
  const unmanagedOf = (addresses: readonly string[]): Pick<ObjectStatus, 'unmanaged'> => {
    const keys = plan.gaps
      .filter((g) => g.unmanaged === true && addresses.includes(g.address))
      .map((g): UnmanagedKey => ({ key: g.field, ...(g.executes !== undefined ? { executes: g.executes } : {}) }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    return keys.length > 0 ? { unmanaged: keys } : {}
  }
  // a guest HA placed on another node than its spec.node: where it is and why (docs/safety.md#migration)
  const placedOf = (addresses: readonly string[]): Pick<ObjectStatus, 'placedOn' | 'reason'> => {
    const gap = plan.gaps.find((g) => g.placedOn !== undefined && addresses.includes(g.address))
    return gap?.placedOn !== undefined ? { placedOn: gap.placedOn, reason: gap.note } : {}
  }
  const out: ObjectStatus[] = []
  const seen = new Set<string>()

  const stateOf = (actions: readonly Action[]): Pick<ObjectStatus, 'state' | 'action' | 'reason' | 'error'> => {
    const last = actions[actions.length - 1] as Action
    const reason = actions.map((a) => a.reason).join('; ')
    const labels = actions.map((a) => describeAction(a).label).join('+')
    if (!report) return { state: 'drift', action: labels, reason }
    const failed = actions.map((a) => results.get(a.id)).find((r) => r?.status === 'failed')
    if (failed)
      return {
        state: 'failed',
        action: describeAction(failed).label,
        reason,
        ...(failed.error ? { error: failed.error } : {}),
      }
    const skip = actions.map((a) => results.get(a.id)).find((r) => r?.status === 'skipped' || r === undefined)
    if (skip)
      return { state: 'skipped', action: describeAction(skip ?? last).label, reason: skip.skip?.reason ?? 'not run' }
    return {
      state: last.type === 'delete' ? 'pruned' : 'converged',
      action: labels,
      reason,
    }
  }

  for (const object of desired) {
    const id = key(object.kind, object.name)
    if (seen.has(id)) continue
    seen.add(id)
    const actions = byObject.get(id) ?? []
    const base = {
      cluster,
      kind: object.kind,
      name: object.name,
      node: object.node ?? actions[0]?.node ?? '-',
      ...(object.vmid !== undefined ? { vmid: object.vmid } : {}),
    }
    const keys = unmanagedOf(object.addresses)
    const blocked = blockedOf(object.addresses)
    const placed = placedOf(object.addresses)
    const state = actions.length > 0 ? stateOf(actions) : { state: 'converged' as const, ...placed }
    // actions carried out, yet the planner still reports the object blocked (an anomaly beside an update): blocked
    if (blocked && state.state === 'converged') out.push({ ...base, ...state, state: 'blocked', ...blocked, ...keys })
    else out.push({ ...base, ...state, ...keys })
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
  // what else the planner reports blocked under an address of its own (a prune held back, an unknown guest no
  // manifest claims, a live object's anomaly): a row each, so the rows say what the cluster line counts
  const claimed = new Set([...desired.flatMap((o) => o.addresses), ...prunes.map((p) => p.address)])
  for (const [address, found] of blockedAt) {
    if (address === plan.cluster || claimed.has(address)) continue
    const skip = plan.skips.find((s) => s.address === address)
    out.push({
      cluster,
      kind: skip?.kind ?? address.split('/')[0]!,
      name: address,
      node: skip?.node || '-',
      ...(skip?.vmid !== undefined ? { vmid: skip.vmid } : {}),
      state: 'blocked',
      blocked: found[0]!.reason,
      reason: [...new Set(found.map((b) => b.message))].join('; '),
    })
  }
  return out.sort((a, b) =>
    a.kind === b.kind ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.kind < b.kind ? -1 : 1,
  )
}

/** The plan's actions as a cycle reports them: in plan order, each with its result after execute. */
export function plannedActions(plan: Plan, report?: Report): PlannedAction[] {
  const results = new Map<string, ActionResult>((report?.results ?? []).map((r) => [r.id, r]))
  return plan.actions.map((a) => {
    const r = results.get(a.id)
    const detail = r?.status === 'failed' ? r.error : r?.status === 'skipped' ? r.skip?.reason : undefined
    return {
      address: a.address,
      kind: a.kind,
      type: a.type,
      disruption: a.disruption,
      reason: a.reason,
      ...(report ? { result: r?.status ?? 'not run' } : {}),
      ...(detail !== undefined ? { detail } : {}),
    }
  })
}

/** The plan's anomalies, then its gaps that are not unmanaged keys, in the plan's order. */
export function findings(plan: Plan): Finding[] {
  return [
    ...plan.anomalies.map((a): Finding => ({
      type: 'anomaly',
      code: a.code,
      ...(a.address !== undefined ? { address: a.address } : {}),
      message: a.message,
    })),
    ...plan.gaps
      .filter((g) => g.unmanaged !== true)
      .map((g): Finding => ({ type: 'gap', code: g.field, address: g.address, message: g.note })),
  ]
}

/** The cycle's overall result. */
export function cycleResult(plan: Plan, report?: Report): CycleResult {
  if (report && (report.summary.failed > 0 || report.summary.skipped > 0 || report.cancelled)) return 'incomplete'
  if (!report && plan.actions.length > 0) return 'drift'
  return convergence(plan, report).converged ? 'converged' : 'blocked'
}
