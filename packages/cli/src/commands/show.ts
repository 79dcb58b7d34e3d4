/**
 * `show <planfile>`: a plan set saved by `diff --out`, rendered as `diff` renders it (Terraform's `show plan`). Reads
 * the file only: no repository, no configuration, no PVE.
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { CliError } from '../errors.js'
import { renderPlanMarkdown } from '../render/plan-markdown.js'
import { renderPlanText, shortRevision } from '../render/plan-text.js'
import { structured } from '../render/yaml.js'
import { out, type CliContext } from '../runtime/context.js'
import { painter, parsePlanSet, planSetJson, type GlobalArgs } from './common.js'

export interface ShowArgs extends GlobalArgs {
  planfile: string
  output?: 'text' | 'json' | 'yaml' | 'markdown'
}

export function showHandler(ctx: CliContext, args: ShowArgs): number {
  let text: string
  try {
    text = readFileSync(path.resolve(ctx.cwd, args.planfile), 'utf8')
  } catch (error) {
    throw new CliError('PLAN_FILE', `cannot read ${args.planfile}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`)
  }
  const set = parsePlanSet(text, args.planfile)
  const format = args.output ?? 'text'
  if (format === 'json' || format === 'yaml') {
    out(ctx, structured(planSetJson(set.commit, set.plans, set.targets), format))
    return 0
  }
  if (format === 'markdown') {
    out(ctx, set.plans.map((plan) => renderPlanMarkdown(plan, set.targets)).join('\n'))
    return 0
  }
  const clusters = set.plans.map((plan) => plan.cluster)
  const head = [
    `Saved plan ${args.planfile}: commit ${shortRevision(set.commit)}, ${clusters.length === 1 ? 'cluster' : 'clusters'} ${clusters.join(', ') || '(none)'}`,
    ...(set.targets ? [`Narrowed to --target ${set.targets.join(' --target ')}`] : []),
    `Apply exactly this with: proxops apply --plan ${args.planfile}`,
    '',
  ]
  const p = painter(ctx, args)
  out(ctx, [head.join('\n'), ...set.plans.map((plan) => renderPlanText(plan, p, set.targets))].join('\n'))
  return 0
}
