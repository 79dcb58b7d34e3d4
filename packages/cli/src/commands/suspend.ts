/**
 * suspend / resume: a cluster, or one object of it, is read and shown with its drift but never written, until it is
 * resumed (runtime/suspensions.ts). Reads only the configuration (no secrets, no PVE); writes the data dir.
 */
import os from 'node:os'
import { loadDraftConfig } from '../config/load.js'
import { CliError } from '../errors.js'
import { out, type CliContext } from '../runtime/context.js'
import { addSuspension, removeSuspension } from '../runtime/suspensions.js'
import { parseObjectRef } from '../runtime/targets.js'
import { globalFlags, type GlobalArgs } from './common.js'

export interface SuspendArgs extends GlobalArgs {
  object?: string
  cluster?: string
  reason?: string
}

async function scope(
  ctx: CliContext,
  args: SuspendArgs,
): Promise<{ dataDir: string; cluster: string; object?: string }> {
  const draft = await loadDraftConfig({ flags: globalFlags(args), env: ctx.env, cwd: ctx.cwd, home: ctx.home })
  const names = draft.clusters.map((c) => c.name)
  const cluster = args.cluster ?? (names.length === 1 ? names[0] : undefined)
  if (cluster === undefined) throw new CliError('USAGE', `name the cluster with --cluster (one of ${names.join(', ')})`)
  if (!names.includes(cluster))
    throw new CliError('USAGE', `--cluster "${cluster}" is not configured (known: ${names.join(', ')})`)
  const ref = args.object !== undefined ? parseObjectRef(args.object, 'object') : undefined
  return { dataDir: draft.dataDir, cluster, ...(ref ? { object: `${ref.kind}/${ref.name}` } : {}) }
}

const what = (s: { cluster: string; object?: string }): string =>
  s.object !== undefined ? `${s.object} of cluster ${s.cluster}` : `cluster ${s.cluster}`

export async function suspendHandler(ctx: CliContext, args: SuspendArgs): Promise<number> {
  const reason = args.reason?.trim()
  if (!reason) throw new CliError('USAGE', 'suspend needs --reason: say why, for whoever reads the status page')
  const s = await scope(ctx, args)
  const since = new Date(ctx.now()).toISOString()
  let by: string | undefined
  try {
    by = os.userInfo().username
  } catch {
    by = undefined
  }
  addSuspension(s.dataDir, { ...s, reason, since, ...(by ? { by } : {}) })
  out(
    ctx,
    `Suspended ${what(s)} since ${since}: ${reason}\nProxOps reads it and shows its drift, and writes nothing to it until: proxops resume${s.object !== undefined ? ` ${s.object}` : ''} --cluster ${s.cluster}\n`,
  )
  return 0
}

export async function resumeHandler(ctx: CliContext, args: SuspendArgs): Promise<number> {
  const s = await scope(ctx, args)
  if (!removeSuspension(s.dataDir, s)) {
    out(ctx, `${what(s)} was not suspended in ${s.dataDir}; nothing changed.\n`)
    return 0
  }
  out(ctx, `Resumed ${what(s)}: the next cycle converges it.\n`)
  return 0
}
