/**
 * Markdown for a pull-request comment: a heading and summary per cluster, a table of actions, the field
 * diffs in a collapsible `diff` block, then anomalies, skips and gaps as lists.
 */
import { describeAction, type Plan } from '@proxops/planner'
import { safeLine } from '../safe-text.js'
import { diffLine, summaryLine, symbolOf } from './plan-text.js'

function cell(text: string): string {
  return safeLine(text).replace(/\\/g, '\\\\').replace(/\|/g, '\\|')
}

function code(text: string): string {
  const ticks = text.includes('`') ? '``' : '`'
  return `${ticks}${safeLine(text)}${ticks}`
}

export function renderPlanMarkdown(plan: Plan, targets?: readonly string[]): string {
  const out: string[] = []
  out.push(`### ProxOps plan for cluster ${code(plan.cluster)}`, '')
  if (plan.commit) out.push(`Commit ${code(plan.commit)}`, '')
  out.push(`**${summaryLine(plan, targets)}**`, '')
  if (plan.actions.length > 0) {
    out.push('| | Address | Action | Disruption | Reason |', '|---|---|---|---|---|')
    for (const a of plan.actions) {
      const { symbol, label } = describeAction(a)
      out.push(`| ${symbol} | ${cell(code(a.address))} | ${label} | ${a.disruption} | ${cell(a.reason)} |`)
    }
    out.push('')
    const withDiffs = plan.actions.filter((a) => a.diffs.length > 0)
    if (withDiffs.length > 0) {
      out.push('<details><summary>Field changes</summary>', '', '```diff')
      for (const a of withDiffs) {
        out.push(`${symbolOf(a) === '~' ? '!' : symbolOf(a)} ${safeLine(a.address)}`)
        for (const d of a.diffs) {
          const line = diffLine(d)
          out.push(`${line.symbol === '~' ? '!' : line.symbol}   ${line.text}`)
        }
      }
      out.push('```', '', '</details>', '')
    }
  }
  const section = (title: string, items: string[]): void => {
    if (items.length === 0) return
    out.push(`**${title} (${items.length})**`, '', ...items.map((i) => `- ${i}`), '')
  }
  section(
    'Anomalies',
    plan.anomalies.map((a) => `${a.address ? `${code(a.address)}: ` : ''}${safeLine(a.message)} (${a.code})`),
  )
  section(
    'Skipped',
    plan.skips.map((s) => `${code(s.address)}: ${safeLine(s.message)} (${s.code})`),
  )
  section(
    'Pending until restart',
    plan.pending.map((c) => `${code(c.address)}: ${safeLine(c.keys.join(', '))}`),
  )
  section(
    'Gaps',
    plan.gaps.map((g) => `${code(g.address)} ${code(g.field)}: ${safeLine(g.note)}`),
  )
  return `${out.join('\n').trimEnd()}\n`
}
