/**
 * reconcile: asks the daemon running on this machine (`proxops run`, at the configured `listen` address) to start a
 * cycle now, through its authenticated `POST /reconcile`. Credentials: PROXOPS_HTTP_TOKEN or PROXOPS_HTTP_BASIC_AUTH
 * when the daemon requires them, else the token the leading daemon keeps in its data dir (daemon/reconcile-token.ts).
 */
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { loadDraftConfig } from '../config/load.js'
import { httpAuthFromEnv } from '../daemon/auth.js'
import { RECONCILE_TOKEN_FILE } from '../daemon/reconcile-token.js'
import { CliError } from '../errors.js'
import { out, type CliContext } from '../runtime/context.js'
import { globalFlags, type GlobalArgs } from './common.js'

export interface ReconcileNowArgs extends GlobalArgs {
  cluster?: string[]
}

/** The address to connect to: a wildcard listen address is reached on loopback. */
function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1'
  if (host === '::' || host === '::0') return '[::1]'
  return host.includes(':') ? `[${host}]` : host
}

export async function reconcileNowHandler(ctx: CliContext, args: ReconcileNowArgs): Promise<number> {
  const draft = await loadDraftConfig({ flags: globalFlags(args), env: ctx.env, cwd: ctx.cwd, home: ctx.home })
  const auth = httpAuthFromEnv(ctx.env)
  let authorization: string
  if (auth?.bearer !== undefined) authorization = `Bearer ${auth.bearer}`
  else if (auth?.basic)
    authorization = `Basic ${Buffer.from(`${auth.basic.user}:${auth.basic.password}`).toString('base64')}`
  else {
    const file = path.join(draft.dataDir, RECONCILE_TOKEN_FILE)
    let token: string
    try {
      token = readFileSync(file, 'utf8').trim()
    } catch (error) {
      throw new CliError(
        'USAGE',
        `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}): no proxops daemon leads on this data dir, or it runs as another user (pass its --data-dir, run as its user, or set PROXOPS_HTTP_TOKEN)`,
      )
    }
    ctx.redactor.add(token)
    authorization = `Bearer ${token}`
  }
  const where = `${connectHost(draft.listen.host)}:${draft.listen.port}`
  const query = (args.cluster ?? []).map((c) => `cluster=${encodeURIComponent(c)}`).join('&')
  let res: Response
  try {
    res = await fetch(`http://${where}/reconcile${query ? `?${query}` : ''}`, {
      method: 'POST',
      headers: { authorization },
      signal: AbortSignal.timeout(10_000),
    })
  } catch {
    throw new CliError(
      'USAGE',
      `no proxops daemon answers at ${where} (the listen address; pass --listen to name another)`,
    )
  }
  const body = (await res.json().catch(() => ({}))) as { clusters?: string[]; error?: string }
  if (res.status === 202) {
    out(ctx, `The daemon at ${where} starts a cycle of ${(body.clusters ?? []).join(', ')} now.\n`)
    return 0
  }
  throw new CliError(
    'USAGE',
    `the daemon at ${where} refused (${res.status}): ${res.status === 401 ? 'wrong or missing credentials' : (body.error ?? 'no reason given')}`,
  )
}
