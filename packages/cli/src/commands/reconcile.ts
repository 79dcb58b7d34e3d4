/** diff, apply and status: one cycle per selected cluster, in name order; an abort never stops the others. */
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { convergence, type Plan, type Report } from '@proxops/planner'
import type { ClientNotice } from '@proxops/pve-client'
import { CliError, oneLine } from '../errors.js'
import { renderPlanMarkdown } from '../render/plan-markdown.js'
import { renderPlanText } from '../render/plan-text.js'
import { renderReport, renderStatus } from '../render/status-text.js'
import { applyProgress, noticeLine, type ApplyProgress } from '../render/progress.js'
import type { Paint } from '../render/color.js'
import { clientHooks, fullClient, readOnlyClient } from '../runtime/clients.js'
import { err, out, type CliContext } from '../runtime/context.js'
import { runCycle, twinGuard, type CycleOutcome } from '../runtime/cycle.js'
import type { SourceTree } from '../runtime/source.js'
import { canonicalJson } from '../render/json.js'
import { STATUS_FORMAT_VERSION, type ClusterCycle } from '../status-model.js'
import { allowEmpty, painter, parsePlanSet, planSetJson, prepare, type GlobalArgs, type Prepared } from './common.js'

export interface PlanArgs extends GlobalArgs {
  cluster?: string
  output?: 'text' | 'json' | 'markdown'
  'allow-empty'?: string[]
}

/**
 * The text plan names an aborted cluster and leaves the reason to its one error line on stderr, so a terminal
 * shows the error once; a markdown comment is read elsewhere, so it keeps the reason.
 */
function renderAborted(cluster: string, reason: string, format: 'text' | 'json' | 'markdown'): string {
  if (format === 'markdown') return `### ProxOps plan for cluster \`${cluster}\`\n\n**ABORTED:** ${reason}\n`
  return `Cluster ${cluster}\n\nABORTED: not planned (the error is on stderr)\n`
}

function renderPlan(plan: Plan, format: 'text' | 'markdown', p: Paint): string {
  return format === 'markdown' ? renderPlanMarkdown(plan) : renderPlanText(plan, p)
}

/** Dry cycles for every selected cluster through the read-only client. */
async function dryCycles(
  ctx: CliContext,
  prepared: Prepared,
  tree: SourceTree,
  args: PlanArgs,
): Promise<CycleOutcome[]> {
  const outcomes: CycleOutcome[] = []
  const blocked = await twinGuard(ctx, prepared.config)
  for (const cluster of prepared.config.clusters) {
    const reader = readOnlyClient(cluster, prepared.config, clientHooks(ctx))
    try {
      const sops = prepared.sops.get(cluster.name)
      const twin = blocked.get(cluster.name)
      outcomes.push(
        await runCycle(ctx, {
          ...(twin !== undefined ? { blocked: twin } : {}),
          cluster,
          config: prepared.config,
          tree,
          reader,
          ...(sops ? { sops } : {}),
          pruneBudget: prepared.config.reconcile.pruneBudget,
          allowEmpty: allowEmpty(args['allow-empty']),
        }),
      )
    } finally {
      await reader.close()
    }
  }
  return outcomes
}

function reportAborts(ctx: CliContext, outcomes: readonly CycleOutcome[]): boolean {
  let aborted = false
  for (const o of outcomes) {
    if (!o.error) continue
    aborted = true
    err(ctx, `proxops: error: ${oneLine(o.error.message)}\n`)
  }
  return aborted
}

export async function diffHandler(
  ctx: CliContext,
  args: PlanArgs & { 'detailed-exitcode'?: boolean; out?: string },
): Promise<number> {
  const prepared = await prepare(ctx, args, args.cluster !== undefined ? { cluster: args.cluster } : {})
  // a plan file saved into the work tree is not desired state: leave it out of the revision it records
  const tree = await prepared.source.sync(args.out !== undefined ? { ignore: [path.resolve(ctx.cwd, args.out)] } : {})
  const outcomes = await dryCycles(ctx, prepared, tree, args)
  const format = args.output ?? 'text'
  const plans = outcomes.flatMap((o) => (o.plan ? [o.plan] : []))
  // redacted before serialising: a secret seen in a live value never reaches the file or the JSON
  const redacted = plans.map((p) => ctx.redactor.strings(p))
  if (format === 'json') {
    const aborted = outcomes
      .filter((o) => o.error)
      .map((o) => ({ cluster: o.cycle.cluster, reason: o.cycle.abortReason ?? 'unknown' }))
    // aborted clusters are listed beside the plans (the file written by --out never has them)
    out(
      ctx,
      aborted.length === 0
        ? planSetJson(tree.commit, redacted)
        : canonicalJson({
            ...(JSON.parse(planSetJson(tree.commit, redacted)) as object),
            aborted: ctx.redactor.strings(aborted),
          }),
    )
  } else {
    const p = painter(ctx, args)
    out(
      ctx,
      outcomes
        .map((o) =>
          o.plan
            ? renderPlan(ctx.redactor.strings(o.plan), format, p)
            : renderAborted(o.cycle.cluster, o.cycle.abortReason ?? 'unknown', format),
        )
        .join('\n'),
    )
  }
  const aborted = reportAborts(ctx, outcomes)
  if (args.out !== undefined) {
    if (aborted) throw new CliError('PLAN_FILE', `not writing ${args.out}: a cluster aborted (see above)`)
    writeFileSync(path.resolve(ctx.cwd, args.out), planSetJson(tree.commit, redacted), { mode: 0o600 })
    ctx.log.info('plan saved', { file: args.out, commit: tree.commit, clusters: plans.map((p) => p.cluster) })
  }
  if (aborted) return 1
  // 2 whenever PVE does not match git: changes to make, or objects blocked
  if (args['detailed-exitcode'] && plans.some((p) => !convergence(p).converged)) return 2
  return 0
}

