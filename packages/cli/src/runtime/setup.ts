/**
 * Startup: config files and flags, SOPS decryption of each cluster's secrets file (@proxops/sops, no
 * binary), credential resolution, and registration of every secret with the redactor before anything
 * can print it. Fails closed with one actionable line.
 */
import type { SopsCredentials } from '@proxops/sops'
import { CliError } from '../errors.js'
import { loadDraftConfig } from '../config/load.js'
import { credentialValues, resolveCredentials } from '../config/resolve.js'
import type { GlobalFlags, ResolvedConfig } from '../config/types.js'
import type { CliContext } from './context.js'

export interface Setup {
  config: ResolvedConfig
  /** decrypted credential documents by cluster (clusters with a secrets-file) */
  sops: ReadonlyMap<string, SopsCredentials>
}

/**
 * The values of a SOPS credential document the redactor must mask: everything except the keys a cluster
 * uses as its PVE user or token id (identities, not secrets: masking `root@pam` or `proxops` would shred
 * ordinary output such as the ownership tag).
 */
export function sopsSecretValues(creds: SopsCredentials, identityKeys: ReadonlySet<string>): string[] {
  const identities = new Set(
    [...identityKeys].map((k) => creds.secret(k)?.reveal()).filter((v): v is string => Boolean(v)),
  )
  const values: string[] = []
  for (const name of creds.secretNames) {
    const value = creds.secret(name)?.reveal() ?? ''
    if (!identityKeys.has(name) && !identities.has(value)) values.push(value)
  }
  for (const kind of ['ssh-keys', 'passwords'] as const) {
    for (const name of creds.names(kind)) values.push(creds.cloudInit(kind, name)?.reveal() ?? '')
  }
  return values
}

export async function decryptClusterSecrets(ctx: CliContext, cluster: string, file: string): Promise<SopsCredentials> {
  // loaded only for a cluster with a secrets file: age and its curves were a tenth of every diff's start-up
  const { decryptSopsFile, isSopsError, readCredentials } = await import('@proxops/sops')
  try {
    const doc = await decryptSopsFile(file, { discovery: { env: ctx.env, homeDir: ctx.home } })
    return readCredentials(doc, { cluster })
  } catch (error) {
    if (isSopsError(error)) {
      throw new CliError('SECRETS', `cluster ${cluster}: ${ctx.redactor.text(error.message)}`)
    }
    throw new CliError(
      'SECRETS',
      `cluster ${cluster}: cannot decrypt ${file}: ${ctx.redactor.text(String((error as Error).message ?? error))}`,
    )
  }
}

export async function setup(ctx: CliContext, flags: GlobalFlags, options: { cluster?: string } = {}): Promise<Setup> {
  const draft = loadDraftConfig({ flags, env: ctx.env, cwd: ctx.cwd, home: ctx.home })
  if (options.cluster !== undefined && !draft.clusters.some((c) => c.name === options.cluster)) {
    throw new CliError(
      'USAGE',
      `--cluster "${options.cluster}" is not configured (known: ${draft.clusters.map((c) => c.name).join(', ')})`,
    )
  }
  // env credentials are secrets too, even when a cluster does not end up using them
  for (const name of ['PROXOPS_PVE_TOKEN', 'PROXOPS_PVE_TOKEN_VALUE', 'PROXOPS_PVE_PASSWORD', 'PROXOPS_GIT_TOKEN']) {
    ctx.redactor.add(ctx.env[name], ctx.env[name]?.split('=').slice(1).join('='))
  }
  ctx.redactor.add(draft.pve.token, draft.pve.password, draft.pve.tokenValue, draft.git.token)
  const selected = draft.clusters.filter((c) => options.cluster === undefined || c.name === options.cluster)
  const sops = new Map<string, SopsCredentials>()
  const plain: Record<string, Record<string, string>> = {}
  for (const cluster of selected) {
    if (!cluster.secretsFile) continue
    const creds = await decryptClusterSecrets(ctx, cluster.name, cluster.secretsFile)
    const identityKeys = new Set(
      [cluster.secretRefs.pve.user, cluster.secretRefs.pve.tokenId].filter((k): k is string => k !== undefined),
    )
    ctx.redactor.add(...sopsSecretValues(creds, identityKeys))
    sops.set(cluster.name, creds)
    plain[cluster.name] = Object.fromEntries(creds.secretNames.map((n) => [n, creds.secret(n)?.reveal() ?? '']))
  }
  const config = resolveCredentials({ ...draft, clusters: selected }, ctx.env, plain)
  ctx.redactor.add(...credentialValues(config))
  return { config, sops }
}
