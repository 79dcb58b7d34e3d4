/**
 * Terraform-style text for a Plan: one block per action (`+` create, `~` update, `-` delete) with the
 * per-field diff and the disruption class, then anomalies, skips, pending changes and gaps, then
 * `Plan: N to create, N to update, N to delete.` or `No changes.`. Deterministic; secrets arrive as
 * `(sensitive)` from the planner and every line passes the redactor anyway.
 */
import { SENSITIVE } from '@proxops/pve-client/wire'
import {
  blockedCount,
  convergence,
  describeAction,
  describeBlocked,
  type Action,
  type FieldDiff,
  type Plan,
} from '@proxops/planner'
import { safeLine as flat } from '../safe-text.js'
import type { Paint } from './color.js'

export type Symbol = '+' | '~' | '-'

/** `+` create, `~` change, `-` delete: what the action's kind counts it as (the planner's describeAction) */
export function symbolOf(action: Pick<Action, 'kind' | 'type' | 'address'>): Symbol {
  return describeAction(action).symbol
}

export interface Counts {
  create: number
  update: number
  delete: number
}

export function countActions(actions: readonly Action[]): Counts {
  const counts = { create: 0, update: 0, delete: 0 }
  for (const action of actions) {
    const symbol = symbolOf(action)
    if (symbol === '+') counts.create++
    else if (symbol === '-') counts.delete++
    else counts.update++
  }
  return counts
}

/** A commit for a header; a revision with uncommitted edits (`<sha>-dirty-<hash>`, see git.ts) says so. */
export function shortRevision(commit: string): string {
  return `${commit.slice(0, 12)}${commit.includes('-dirty-') ? ' + uncommitted changes (dirty work tree)' : ''}`
}

/** `N objects blocked: node-offline 2, prune-deferred 1` */
export function blockedPhrase(byReason: Parameters<typeof describeBlocked>[0]['byReason']): string {
  const n = blockedCount({ byReason })
  return `${n} object${n === 1 ? '' : 's'} blocked: ${describeBlocked({ byReason })}`
}

/**
 * The plan's last line: "No changes. PVE matches git." only when that is true (see convergence()). A plan narrowed
 * with `--target` (`targets`) says so and never that PVE matches git: it did not look at the rest of the cluster.
 */
export function summaryLine(plan: Plan, targets?: readonly string[]): string {
  const state = convergence(plan)
  if (state.converged)
    return targets === undefined
      ? 'No changes. PVE matches git.'
      : `No changes to ${targets.join(', ')} and what they depend on. ${partialNote(targets)}`
  const blocked = state.blocked.length > 0 ? blockedPhrase(state.byReason) : ''
  const partial = targets === undefined ? '' : ` ${partialNote(targets)}`
  if (plan.actions.length === 0) return `No actions possible; ${blocked}.${partial}`
  const c = countActions(plan.actions.filter((a) => a.type !== 'snapshot'))
  const snapshots = plan.actions.filter((a) => a.type === 'snapshot').length
  const snap = snapshots === 0 ? '' : `, ${snapshots} safety snapshot${snapshots === 1 ? '' : 's'}`
  return `Plan: ${c.create} to create, ${c.update} to update, ${c.delete} to delete${snap}${blocked ? `; ${blocked}` : ''}.${partial}`
}

/** What a `--target` plan leaves out, as Terraform's `-target` warns. */
export const partialNote = (targets: readonly string[]): string =>
  `Partial plan (--target ${targets.join(' --target ')}): the rest of the cluster was not planned.`

function quoteValue(value: string): string {
  return value === SENSITIVE ? value : JSON.stringify(value)
}

export function diffLine(diff: FieldDiff): { symbol: Symbol; text: string } {
  const label = flat(diff.field === diff.key || !diff.key ? diff.field : `${diff.field} (${diff.key})`)
  if (diff.before === undefined && diff.after !== undefined)
    return { symbol: '+', text: `${label} = ${quoteValue(diff.after)}` }
  if (diff.after === undefined && diff.before !== undefined)
    return { symbol: '-', text: `${label} = ${quoteValue(diff.before)}` }
  return { symbol: '~', text: `${label}: ${quoteValue(diff.before ?? '')} -> ${quoteValue(diff.after ?? '')}` }
}

function colourFor(symbol: Symbol, p: Paint): (s: string) => string {
  return symbol === '+' ? p.green : symbol === '-' ? p.red : p.yellow
}

export function renderPlanText(plan: Plan, p: Paint, targets?: readonly string[]): string {
  const lines: string[] = []
  const commit = plan.commit ? ` at ${shortRevision(plan.commit)}` : ''
  lines.push(p.bold(`Cluster ${flat(plan.cluster)}${flat(commit)}`))
  if (plan.actions.length > 0) {
    lines.push('', 'ProxOps will perform the following actions:')
    for (const action of plan.actions) {
      const { symbol, phrase } = describeAction(action)
      const colour = colourFor(symbol, p)
      const disruption = action.disruption !== 'none' ? ` (disruption: ${action.disruption})` : ''
      const address = flat(action.address)
      lines.push('', `  # ${address} ${phrase}${disruption}`)
      if (action.reason) lines.push(p.dim(`  # ${flat(action.reason)}`))
      lines.push(colour(`  ${symbol} ${action.type === 'snapshot' ? 'snapshot ' : ''}${address}`))
      for (const diff of action.diffs) {
        const line = diffLine(diff)
        lines.push(colourFor(line.symbol, p)(`      ${line.symbol} ${line.text}`))
      }
    }
  }
  if (plan.anomalies.length > 0) {
    lines.push('', p.magenta(`Anomalies (${plan.anomalies.length}; reported, never acted on):`))
    for (const a of plan.anomalies)
      lines.push(p.magenta(`  ! ${a.address ? `${flat(a.address)}: ` : ''}${flat(a.message)} [${a.code}]`))
  }
  if (plan.skips.length > 0) {
    lines.push('', `Skipped (${plan.skips.length}):`)
    for (const s of plan.skips) lines.push(`  ${flat(s.address)}: ${flat(s.message)} [${s.code}]`)
  }
  if (plan.pending.length > 0) {
    lines.push('', `Pending in PVE until the next restart (${plan.pending.length}):`)
    for (const c of plan.pending) lines.push(`  ${flat(c.address)}: ${flat(c.keys.join(', '))} (${flat(c.message)})`)
  }
  if (plan.gaps.length > 0) {
    lines.push('', `Gaps (${plan.gaps.length}; not modelled, see docs/GAPS.md):`)
    for (const g of plan.gaps) lines.push(`  ${flat(g.address)} ${flat(g.field)}: ${flat(g.note)}`)
  }
  lines.push('', p.bold(summaryLine(plan, targets)))
  return `${lines.join('\n')}\n`
}
