/**
 * A custom reconciler in ~50 lines: observe the cluster through any LiveReader, plan against a desired set
 * built in code, print the plan, and (unless dry-run) execute it through any PveWriter. Everything that
 * makes it safe (ownership tag, prune budget, digests, graceful shutdowns, read-back) comes from the planner.
 */
import {
  DEFAULT_POLICY,
  execute,
  observe,
  plan,
  type LiveReader,
  type Plan,
  type Policy,
  type PveWriter,
  type Report,
} from '@proxops/planner'
import type { Manifest } from '@proxops/schema'

export interface ReconcileOptions {
  cluster: string
  desired: readonly Manifest[]
  reader: LiveReader
  /** absent = dry run (plan only) */
  writer?: PveWriter
  policy?: Partial<Policy>
  /** where the plan and the results are printed (default: console.log) */
  print?: (line: string) => void
}

export interface ReconcileResult {
  plan: Plan
  report?: Report
}

export async function reconcile(options: ReconcileOptions): Promise<ReconcileResult> {
  const print = options.print ?? ((line: string) => console.log(line))
  const policy: Policy = { ...DEFAULT_POLICY, ...options.policy }
  const live = await observe(options.cluster, options.reader, { nodes: policy.nodes })
  const p = plan({ cluster: options.cluster, manifests: options.desired }, live, policy)

  print(`=== ${options.cluster}: ${p.actions.length} action(s) ===`)
  for (const action of p.actions) {
    print(`  ${action.type.padEnd(20)} ${action.address}  [${action.disruption}]  ${action.reason}`)
    for (const d of action.diffs) print(`      ${d.key}: ${d.before ?? '(unset)'} -> ${d.after ?? '(unset)'}`)
  }
  for (const skip of p.skips) print(`  skipped              ${skip.address}  ${skip.message}`)
  for (const anomaly of p.anomalies) print(`  ANOMALY              ${anomaly.message}`)
  if (!options.writer || p.actions.length === 0) return { plan: p }

  const report = await execute(p, options.writer, {
    reader: options.reader,
    onProgress: (event) => {
      if (event.type === 'action-finished') {
        const r = event.result
        print(`  ${r.status.padEnd(8)} ${r.id}${r.error ? `: ${r.error}` : ''}${r.skip ? `: ${r.skip.reason}` : ''}`)
      }
    },
  })
  print(`=== ${report.summary.ok} ok, ${report.summary.failed} failed, ${report.summary.skipped} skipped ===`)
  return { plan: p, report }
}
