/**
 * Builders for hand-written plans in tests: an Action with sensible defaults and a Plan around actions.
 * They produce the same plain data plan() does, nothing more.
 */
import { DEFAULT_POLICY, PLAN_FORMAT_VERSION, type Action, type Plan, type PveRequest } from '../plan-types.js'
import { summaryOf } from '../plan/order.js'
import { KINDS } from '../kinds/index.js'

/** the kind of an action whose requests make this call: the first kind the kind that runs it declares */
function kindOfCall(call: PveRequest['call'] | undefined): Action['kind'] {
  const kind = KINDS.find((k) => call !== undefined && call in k.run)
  return kind?.actionKinds?.[0] ?? kind?.manifests[0] ?? 'VM'
}

/**
 * An action with plan()'s field defaults; `requests` is required, everything else may be given. Its `kind` is by
 * default the one whose kind runs the first request (`VM` for a guest's, `HA` for an HA write, `Pool` for a pool's).
 */
export function makeAction(partial: Partial<Action> & { requests: readonly PveRequest[] }): Action {
  const first = partial.requests[0]
  const node = partial.node ?? (first && 'node' in first ? first.node : undefined) ?? 'pve1'
  const vmid = partial.vmid ?? (first && 'vmid' in first ? first.vmid : undefined)
  const type = partial.type ?? 'update'
  const kind = partial.kind ?? kindOfCall(first?.call)
  const address = partial.address ?? `${kind}/${node}/${vmid ?? partial.filename ?? 'x'}`
  return {
    id: partial.id ?? `${address}#${type}`,
    address,
    kind,
    node,
    ...(vmid !== undefined ? { vmid } : {}),
    type,
    reason: partial.reason ?? `${address}: ${type}`,
    diffs: partial.diffs ?? [],
    disruption: partial.disruption ?? 'none',
    tier: partial.tier ?? (type === 'delete' ? 9 : 0),
    level: partial.level ?? 0,
    dependsOn: partial.dependsOn ?? [],
    requires: partial.requires ?? [],
    ...partial,
  }
}

/** A plan around `actions` (no findings), with plan()'s policy defaults and plan()'s summary counts. */
export function makePlan(actions: readonly Action[], cluster = 'homelab'): Plan {
  return {
    format_version: PLAN_FORMAT_VERSION,
    cluster,
    policy: {
      pruneBudget: DEFAULT_POLICY.pruneBudget,
      disruption: DEFAULT_POLICY.disruption,
      ownershipTag: DEFAULT_POLICY.ownershipTag,
    },
    actions,
    anomalies: [],
    skips: [],
    pending: [],
    gaps: [],
    summary: summaryOf(actions, [], [], []),
  }
}
