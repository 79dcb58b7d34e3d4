/** What every command shares: the global flags, startup, the git source and the plan-set file. */
import { parsePlan, PlanInputError, serializePlan, type AllowEmptyKind, type Plan } from '@proxops/planner'
import { ALLOW_EMPTY_KINDS } from '@proxops/schema'
import { CliError } from '../errors.js'
import { createLogger } from '../log.js'
import type { GlobalFlags } from '../config/types.js'
import type { CliContext } from '../runtime/context.js'
import { setup, type Setup } from '../runtime/setup.js'
import { GitSource } from '../runtime/source.js'
import { paint, useColor, type Paint } from '../render/color.js'
import type { GlobalArgs } from './options.js'

export type { GlobalArgs } from './options.js'

export function globalFlags(args: GlobalArgs, defaults: { logFormat?: string } = {}): GlobalFlags {
  const flags: GlobalFlags = {}
  const set = <K extends keyof GlobalFlags>(key: K, value: GlobalFlags[K] | undefined): void => {
    if (value !== undefined) flags[key] = value
  }
  set('config', args.config)
  set('gitPath', args['git-path'])
  set('gitUrl', args['git-url'])
  set('gitBranch', args['git-branch'])
  if (args['git-poll-sec'] !== undefined) {
    if (!Number.isFinite(args['git-poll-sec']))
      throw new CliError('USAGE', '--git-poll-sec must be a whole number of seconds')
    flags.gitPollSec = args['git-poll-sec']
  }
  set('pruneBudget', args['prune-budget'])
  set('pveUser', args['pve-user'])
  set('pveAuth', args['pve-auth'])
  set('caFile', args['ca-file'])
  set('dataDir', args['data-dir'])
  set('acceptEndpoint', args['accept-endpoint'])
  set('logLevel', args['log-level'])
  set('logFormat', args['log-format'] ?? defaults.logFormat)
  set('listen', args.listen)
  return flags
}

export function painter(ctx: CliContext, args: GlobalArgs): Paint {
  return paint(useColor(Boolean(ctx.io.stdout.isTTY), ctx.env, args.color === false))
}

export interface Prepared extends Setup {
  source: GitSource
}

/** Config, secrets and logging for a command; the logger switches to the configured level and format. */
export async function prepare(
  ctx: CliContext,
  args: GlobalArgs,
  options: { cluster?: string; logFormat?: string; clock?: boolean } = {},
): Promise<Prepared> {
  const flags = globalFlags(args, options.logFormat ? { logFormat: options.logFormat } : {})
  const s = await setup(ctx, flags, options.cluster !== undefined ? { cluster: options.cluster } : {})
  ctx.log = createLogger({
    level: s.config.log.level,
    format: s.config.log.format,
    redactor: ctx.redactor,
    stream: ctx.io.stderr,
    ...(options.clock ? { clock: true } : {}),
  })
  // every PVE client of this command reports its answers to the pins (runtime/clients.ts)
  ctx.pins = s.pins
  return { ...s, source: new GitSource(ctx, s.config) }
}

export function allowEmpty(values: readonly string[] | undefined): AllowEmptyKind[] {
  const out: AllowEmptyKind[] = []
  for (const value of values ?? []) {
    const kind = ALLOW_EMPTY_KINDS.find((k) => k.toLowerCase() === value.toLowerCase())
    if (!kind) throw new CliError('USAGE', `--allow-empty ${value}: must be one of ${ALLOW_EMPTY_KINDS.join(', ')}`)
    out.push(kind)
  }
  return out
}

export const PLAN_SET_VERSION = 1

/**
 * The saved-plan file (`diff --out`, `apply --plan`) and `diff --output json`: every cluster's plan, each in
 * @proxops/planner's byte-stable form, plus the commit they were made at.
 */
export function planSetJson(commit: string, plans: readonly Plan[], targets?: readonly string[]): string {
  const body = plans.map((p) => serializePlan(p).trimEnd().replace(/\n/g, '\n    ')).join(',\n    ')
  // `targets`: the plans were narrowed by --target (planner targetPlan); apply --plan narrows its fresh plan alike
  const narrowed = targets && targets.length > 0 ? `,\n  "targets": ${JSON.stringify(targets)}` : ''
  return `{\n  "commit": ${JSON.stringify(commit)},\n  "format_version": ${PLAN_SET_VERSION},\n  "plans": [${plans.length ? `\n    ${body}\n  ` : ''}]${narrowed}\n}\n`
}

export function parsePlanSet(text: string, file: string): { commit: string; plans: Plan[]; targets?: string[] } {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    throw new CliError('PLAN_FILE', `${file} is not JSON: write it with proxops diff --out ${file}`)
  }
  const set = data as { format_version?: unknown; commit?: unknown; plans?: unknown; targets?: unknown }
  if (
    set === null ||
    typeof set !== 'object' ||
    set.format_version !== PLAN_SET_VERSION ||
    typeof set.commit !== 'string' ||
    !Array.isArray(set.plans) ||
    (set.targets !== undefined &&
      !(Array.isArray(set.targets) && set.targets.every((t): t is string => typeof t === 'string')))
  ) {
    throw new CliError(
      'PLAN_FILE',
      `${file} is not a ProxOps plan file (format_version ${PLAN_SET_VERSION}): write it with proxops diff --out ${file}`,
    )
  }
  try {
    const plans = set.plans.map((p, i) => parsePlan(JSON.stringify(p), `${file} plans[${i}]`))
    return { commit: set.commit, plans, ...(Array.isArray(set.targets) ? { targets: set.targets } : {}) }
  } catch (error) {
    if (error instanceof PlanInputError) throw new CliError('PLAN_FILE', `${file}: ${error.message}`)
    throw error
  }
}
