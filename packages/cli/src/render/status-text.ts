/**
 * The status report printed by `status` and at the end of `apply`: a summary line per cluster,
 * the counters, then one row per object. Deterministic (no timestamps).
 */
import { describeAction, type ActionResult, type Report } from '@proxops/planner'
import type { ClusterCycle, ObjectStatus, UnmanagedKey } from '../status-model.js'
import type { Paint } from './color.js'
import { safeLine as flat, safeValue } from '../safe-text.js'
import { blockedPhrase, shortRevision } from './plan-text.js'

function pad(text: string, width: number): string {
  return text.length >= width ? `${text} ` : text.padEnd(width)
}

export function cycleHeadline(cycle: ClusterCycle): string {
  const commit = cycle.commit ? ` (commit ${shortRevision(cycle.commit)})` : ''
  switch (cycle.result) {
    case 'aborted':
      // the reason is the command's error line on stderr: printed once (JSON carries it as abortReason)
      return `ABORTED (the error is on stderr)${commit}`
    case 'incomplete': {
      const n = cycle.actions.failed
      return `incomplete (${n} failed action${n === 1 ? '' : 's'}, ${cycle.actions.skipped} skipped)${commit}`
    }
    case 'drift': {
      const blocked = cycle.blocked > 0 ? `; ${blockedPhrase(cycle.blockedByReason)}` : ''
      return `drift (${cycle.actions.planned} action${cycle.actions.planned === 1 ? '' : 's'} planned${blocked})${commit}`
    }
    case 'blocked':
      return `blocked (${blockedPhrase(cycle.blockedByReason)})${commit}`
    default:
      // a --target cycle saw only its objects: they converged, not (as far as it knows) the cluster
      return cycle.targets === undefined
        ? `converged${commit}`
        : `targeted objects converged (--target ${cycle.targets.join(' --target ')}); the rest of the cluster was not planned${commit}`
  }
}

export function renderStatus(raw: readonly ClusterCycle[], p: Paint): string {
  const lines: string[] = []
  // names, keys and texts from PVE and git: no terminal control, whichever field shows them
  for (const cycle of safeValue(raw)) {
    const headline =
      cycle.targets === undefined || cycle.result === 'converged'
        ? cycleHeadline(cycle)
        : `${cycleHeadline(cycle)}; partial (--target ${cycle.targets.join(' --target ')})`
    const colour = cycle.result === 'converged' ? p.green : cycle.result === 'drift' ? p.yellow : p.red
    lines.push(p.bold(`[${cycle.cluster}]`) + ' ' + colour(headline))
    if (cycle.desiredStale) lines.push(p.red('  DESIRED STATE IS STALE (git fetch has been failing)'))
    lines.push(
      `  objects=${cycle.objects.length} actions_ok=${cycle.actions.ok} actions_err=${cycle.actions.failed} pruned=${cycle.pruned} prune_deferred=${cycle.pruneDeferred} skipped=${cycle.skips} anomalies=${cycle.anomalies} blocked=${cycle.blocked} unmanaged=${cycle.unmanaged}`,
    )
    if (cycle.result !== 'aborted' && cycle.objects.length === 0) lines.push('  (no objects)')
    for (const o of cycle.objects) {
      const reason = o.state === 'converged' ? '' : `${o.blocked ? `${o.blocked}: ` : ''}${flat(o.reason ?? '')}`
      const error = o.error ? ` [err: ${flat(o.error)}]` : ''
      lines.push(
        `  ${pad(o.kind, 11)}${pad(o.name, 40)}${pad(o.vmid !== undefined ? String(o.vmid) : '-', 10)}${pad(o.state, 12)}${reason}${error}`.trimEnd(),
      )
      if (o.placedOn !== undefined) lines.push(`      on node ${o.placedOn}: ${flat(o.reason ?? '')}`)
      lines.push(...unmanagedLines(o.unmanaged ?? [], p))
    }
    lines.push('')
  }
  return lines.join('\n')
}

/**
 * `status KIND/name`: the object in each cluster that declares it (`kubectl describe`-like): its state and why, the
 * actions the plan has for it, its unmanaged live keys.
 */
export function renderObjectStatus(
  raw: ReadonlyArray<{ cycle: ClusterCycle; object: ObjectStatus; addresses: readonly string[] }>,
  p: Paint,
): string {
  const lines: string[] = []
  for (const { cycle, object: o, addresses } of safeValue(raw)) {
    const colour =
      o.state === 'converged' ? p.green : o.state === 'drift' || o.state === 'in_progress' ? p.yellow : p.red
    lines.push(`${p.bold(`${o.kind}/${o.name}`)} in cluster ${cycle.cluster}: ${colour(o.state)}`)
    const where = [o.node ? `node ${o.node}` : '', o.vmid !== undefined ? `vmid ${o.vmid}` : ''].filter(Boolean)
    if (where.length > 0) lines.push(`  ${where.join(', ')}`)
    if (o.state !== 'converged' && o.reason) lines.push(`  ${o.blocked ? `${o.blocked}: ` : ''}${flat(o.reason)}`)
    if (o.error) lines.push(`  error: ${flat(o.error)}`)
    for (const a of cycle.plannedActions)
      if (addresses.includes(a.address))
        lines.push(
          `  ${describeAction(a).label}: ${flat(a.reason)}${a.disruption !== 'none' ? ` (disruption: ${a.disruption})` : ''}`,
        )
    lines.push(...unmanagedLines(o.unmanaged ?? [], p))
    lines.push('')
  }
  return lines.join('\n')
}

/**
 * An object's unmanaged live keys under its row: the ordinary ones on one line, each key that changes what the
 * guest or its host executes on a line of its own with what it does (docs/safety.md, unmanaged live keys).
 */
function unmanagedLines(keys: readonly UnmanagedKey[], p: Paint): string[] {
  const plain = keys.filter((k) => k.executes === undefined).map((k) => k.key)
  const lines = plain.length > 0 ? [`      unmanaged (set on PVE, not in git): ${plain.join(', ')}`] : []
  for (const k of keys)
    if (k.executes !== undefined)
      lines.push(p.red(`      UNMANAGED, EXECUTES: ${k.key}: ${flat(k.executes)}; review it`))
  return lines
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`
}

export function resultLine(r: ActionResult, p: Paint): string {
  // what the action saw and left alone (a lookalike snapshot), under its line
  const notes = (r.notes ?? []).map((n) => `\n${p.yellow(`    note: ${flat(n)}`)}`).join('')
  const address = flat(r.address)
  if (r.status === 'ok')
    return p.green(`  ok      ${address} ${describeAction(r).label} (${seconds(r.durationMs)})`) + notes
  if (r.status === 'failed')
    return (
      p.red(
        `  FAILED  ${address} ${describeAction(r).label} (${seconds(r.durationMs)}): ${flat(r.error ?? 'unknown error')}`,
      ) + notes
    )
  return p.yellow(`  skipped ${address} ${describeAction(r).label}: ${flat(r.skip?.reason ?? 'not run')}`)
}

export function renderReport(report: Report, p: Paint): string {
  const s = report.summary
  const head = `Apply ${report.complete ? 'complete' : report.cancelled ? 'cancelled' : 'incomplete'} for cluster ${flat(report.cluster)}: ${s.ok} ok, ${s.failed} failed, ${s.skipped} skipped.`
  return [p.bold(head), ...report.results.map((r) => resultLine(r, p)), ''].join('\n')
}
