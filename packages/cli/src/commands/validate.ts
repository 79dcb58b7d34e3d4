/**
 * `proxops validate [--cluster X] [--output text|json|yaml] [--strict]`: checks the repository offline (no network, no PVE):
 * manifests, composition, configs, references. Prints every problem as `file:line:col code message`; exits 1
 * if there is any, else 0 with a one-line summary per cluster. Unlisted manifest files are warnings (errors with --strict).
 * The checks are in validate-run.ts, loaded when the command runs: `--help` and completion never load the loader.
 */
import type { Argv, CommandModule } from 'yargs'
import type { LoadedCluster, RepositoryModel, SchemaError } from '@proxops/schema'
import type { CliContext } from '../runtime/context.js'
import { safeOutput } from '../safe-text.js'

export interface ValidateHooks {
  /**
   * Extra checks of one cluster that need more than the repository text, e.g. decrypting the cluster's SOPS
   * file and resolving its cloud-init references. Returned problems (code `secrets-unavailable`, say) are
   * reported with the others. Must not contact PVE.
   */
  checkCluster?: (cluster: LoadedCluster, model: RepositoryModel) => Promise<SchemaError[]>
}

interface ValidateArgs {
  cluster?: string
  output: 'text' | 'json' | 'yaml'
  strict?: boolean
  'git-path'?: string
}

/**
 * The yargs command. `ctx` (streams, env, cwd) defaults to the process; `hooks` lets the CLI add checks that
 * need secrets (SOPS decryption) without this module knowing how.
 */
export function validateCommand(
  setExit: (code: number) => void,
  ctx?: () => CliContext,
  hooks?: ValidateHooks,
): CommandModule {
  return {
    command: 'validate',
    describe: 'Check the repository offline: manifests, composition, configs, references (no PVE, no network)',
    builder: (y: Argv) =>
      y
        .option('cluster', {
          type: 'string',
          requiresArg: true,
          describe: 'Check only this cluster (repository-wide rules still apply)',
        })
        .option('output', {
          alias: 'o',
          type: 'string',
          requiresArg: true,
          choices: ['text', 'json', 'yaml'] as const,
          default: 'text',
          describe: 'Output format (yaml: the json document as YAML)',
        })
        .option('strict', {
          type: 'boolean',
          describe: 'Fail on YAML files under the kind roots that no resources.yaml lists (default: warn)',
        })
        .example('proxops validate', 'every cluster of the repository around the current directory')
        .example('proxops validate --git-path ./examples --output json', 'a given tree, machine-readable'),
    handler: async (argv) => {
      const args = argv as unknown as ValidateArgs
      const c = ctx?.()
      const env = c?.env ?? process.env
      const envPath = env.PROXOPS_GIT_PATH
      const gitPath = args['git-path'] ?? (envPath && envPath.trim() !== '' ? envPath : undefined)
      const { runValidate } = await import('./validate-run.js')
      const result = await runValidate({
        output: args.output === 'yaml' ? 'json' : args.output,
        ...(args.strict ? { strict: true } : {}),
        cwd: c?.cwd ?? process.cwd(),
        ...(gitPath !== undefined ? { gitPath } : {}),
        ...(args.cluster !== undefined ? { cluster: args.cluster } : {}),
        ...(hooks ? { hooks } : {}),
      })
      const stdout = c?.io.stdout ?? process.stdout
      const stderr = c?.io.stderr ?? process.stderr
      // yaml: the json document as YAML (render/yaml.ts), made from the text that was redacted
      const text = c ? c.redactor.text(result.stdout) : result.stdout
      const yaml = args.output === 'yaml' ? (await import('../render/yaml.js')).yamlOf(text) : text
      if (result.stdout !== '') stdout.write(safeOutput(yaml))
      if (result.stderr !== '') stderr.write(safeOutput(c ? c.redactor.text(result.stderr) : result.stderr))
      setExit(result.exitCode)
    },
  }
}