/**
 * `apply --plan` over several clusters: every cluster's part of the saved plan is checked against the repository
 * and live PVE (a dry cycle each, through the read-only client) before the first write, so a saved plan applies
 * whole or not at all; a stale part refuses the others too. Each part is checked again at its own turn (a cluster
 * can still change while another one is applied), and refused then without writing.
 */
async function checkSavedParts(
  ctx: CliContext,
  prepared: Prepared,
  tree: SourceTree,
  saved: ReadonlyMap<string, Plan>,
  blocked: ReadonlyMap<string, string>,
  args: PlanArgs & { plan?: string },
): Promise<void> {
  const refused: CycleOutcome[] = []
  for (const cluster of prepared.config.clusters) {
    const savedPlan = saved.get(cluster.name)
    if (!savedPlan) continue
    const reader = readOnlyClient(cluster, prepared.config, clientHooks(ctx))
    try {
      const sops = prepared.sops.get(cluster.name)
      const twin = blocked.get(cluster.name)
      const outcome = await runCycle(ctx, {
        ...(twin !== undefined ? { blocked: twin } : {}),
        cluster,
        config: prepared.config,
        tree,
        reader,
        ...(sops ? { sops } : {}),
        pruneBudget: prepared.config.reconcile.pruneBudget,
        allowEmpty: allowEmpty(args['allow-empty']),
        savedPlan,
      })
      if (outcome.error) refused.push(outcome)
    } finally {
      await reader.close()
    }
  }
  if (refused.length === 0) return
  reportAborts(ctx, refused)
  throw new CliError(
    'PLAN_MISMATCH',
    `nothing was applied: the saved plan ${args.plan ?? ''} is refused for cluster${refused.length > 1 ? 's' : ''} ${refused.map((o) => o.cycle.cluster).join(', ')} (see above), and a saved plan applies whole or not at all; run proxops diff --out ${args.plan ?? '<file>'} again`,
  )
}

