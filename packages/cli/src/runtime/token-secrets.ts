/**
 * Where a new PVE API token's secret goes (docs/access.md#token-secrets): PVE shows it once, in the answer to
 * generate_token. It is sealed with age to the recipients of the cluster's secrets-file (so whoever can decrypt
 * that file can open it) and written, mode 0600, under the data dir (`<data-dir>/token-secrets/<cluster>`) or the
 * cluster's `access.token-secrets-dir`, never inside the repository. The redactor learns it at once, so no output
 * of this run can print it.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve } from 'node:path'
import type { TokenSecretSink } from '@proxops/planner/execute'
import type { ResolvedCluster, ResolvedConfig } from '../config/types.js'
import type { Redactor } from '../redact.js'

/** the directory a cluster's token secrets are written to */
export function tokenSecretsDir(cluster: ResolvedCluster, config: Pick<ResolvedConfig, 'dataDir'>): string {
  return resolve(cluster.access?.tokenSecretsDir ?? join(config.dataDir, 'token-secrets', cluster.name))
}

const inside = (dir: string, root: string): boolean => {
  const rel = relative(resolve(root), dir)
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
}

/**
 * The sink, or why there is none (then a token is not created at all: its secret would be lost). Checked before
 * any request, so that PVE is never asked for a secret ProxOps cannot keep.
 */
export function tokenSecretSink(
  cluster: ResolvedCluster,
  config: Pick<ResolvedConfig, 'dataDir'>,
  repository: string,
  redactor: Redactor,
): TokenSecretSink | undefined {
  const dir = tokenSecretsDir(cluster, config)
  const secretsFile = cluster.secretsFile
  if (inside(dir, repository) || secretsFile === undefined) return undefined
  return async (fullTokenid, secret) => {
    redactor.add(secret.reveal())
    // SOPS and age load only when a token is made (docs/performance.md: a command loads what it needs)
    const { sealToRecipients, sopsRecipients } = await import('@proxops/sops')
    const sealed = await sealToRecipients(secret.reveal(), await sopsRecipients(secretsFile), secretsFile)
    await mkdir(dir, { recursive: true, mode: 0o700 })
    const file = join(dir, `${fullTokenid.replace(/[^A-Za-z0-9.@_-]/g, '_')}.age`)
    await writeFile(file, sealed, { mode: 0o600 })
    await chmod(file, 0o600)
    return file
  }
}
