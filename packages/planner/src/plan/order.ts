/**
 * From drafts to the Plan: dependency wiring (prerequisites' actions, same-object order), the total order
 * (tier, level, action rank, node, vmid, address), the sorted findings and the summary counts.
 */
import type { Manifest } from '@proxops/schema'
import type { DesiredState } from '../desired.js'
import { countOf, kindOfManifest, rankOf } from '../kinds/index.js'
import {
  PLAN_FORMAT_VERSION,
  type Action,
  type Anomaly,
  type PendingChange,
  type Plan,
  type PlanSummary,
  type Policy,
  type Skip,
} from '../plan-types.js'
import type { Draft, Sink } from '../kit/draft.js'

export interface AssembleInput {
  desired: DesiredState
  policy: Policy
  drafts: Draft[]
  out: Sink
  byKey: ReadonlyMap<string, Manifest>
  levels: ReadonlyMap<string, { level: number; prereqs: readonly string[] }>
}

export function assemblePlan(a: AssembleInput): Plan {
  const { drafts, byKey, levels, desired, policy } = a
  // ids, then dependency wiring: prerequisites' actions (same node for artifacts) and same-object order
  const byResource = new Map<string, Draft[]>()
  for (const d of drafts) {
    d.id ??= `${d.address}#${d.type}`
    for (const r of d.resource === undefined ? (d.alsoResources ?? []) : [d.resource, ...(d.alsoResources ?? [])]) {
      const list = byResource.get(r) ?? []
      list.push(d)
      byResource.set(r, list)
    }
  }
  const actions: Action[] = drafts.map((d) => {
    const pre = d.resource === undefined ? [] : (levels.get(d.resource)?.prereqs ?? [])
    // most actions have no prerequisites: their order is the same-object order alone
    if (pre.length === 0)
      return toAction(d, d.after === undefined || d.after.length === 0 ? [] : [...new Set(d.after)].sort(), [])
    const dependsOn = new Set<string>(d.after)
    const requires = new Set<string>()
    for (const p of pre) {
      const m = byKey.get(p)
      if (!m) continue
      // the prerequisite as its kind names it (an artifact by its copy on this action's node, if it has one)
      for (const address of kindOfManifest(m).addresses(m, d.node)) requires.add(address)
      for (const a of byResource.get(p) ?? []) if (requires.has(a.address)) dependsOn.add(a.id as string)
    }
    return toAction(
      d,
      dependsOn.size === 0 ? [] : [...dependsOn].sort(),
      requires.size === 0 ? [] : [...requires].sort(),
    )
  })
  actions.sort(compareActions)
  const anomalies = [...a.out.anomalies].sort(compareAnomalies)
  const skips = [...a.out.skips].sort(compareSkips)
  const pending = [...a.out.pending].sort((a, b) => cmp(a.address, b.address) || cmp(a.message, b.message))
  const gaps = [...a.out.gaps].sort((a, b) => cmp(a.address, b.address) || cmp(a.field, b.field) || cmp(a.note, b.note))
  return {
    format_version: PLAN_FORMAT_VERSION,
    cluster: desired.cluster,
    ...(desired.commit === undefined ? {} : { commit: desired.commit }),
    policy: { pruneBudget: policy.pruneBudget, disruption: policy.disruption, ownershipTag: policy.ownershipTag },
    actions,
    anomalies,
    skips,
    pending,
    gaps,
    summary: summaryOf(actions, anomalies, skips, pending),
  }
}

export function compareAnomalies(a: Anomaly, b: Anomaly): number {
  return (
    cmp(a.address ?? '', b.address ?? '') ||
    cmp(a.field ?? '', b.field ?? '') ||
    cmp(a.code, b.code) ||
    cmp(a.message, b.message)
  )
}

export function compareSkips(a: Skip, b: Skip): number {
  return (
    cmp(a.node, b.node) ||
    (a.vmid ?? 0) - (b.vmid ?? 0) ||
    cmp(a.address, b.address) ||
    cmp(a.code, b.code) ||
    cmp(a.message, b.message)
  )
}

export function summaryOf(
  actions: readonly Action[],
  anomalies: readonly Anomaly[],
  skips: readonly Skip[],
  pending: readonly PendingChange[],
): PlanSummary {
  const counts = { create: 0, update: 0, resize: 0, power: 0, markTemplate: 0, snapshot: 0, delete: 0, download: 0 }
  // each action adds to the count its kind declares for its verb (Kind.summary)
  for (const a of actions) {
    const count = countOf(a)
    if (count !== undefined) counts[count]++
  }
  return {
    ...counts,
    anomalies: anomalies.length,
    skips: skips.length,
    pending: pending.length,
    actions: actions.length,
  }
}

/** The action a draft becomes. */
function toAction(d: Draft, dependsOn: string[], requires: string[]): Action {
  const a: Action = {
    id: d.id as string,
    address: d.address,
    kind: d.kind,
    node: d.node,
    type: d.type,
    reason: d.reason,
    diffs: d.diffs,
    disruption: d.disruption,
    tier: d.tier,
    level: d.level,
    dependsOn,
    requires,
    requests: d.requests,
  }
  if (d.name !== undefined) a.name = d.name
  if (d.vmid !== undefined) a.vmid = d.vmid
  if (d.storage !== undefined) a.storage = d.storage
  if (d.filename !== undefined) a.filename = d.filename
  if (d.digest !== undefined) a.digest = d.digest
  return a
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** prunes: guests before pools, a sub-pool before its parent (delete_pool refuses a pool that is not empty) */
const pruneRank = (a: Action): number => (a.kind === 'Pool' ? 4 - (a.address.split('/').length - 1) : 0)

export function compareActions(a: Action, b: Action): number {
  return (
    a.tier - b.tier ||
    (a.tier === 9 ? pruneRank(a) - pruneRank(b) : a.level - b.level) ||
    // within a level, the verbs' order (mark-template and restarts placed where they are safe; kit/verbs.ts)
    rankOf(a) - rankOf(b) ||
    cmp(a.node, b.node) ||
    (a.vmid ?? 0) - (b.vmid ?? 0) ||
    cmp(a.address, b.address) ||
    cmp(a.id, b.id)
  )
}