export async function applyHandler(
  ctx: CliContext,
  args: PlanArgs & { plan?: string; yes?: boolean; 'dry-run'?: boolean },
): Promise<number> {
  if (args['dry-run']) return diffHandler(ctx, args)
  // nobody can answer the question: without --yes nothing is applied (as Terraform does)
  if (!args.yes && !(ctx.io.stdinIsTty && ctx.io.confirm)) {
    throw new CliError(
      'USAGE',
      'apply needs --yes when stdin is not a terminal (review the plan with proxops diff first); nothing was applied',
    )
  }
  const prepared = await prepare(ctx, args, args.cluster !== undefined ? { cluster: args.cluster } : {})
  const tree = await prepared.source.sync(args.plan !== undefined ? { ignore: [path.resolve(ctx.cwd, args.plan)] } : {})
  const p = painter(ctx, args)
  let saved: Map<string, Plan> | undefined
  if (args.plan !== undefined) {
    const file = path.resolve(ctx.cwd, args.plan)
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (error) {
      throw new CliError('PLAN_FILE', `cannot read ${args.plan}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`)
    }
    const set = parsePlanSet(text, args.plan)
    if (set.commit !== tree.commit) {
      throw new CliError(
        'PLAN_MISMATCH',
        `the saved plan was made at commit ${set.commit}, the repository is now at ${tree.commit}; run proxops diff --out ${args.plan} again`,
      )
    }
    const configured = new Set(prepared.config.clusters.map((c) => c.name))
    for (const plan of set.plans) {
      if (args.cluster === undefined && !configured.has(plan.cluster)) {
        throw new CliError(
          'PLAN_FILE',
          `${args.plan} holds a plan for cluster "${plan.cluster}", which is not configured`,
        )
      }
    }
    saved = new Map(set.plans.map((plan) => [plan.cluster, plan]))
  }
  // a person at a terminal (stdin) is asked, wherever stderr goes; pipelines and CI are not
  const interactive = Boolean(ctx.io.stdinIsTty && ctx.io.confirm) && !args.yes
  const json = args.output === 'json'
  // with --output json stdout carries one JSON document; the human text goes to stderr
  const show = (text: string): void => (json ? err(ctx, text) : out(ctx, text))
  const cycles: ClusterCycle[] = []
  const reports: Report[] = []
  let failed = false
  const blocked = await twinGuard(ctx, prepared.config)
  if (saved) await checkSavedParts(ctx, prepared, tree, saved, blocked, args)
  for (const cluster of prepared.config.clusters) {
    if (saved && !saved.has(cluster.name)) continue
    // after a stop (Ctrl-C) no further cluster is started
    if (ctx.signal.aborted) {
      err(ctx, `Cluster ${cluster.name}: not started (stopping).\n`)
      failed = true
      continue
    }
    // the client's retries and waits reach the progress view while it runs, the log otherwise
    let progress: ApplyProgress | undefined
    const onNotice = (notice: ClientNotice): void =>
      progress ? progress.onNotice(notice) : err(ctx, `${noticeLine(notice)}\n`)
    const client = fullClient(cluster, prepared.config, clientHooks(ctx, { onNotice }))
    try {
      const sops = prepared.sops.get(cluster.name)
      const twin = blocked.get(cluster.name)
      const base = {
        ...(twin !== undefined ? { blocked: twin } : {}),
        cluster,
        config: prepared.config,
        tree,
        ...(sops ? { sops } : {}),
        pruneBudget: prepared.config.reconcile.pruneBudget,
        allowEmpty: allowEmpty(args['allow-empty']),
      }
      let savedPlan = saved?.get(cluster.name)
      if (interactive) {
        // show what will happen and ask; then run exactly that plan (re-checked against live)
        let dry: CycleOutcome | undefined
        if (!savedPlan) {
          dry = await runCycle(ctx, { ...base, reader: client.readOnly() })
          if (dry.error || !dry.plan) {
            cycles.push(dry.cycle)
            reportAborts(ctx, [dry])
            failed = true
            continue
          }
          savedPlan = dry.plan
        }
        show(renderPlanText(ctx.redactor.strings(savedPlan), p))
        if (savedPlan.actions.length === 0) {
          cycles.push(dry?.cycle ?? (await runCycle(ctx, { ...base, reader: client.readOnly() })).cycle)
          continue
        }
        const yes = await ctx.io.confirm?.(
          `Apply these ${savedPlan.actions.length} action(s) to cluster ${cluster.name}? Only 'yes' is accepted: `,
        )
        if (!yes) {
          err(ctx, `Apply cancelled for cluster ${cluster.name}.\n`)
          failed = true
          continue
        }
      }
      const view = await applyProgress({
        cluster: cluster.name,
        total: savedPlan?.actions.length ?? 0,
        stream: ctx.io.stderr,
        paint: p,
        now: ctx.now,
        clean: (text) => ctx.redactor.text(text),
      })
      progress = view
      // a stop asked for now is said above the live block (a line written past it would be erased by its redraw)
      const announce = ctx.announceStop
      ctx.announceStop = (line) => view.stopping(line)
      let outcome: CycleOutcome
      try {
        outcome = await runCycle(ctx, {
          ...base,
          reader: client,
          writer: client,
          onProgress: (event) => view.onProgress(event),
          onPlan: (plan) => view.setTotal(plan.actions.length),
          // the live block redraws every second by itself; in logs a line per running task every 10 s
          progressIntervalMs: ctx.io.stderr.isTTY ? 1000 : 10_000,
          ...(savedPlan ? { savedPlan } : {}),
        })
      } finally {
        view.close()
        ctx.announceStop = announce
        progress = undefined
      }
      cycles.push(outcome.cycle)
      if (outcome.error) {
        reportAborts(ctx, [outcome])
        failed = true
        continue
      }
      if (outcome.report) {
        reports.push(outcome.report)
        if (!json) out(ctx, renderReport(ctx.redactor.strings(outcome.report), p))
      }
      if (outcome.cycle.result !== 'converged') failed = true
    } finally {
      await client.close()
    }
  }
  if (json) out(ctx, canonicalJson(ctx.redactor.strings({ format_version: STATUS_FORMAT_VERSION, cycles, reports })))
  else out(ctx, renderStatus(ctx.redactor.strings(cycles), p))
  return failed ? 1 : 0
}

export async function statusHandler(ctx: CliContext, args: PlanArgs): Promise<number> {
  const prepared = await prepare(ctx, args, args.cluster !== undefined ? { cluster: args.cluster } : {})
  const tree = await prepared.source.sync()
  const outcomes = await dryCycles(ctx, prepared, tree, args)
  const cycles = outcomes.map((o) => o.cycle)
  if (args.output === 'json')
    out(
      ctx,
      canonicalJson(ctx.redactor.strings({ format_version: STATUS_FORMAT_VERSION, commit: tree.commit, cycles })),
    )
  else out(ctx, renderStatus(cycles, painter(ctx, args)))
  return reportAborts(ctx, outcomes) ? 1 : 0
}
