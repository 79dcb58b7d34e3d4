/**
 * Terraform-style text for a Plan: one block per action (`+` create, `~` update, `-` delete) with the
 * per-field diff and the disruption class, then anomalies, skips, pending changes and gaps, then
 * `Plan: N to create, N to update, N to delete.` or `No changes.`. Deterministic; secrets arrive as
 * `(sensitive)` from the planner and every line passes the redactor anyway.
 */
import type { Action, ActionType, FieldDiff, Plan } from '@proxops/planner'
import type { Paint } from './color.js'

export type Symbol = '+' | '~' | '-'

const CREATE: ReadonlySet<ActionType> = new Set(['create', 'clone', 'download'])

export function symbolOf(type: ActionType): Symbol {
  if (CREATE.has(type)) return '+'
  if (type === 'delete') return '-'
  return '~'
}

const VERB: Readonly<Record<ActionType, string>> = {
  create: 'will be created',
  clone: 'will be cloned',
  download: 'will be downloaded',
  update: 'will be updated in place',
  'shutdown-then-update': 'will be updated, shut down and started again',
  resize: 'will have a disk grown',
  restart: 'will be restarted to apply pending changes',
  start: 'will be started',
  stop: 'will be stopped',
  'mark-template': 'will be marked as a template',
  delete: 'will be deleted (prune)',
}

export interface Counts {
  create: number
  update: number
  delete: number
}

export function countActions(actions: readonly Action[]): Counts {
  const counts = { create: 0, update: 0, delete: 0 }
  for (const action of actions) {
    const symbol = symbolOf(action.type)
    if (symbol === '+') counts.create++
    else if (symbol === '-') counts.delete++
    else counts.update++
  }
  return counts
}

export function summaryLine(plan: Pick<Plan, 'actions'>): string {
  if (plan.actions.length === 0) return 'No changes. PVE matches git.'
  const c = countActions(plan.actions)
  return `Plan: ${c.create} to create, ${c.update} to update, ${c.delete} to delete.`
}

function quoteValue(value: string): string {
  return value === '(sensitive)' ? value : JSON.stringify(value)
}

export function diffLine(diff: FieldDiff): { symbol: Symbol; text: string } {
  const label = flat(diff.field === diff.key || !diff.key ? diff.field : `${diff.field} (${diff.key})`)
  if (diff.before === undefined && diff.after !== undefined)
    return { symbol: '+', text: `${label} = ${quoteValue(diff.after)}` }
  if (diff.after === undefined && diff.before !== undefined)
    return { symbol: '-', text: `${label} = ${quoteValue(diff.before)}` }
  return { symbol: '~', text: `${label}: ${quoteValue(diff.before ?? '')} -> ${quoteValue(diff.after ?? '')}` }
}

/** Free text from PVE or manifests on one line: a newline must not forge a plan line. */
function flat(text: string): string {
  return text.replace(/[\r\n]+/g, ' ')
}

function colourFor(symbol: Symbol, p: Paint): (s: string) => string {
  return symbol === '+' ? p.green : symbol === '-' ? p.red : p.yellow
}

export function renderPlanText(plan: Plan, p: Paint): string {
  const lines: string[] = []
  const commit = plan.commit ? ` at ${plan.commit.slice(0, 12)}` : ''
  lines.push(p.bold(`Cluster ${plan.cluster}${commit}`))
  if (plan.actions.length > 0) {
    lines.push('', 'ProxOps will perform the following actions:')
    for (const action of plan.actions) {
      const symbol = symbolOf(action.type)
      const colour = colourFor(symbol, p)
      const disruption = action.disruption !== 'none' ? ` (disruption: ${action.disruption})` : ''
      lines.push('', `  # ${action.address} ${VERB[action.type]}${disruption}`)
      if (action.reason) lines.push(p.dim(`  # ${flat(action.reason)}`))
      lines.push(colour(`  ${symbol} ${action.address}`))
      for (const diff of action.diffs) {
        const line = diffLine(diff)
        lines.push(colourFor(line.symbol, p)(`      ${line.symbol} ${line.text}`))
      }
    }
  }
  if (plan.anomalies.length > 0) {
    lines.push('', p.magenta(`Anomalies (${plan.anomalies.length}; reported, never acted on):`))
    for (const a of plan.anomalies)
      lines.push(p.magenta(`  ! ${a.address ? `${a.address}: ` : ''}${flat(a.message)} [${a.code}]`))
  }
  if (plan.skips.length > 0) {
    lines.push('', `Skipped (${plan.skips.length}):`)
    for (const s of plan.skips) lines.push(`  ${s.address}: ${flat(s.message)} [${s.code}]`)
  }
  if (plan.pending.length > 0) {
    lines.push('', `Pending in PVE until the next restart (${plan.pending.length}):`)
    for (const c of plan.pending) lines.push(`  ${c.address}: ${c.keys.join(', ')} (${flat(c.message)})`)
  }
  if (plan.gaps.length > 0) {
    lines.push('', `Gaps (${plan.gaps.length}; not modelled, see docs/GAPS.md):`)
    for (const g of plan.gaps) lines.push(`  ${g.address} ${g.field}: ${flat(g.note)}`)
  }
  lines.push('', p.bold(summaryLine(plan)))
  return `${lines.join('\n')}\n`
}
