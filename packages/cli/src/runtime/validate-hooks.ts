/**
 * validate's extra checks when an age identity is available: decrypt each cluster's SOPS file, check that the
 * keys its config references exist, and that every cloud-init reference of its manifests resolves. Without
 * an identity the offline checks stand alone. Never contacts PVE; values are registered with the redactor.
 */
import path from 'node:path'
import { readRepositoryFile, type SchemaError } from '@proxops/schema'
import { decryptSops, isSopsError, readCredentials } from '@proxops/sops'
import { secretRefs } from '@proxops/planner'
import type { ValidateHooks } from '../commands/validate.js'
import type { CliContext } from './context.js'
import { maskProblem, printedWords, sopsRoles } from './secret-roles.js'

export function sopsValidateHooks(ctx: () => CliContext): ValidateHooks {
  return {
    checkCluster: async (cluster, model) => {
      if (!cluster.secretsFile) return []
      const c = ctx()
      const file = path.relative(model.root, cluster.secretsFile) || cluster.secretsFile
      const problem = (message: string): SchemaError => ({
        code: 'secrets-unavailable',
        file,
        line: 0,
        column: 0,
        message: c.redactor.text(message),
      })
      // the loader's rules: inside the repository, a regular file, bounded
      const read = await readRepositoryFile(cluster.secretsFile, { root: model.root, display: file })
      if ('error' in read) return [{ ...read.error, clusters: [cluster.name] }]
      if ('missing' in read) return [problem(`cluster ${cluster.name}: secrets-file ${file} does not exist`)]
      let creds
      try {
        creds = readCredentials(
          await decryptSops(read.text, { file: cluster.secretsFile, discovery: { env: c.env, homeDir: c.home } }),
          { cluster: cluster.name },
        )
      } catch (error) {
        if (isSopsError(error, 'NoIdentity')) return []
        return [problem(error instanceof Error ? error.message : String(error))]
      }
      const refs = cluster.entry.secrets?.pve ?? {}
      // the git token is read only in URL mode (config/resolve.ts): a local repository needs no such key
      const gitToken = model.processConfig.git.url !== undefined ? cluster.entry.secrets?.git?.token : undefined
      const roles = sopsRoles(
        creds,
        {
          ...(refs.user !== undefined ? { user: refs.user } : {}),
          ...(refs['token-id'] !== undefined ? { tokenId: refs['token-id'] } : {}),
          ...(refs.token !== undefined ? { token: refs.token } : {}),
          ...(refs.password !== undefined ? { password: refs.password } : {}),
          ...(gitToken !== undefined ? { gitToken } : {}),
        },
        file,
        cluster.name,
      )
      const printed = printedWords(roles.identities, [
        { name: cluster.name, nodes: cluster.entry.nodes, baseUrl: cluster.entry['base-url'] },
      ])
      // a secret that cannot be masked stops every command: validate says so before they do
      const errors: SchemaError[] = roles.secrets.flatMap((secret) => {
        const why = maskProblem(secret.value, printed)
        return why === undefined
          ? []
          : [
              problem(
                `${secret.where.replace(`${file}: `, '')} cannot be kept out of the output: ${why}; use a longer, random value`,
              ),
            ]
      })
      c.redactor.add(
        ...roles.secrets.map((secret) => secret.value),
        ...roles.others.filter((v) => maskProblem(v, printed) === undefined),
      )
      const wanted: [string, string | undefined][] = [
        ['secrets.pve.user', refs.user],
        ['secrets.pve.token-id', refs['token-id']],
        ['secrets.pve.token', refs.token],
        ['secrets.pve.password', refs.password],
        ['secrets.git.token', gitToken],
      ]
      for (const [field, key] of wanted) {
        if (key !== undefined && !creds.secret(key))
          errors.push(
            problem(`cluster ${cluster.name}: ${field} names key "${key}", which is missing or empty under secrets:`),
          )
      }
      const manifests = cluster.index.resources.map((r) => r.manifest)
      for (const ref of secretRefs(manifests)) {
        try {
          creds.resolveRef(ref)
        } catch (error) {
          errors.push(problem(error instanceof Error ? error.message : String(error)))
        }
      }
      return errors
    },
  }
}
