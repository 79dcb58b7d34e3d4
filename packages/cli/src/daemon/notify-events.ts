/**
 * What the daemon tells people (docs/operations.md, "Notifications"): one event per change of state between two
 * cycles of a cluster, never one per cycle. A cycle that fails (aborted, or actions failed) after one that did not,
 * and the recovery after; an object that becomes blocked; drift that appears (an object changed to match git, or
 * found drifting) and clears; an object pruned. Pure.
 */
import type { ClusterCycle, ObjectStatus } from '../status-model.js'

export type NotifyKind = 'cycle-failed' | 'recovery' | 'blocked' | 'drift' | 'drift-cleared' | 'pruned'

export interface NotifyEvent {
  kind: NotifyKind
  cluster: string
  /** `KIND/name`, for an object's event */
  object?: string
  /** one line for a person */
  message: string
}

const failed = (c: ClusterCycle | undefined): boolean => c?.result === 'aborted' || c?.result === 'incomplete'
const key = (o: ObjectStatus): string => `${o.kind}/${o.name}`
/** drifting this cycle: found different from git, or changed to match it */
const drifting = (o: ObjectStatus): boolean =>
  o.state === 'drift' || (o.state === 'converged' && o.action !== undefined)

export function stateChanges(prev: ClusterCycle | undefined, next: ClusterCycle): NotifyEvent[] {
  const cluster = next.cluster
  const out: NotifyEvent[] = []
  if (failed(next) && !failed(prev))
    out.push({
      kind: 'cycle-failed',
      cluster,
      message: `cluster ${cluster}: cycle ${next.result}${next.abortReason ? `: ${next.abortReason}` : ` (${next.actions.failed} actions failed)`}`,
    })
  if (!failed(next) && failed(prev))
    out.push({
      kind: 'recovery',
      cluster,
      message: `cluster ${cluster}: recovered, the last cycle ended ${next.result}`,
    })
  // an aborted cycle read nothing: it says nothing about objects
  if (next.result === 'aborted') return out
  const before = new Map((prev?.result === 'aborted' ? [] : (prev?.objects ?? [])).map((o) => [key(o), o]))
  for (const o of next.objects) {
    const was = before.get(key(o))
    const object = key(o)
    if (o.state === 'blocked' && (was?.state !== 'blocked' || was.blocked !== o.blocked))
      out.push({
        kind: 'blocked',
        cluster,
        object,
        message: `cluster ${cluster}: ${object} is blocked (${o.blocked ?? 'blocked'}): ${o.reason ?? ''}`.trimEnd(),
      })
    if (o.state === 'pruned')
      out.push({ kind: 'pruned', cluster, object, message: `cluster ${cluster}: ${object} was pruned (it left git)` })
    // the daemon's first cycle knows no earlier state: what it creates or corrects then is no news
    else if (prev !== undefined && drifting(o) && !(was && drifting(was)))
      out.push({
        kind: 'drift',
        cluster,
        object,
        message: `cluster ${cluster}: ${object} drifted from git${o.action !== undefined ? ` (${o.action}${o.state === 'converged' ? ', corrected' : ''})` : ''}`,
      })
    else if (was && drifting(was) && o.state === 'converged' && o.action === undefined)
      out.push({ kind: 'drift-cleared', cluster, object, message: `cluster ${cluster}: ${object} matches git again` })
  }
  return out
}
