/** diff, apply and status: one cycle per selected cluster, in name order; an abort never stops the others. */
import { readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { convergence, type Plan, type Report } from '@proxops/planner'
import type { ClientNotice, PveReadOnlyClient } from '@proxops/pve-client'
import { CliError, oneLine } from '../errors.js'
import { renderPlanMarkdown } from '../render/plan-markdown.js'
import { renderPlanText } from '../render/plan-text.js'
import { renderObjectStatus, renderReport, renderStatus } from '../render/status-text.js'
import { applyProgress, noticeLine, type ApplyProgress } from '../render/progress.js'
import type { Paint } from '../render/color.js'
import { clientHooks, fullClient, readOnlyClient } from '../runtime/clients.js'
import { err, out, terminalText, type CliContext } from '../runtime/context.js'
import { safeLine, safeOutput } from '../safe-text.js'
import { runCycle, twinGuard, type CycleOutcome } from '../runtime/cycle.js'
import type { SourceTree } from '../runtime/source.js'
import { canonicalJson } from '../render/json.js'
import { structured } from '../render/yaml.js'
import { loadDesired } from '../runtime/desired.js'
import { checkDeclared, parseObjectRef, sameObject, type ObjectRef } from '../runtime/targets.js'
import { STATUS_FORMAT_VERSION, type ClusterCycle, type DesiredObject } from '../status-model.js'
import { CYCLE_LOCK, isHeld, waitForLock } from '../daemon/lock.js'
import { allowEmpty, painter, parsePlanSet, planSetJson, prepare, type GlobalArgs, type Prepared } from './common.js'

export interface PlanArgs extends GlobalArgs {
  cluster?: string
  output?: 'text' | 'json' | 'yaml' | 'markdown'
  'allow-empty'?: string[]
  /** `--target KIND/name`, repeatable (diff, apply) */
  target?: string[]
  /** apply, diff: disruptive changes are planned and run outside the clusters' sync windows */
  'override-window'?: boolean
}

/** `--target` values, parsed; undefined when none is given. */
function targetRefs(values: readonly string[] | undefined): ObjectRef[] | undefined {
  return values && values.length > 0 ? values.map((v) => parseObjectRef(v, '--target')) : undefined
}

/**
 * Refuses a reference no selected cluster declares, before anything is read from PVE (its desired state loaded as
 * the cycle loads it; a cluster that cannot be loaded is left to its cycle, which says why).
 */
async function requireDeclared(
  refs: readonly ObjectRef[],
  prepared: Prepared,
  tree: SourceTree,
  what: string,
): Promise<void> {
  const declared = new Map<string, DesiredObject[]>()
  for (const cluster of prepared.config.clusters) {
    try {
      declared.set(cluster.name, (await loadDesired(tree.root, cluster.name, tree.commit)).objects)
    } catch {
      // reported by the cluster's cycle
    }
  }
  if (declared.size > 0) checkDeclared(refs, declared, what)
}

/**
 * The text plan names an aborted cluster and leaves the reason to its one error line on stderr, so a terminal
 * shows the error once; a markdown comment is read elsewhere, so it keeps the reason.
 */
function renderAborted(cluster: string, reason: string, format: 'text' | 'markdown'): string {
  if (format === 'markdown') return `### ProxOps plan for cluster \`${cluster}\`\n\n**ABORTED:** ${reason}\n`
  return `Cluster ${cluster}\n\nABORTED: not planned (the error is on stderr)\n`
}

function renderPlan(plan: Plan, format: 'text' | 'markdown', p: Paint, targets?: readonly string[]): string {
  return format === 'markdown' ? renderPlanMarkdown(plan, targets) : renderPlanText(plan, p, targets)
}

/**
 * Terraform's `-target` warning: a narrowed plan is partial. On stderr, before the plan, for diff and apply;
 * the plan's last line and the result line say it again.
 */
function warnPartial(ctx: CliContext, refs: readonly ObjectRef[] | undefined): void {
  if (refs === undefined) return
  const names = refs.map((r) => `${r.kind}/${r.name}`).join(' --target ')
  err(
    ctx,
    `warning: --target ${names}: the plan is partial; it covers only these objects and what they depend on, and changes elsewhere in the cluster are neither shown nor applied (run without --target for the whole plan)\n`,
  )
}

/**
 * What every cycle of a command reads about one cluster, whatever client it is given: the repository, the
 * cluster's SOPS file, the twin-entry guard and the prune flags.
 */
function cycleBase(
  prepared: Prepared,
  tree: SourceTree,
  blocked: ReadonlyMap<string, string>,
  cluster: Prepared['config']['clusters'][number],
  args: PlanArgs,
  targets: readonly ObjectRef[] | undefined,
) {
  const sops = prepared.sops.get(cluster.name)
  const twin = blocked.get(cluster.name)
  return {
    ...(twin !== undefined ? { blocked: twin } : {}),
    cluster,
    config: prepared.config,
    tree,
    ...(sops ? { sops } : {}),
    pruneBudget: prepared.config.reconcile.pruneBudget,
    allowEmpty: allowEmpty(args['allow-empty']),
    ...(targets ? { targets } : {}),
    ...(args['override-window'] ? { overrideWindow: true } : {}),
  }
}

/** Dry cycles for every selected cluster through the read-only client. */
async function dryCycles(
  ctx: CliContext,
  prepared: Prepared,
  tree: SourceTree,
  args: PlanArgs,
  targets?: readonly ObjectRef[],
): Promise<CycleOutcome[]> {
  const outcomes: CycleOutcome[] = []
  // one client per cluster for the twin guard and the cycle: one set of TLS connections each
  const readers = new Map(
    prepared.config.clusters.map((c) => [c.name, readOnlyClient(c, prepared.config, clientHooks(ctx))]),
  )
  try {
    const blocked = await twinGuard(ctx, prepared.config, readers)
    for (const cluster of prepared.config.clusters) {
      const reader = readers.get(cluster.name) as PveReadOnlyClient
      outcomes.push(await runCycle(ctx, { ...cycleBase(prepared, tree, blocked, cluster, args, targets), reader }))
    }
  } finally {
    await Promise.all([...readers.values()].map((r) => r.close()))
  }
  return outcomes
}

function reportAborts(ctx: CliContext, outcomes: readonly CycleOutcome[]): boolean {
  let aborted = false
  for (const o of outcomes) {
    if (!o.error) continue
    aborted = true
    err(ctx, `proxops: error: ${safeLine(oneLine(o.error.message))}\n`)
  }
  return aborted
}

export async function diffHandler(
  ctx: CliContext,
  args: PlanArgs & { 'detailed-exitcode'?: boolean; out?: string },
): Promise<number> {
  const refs = targetRefs(args.target)
  const prepared = await prepare(ctx, args, args.cluster !== undefined ? { cluster: args.cluster } : {})
  // a plan file saved into the work tree is not desired state: leave it out of the revision it records
  const tree = await prepared.source.sync(args.out !== undefined ? { ignore: [path.resolve(ctx.cwd, args.out)] } : {})
  if (refs) await requireDeclared(refs, prepared, tree, '--target')
  warnPartial(ctx, refs)
  const outcomes = await dryCycles(ctx, prepared, tree, args, refs)
  const format = args.output ?? 'text'
  const plans = outcomes.flatMap((o) => (o.plan ? [o.plan] : []))
  // redacted before serialising: a secret seen in a live value never reaches the file or the JSON
  const redacted = plans.map((p) => ctx.redactor.strings(p))
  const targets = refs?.map((r) => `${r.kind}/${r.name}`)
  if (format === 'json' || format === 'yaml') {
    const aborted = outcomes
      .filter((o) => o.error)
      .map((o) => ({ cluster: o.cycle.cluster, reason: o.cycle.abortReason ?? 'unknown' }))
    // aborted clusters are listed beside the plans (the file written by --out never has them)
    const set = planSetJson(tree.commit, redacted, targets)
    out(
      ctx,
      structured(
        aborted.length === 0
          ? set
          : canonicalJson({ ...(JSON.parse(set) as object), aborted: ctx.redactor.strings(aborted) }),
        format,
      ),
    )
  } else {
    const p = painter(ctx, args)
    out(
      ctx,
      outcomes
        .map((o) =>
          o.plan
            ? renderPlan(ctx.redactor.strings(o.plan), format, p, targets)
            : renderAborted(o.cycle.cluster, o.cycle.abortReason ?? 'unknown', format),
        )
        .join('\n'),
    )
  }
  const aborted = reportAborts(ctx, outcomes)
  if (args.out !== undefined) {
    if (aborted) throw new CliError('PLAN_FILE', `not writing ${args.out}: a cluster aborted (see above)`)
    // the same bytes `diff -o json` prints: no raw control character from PVE in a file someone may `cat`
    writeFileSync(path.resolve(ctx.cwd, args.out), safeOutput(planSetJson(tree.commit, redacted, targets)), {
      mode: 0o600,
    })
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
  targets: readonly ObjectRef[] | undefined,
): Promise<void> {
  const refused: CycleOutcome[] = []
  for (const cluster of prepared.config.clusters) {
    const savedPlan = saved.get(cluster.name)
    if (!savedPlan) continue
    const reader = readOnlyClient(cluster, prepared.config, clientHooks(ctx))
    try {
      const outcome = await runCycle(ctx, {
        ...cycleBase(prepared, tree, blocked, cluster, args, targets),
        reader,
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

type ApplyArgs = PlanArgs & { plan?: string; yes?: boolean; 'dry-run'?: boolean; 'lock-wait'?: number }

export async function applyHandler(ctx: CliContext, args: ApplyArgs): Promise<number> {
  if (args['dry-run']) return diffHandler(ctx, args)
  // nobody can answer the question: without --yes nothing is applied (as Terraform does)
  if (!args.yes && !(ctx.io.stdinIsTty && ctx.io.confirm)) {
    throw new CliError(
      'USAGE',
      'apply needs --yes when stdin is not a terminal (review the plan with proxops diff first); nothing was applied',
    )
  }
  const refs = targetRefs(args.target)
  const prepared = await prepare(ctx, args, args.cluster !== undefined ? { cluster: args.cluster } : {})
  // one writer per data dir: a daemon's running tick finishes first (its write lock, daemon/lock.ts)
  const waitS = args['lock-wait'] ?? 60
  if (!Number.isFinite(waitS) || waitS < 0) throw new CliError('USAGE', '--lock-wait must be a number of seconds >= 0')
  const write = await waitForLock(prepared.config.dataDir, CYCLE_LOCK, {
    waitMs: waitS * 1000,
    signal: ctx.signal,
    onWait: (held) =>
      err(
        ctx,
        `Waiting for the running cycle of the proxops daemon (pid ${held.holder}) to finish (up to ${waitS} s)...\n`,
      ),
  })
  if (isHeld(write))
    throw new CliError(
      'LOCKED',
      `the proxops daemon (pid ${write.holder}) is running a cycle on ${prepared.config.dataDir} (it holds ${write.file}); nothing was applied: try again, raise --lock-wait, or let the daemon converge`,
    )
  try {
    return await applyPrepared(ctx, args, prepared, refs)
  } finally {
    write.release()
  }
}

async function applyPrepared(
  ctx: CliContext,
  args: ApplyArgs,
  prepared: Prepared,
  targets: ObjectRef[] | undefined,
): Promise<number> {
  let refs = targets
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
    // a plan saved with --target is applied as saved: the fresh plan is narrowed to the same objects
    const savedTargets = set.targets ?? []
    const given = (refs ?? []).map((r) => `${r.kind}/${r.name}`)
    if (given.length > 0 && given.join('\n') !== savedTargets.join('\n'))
      throw new CliError(
        'USAGE',
        `${args.plan} was saved ${savedTargets.length > 0 ? `with --target ${savedTargets.join(' --target ')}` : 'without --target'}: apply it without --target, as it was saved`,
      )
    refs = savedTargets.length > 0 ? savedTargets.map((t) => parseObjectRef(t, `${args.plan} target`)) : undefined
  }
  if (refs) await requireDeclared(refs, prepared, tree, '--target')
  warnPartial(ctx, refs)
  // a person at a terminal (stdin) is asked, wherever stderr goes; pipelines and CI are not
  const interactive = Boolean(ctx.io.stdinIsTty && ctx.io.confirm) && !args.yes
  const json = args.output === 'json' || args.output === 'yaml'
  // with --output json (or yaml) stdout carries one document; the human text goes to stderr
  const show = (text: string): void => (json ? err(ctx, text) : out(ctx, text))
  const cycles: ClusterCycle[] = []
  const reports: Report[] = []
  let failed = false
  const blocked = await twinGuard(ctx, prepared.config)
  if (saved) await checkSavedParts(ctx, prepared, tree, saved, blocked, args, refs)
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
      const base = cycleBase(prepared, tree, blocked, cluster, args, refs)
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
        show(
          renderPlanText(
            ctx.redactor.strings(savedPlan),
            p,
            refs?.map((r) => `${r.kind}/${r.name}`),
          ),
        )
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
        clean: (text) => terminalText(ctx, text),
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
  if (json)
    out(
      ctx,
      structured(
        canonicalJson(ctx.redactor.strings({ format_version: STATUS_FORMAT_VERSION, cycles, reports })),
        args.output === 'yaml' ? 'yaml' : 'json',
      ),
    )
  else out(ctx, renderStatus(ctx.redactor.strings(cycles), p))
  return failed ? 1 : 0
}

export async function statusHandler(ctx: CliContext, args: PlanArgs & { object?: string }): Promise<number> {
  const ref = args.object !== undefined ? parseObjectRef(args.object, 'status') : undefined
  const prepared = await prepare(ctx, args, args.cluster !== undefined ? { cluster: args.cluster } : {})
  const tree = await prepared.source.sync()
  if (ref) await requireDeclared([ref], prepared, tree, 'status')
  const outcomes = await dryCycles(ctx, prepared, tree, args, ref ? [ref] : undefined)
  const cycles = outcomes.map((o) => o.cycle)
  const format = args.output === 'json' || args.output === 'yaml' ? args.output : 'text'
  if (ref) return objectStatus(ctx, args, ref, outcomes, tree.commit, format)
  if (format !== 'text')
    out(
      ctx,
      structured(
        canonicalJson(ctx.redactor.strings({ format_version: STATUS_FORMAT_VERSION, commit: tree.commit, cycles })),
        format,
      ),
    )
  else out(ctx, renderStatus(cycles, painter(ctx, args)))
  return reportAborts(ctx, outcomes) ? 1 : 0
}

/**
 * `status KIND/name`: one object in every selected cluster that declares it, as `status` shows it, with the planned
 * actions about it. Exit 0 when it matches git, 2 when it does not (as `diff --detailed-exitcode`), 1 on an error.
 */
function objectStatus(
  ctx: CliContext,
  args: PlanArgs,
  ref: ObjectRef,
  outcomes: readonly CycleOutcome[],
  commit: string,
  format: 'text' | 'json' | 'yaml',
): number {
  const found = outcomes.flatMap((o) =>
    o.cycle.objects
      .filter((x) => sameObject(ref, x))
      .map((object) => ({
        cycle: o.cycle,
        object,
        addresses: o.desired?.find((d) => sameObject(ref, d))?.addresses ?? [],
      })),
  )
  if (format !== 'text') {
    const doc = { format_version: STATUS_FORMAT_VERSION, commit, objects: found.map((f) => f.object) }
    out(ctx, structured(canonicalJson(ctx.redactor.strings(doc)), format))
  } else out(ctx, renderObjectStatus(found, painter(ctx, args)))
  if (reportAborts(ctx, outcomes)) return 1
  return found.every((f) => f.object.state === 'converged') ? 0 : 2
}
