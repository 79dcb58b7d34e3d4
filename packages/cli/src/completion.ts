/**
 * Shell completion for bash, zsh and fish. Each script asks `proxops --get-yargs-completions <words>` (yargs'
 * completion machinery) for the words after the program name; commands and flags come from the yargs program,
 * and the value of `--cluster` from the repository's configured clusters.
 */
import type { CliContext } from './runtime/context.js'
import type { GlobalArgs } from './commands/options.js'

export const SHELLS = ['bash', 'zsh', 'fish'] as const
export type Shell = (typeof SHELLS)[number]

const SCRIPTS: Record<Shell, string> = {
  bash: `# proxops completion for bash: add  eval "$(proxops completion bash)"  to ~/.bashrc
_proxops_completions() {
  local IFS=$'\\n'
  COMPREPLY=($(proxops --get-yargs-completions "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _proxops_completions proxops
`,
  zsh: `#compdef proxops
# proxops completion for zsh: add  eval "$(proxops completion zsh)"  to ~/.zshrc (after compinit)
_proxops() {
  local -a candidates
  candidates=("\${(@f)$(proxops --get-yargs-completions "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -- \${candidates:#}
}
compdef _proxops proxops
`,
  fish: `# proxops completion for fish: proxops completion fish > ~/.config/fish/completions/proxops.fish
function __proxops_complete
  set -l words (commandline -opc) (commandline -ct)
  proxops --get-yargs-completions $words[2..-1] 2>/dev/null
end
complete -c proxops -f -a '(__proxops_complete)'
`,
}

/** The script for a shell; without one, the shell of $SHELL (bash when it is none of the three). */
export function completionScript(shell: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  const chosen = shell ?? SHELLS.find((s) => (env.SHELL ?? '').endsWith(`/${s}`)) ?? 'bash'
  return SCRIPTS[chosen as Shell]
}

/** The configured cluster names of the repository around the working directory (none when it cannot be read). */
async function clusterNames(ctx: CliContext, args: GlobalArgs): Promise<string[]> {
  try {
    const [{ loadDraftConfig }, { globalFlags }] = await Promise.all([
      import('./config/load.js'),
      import('./commands/common.js'),
    ])
    const config = await loadDraftConfig({ flags: globalFlags(args), env: ctx.env, cwd: ctx.cwd, home: ctx.home })
    return config.clusters.map((c) => c.name).sort()
  } catch {
    return []
  }
}

/** A name without the description yargs appends for zsh (`diff:Show what...`) or fish (`diff<TAB>Show what...`). */
const bare = (candidate: string): string => candidate.split(/(?<!\\):|\t/)[0]!

/**
 * yargs' completion callback: `words` are what the shell passed (the last one is being completed). After
 * `--cluster` it offers the cluster names; otherwise yargs' own commands and flags. Only candidates that start
 * with the typed prefix are printed, so every shell shows the same list.
 */
export function completer(words: readonly string[], ctx: () => CliContext) {
  return (
    current: string,
    argv: GlobalArgs,
    defaults: (done: (err: Error | null, list: string[]) => void) => void,
    done: (list: string[]) => void,
  ): void => {
    const previous = words.length >= 2 ? words[words.length - 2] : undefined
    const keep = (list: readonly string[]): string[] =>
      [...new Set(list.map(bare))].filter((c) => c.startsWith(current))
    if (previous === '--cluster') {
      void clusterNames(ctx(), argv).then((names) => done(keep(names)))
      return
    }
    defaults((_err, list) => done(keep(list ?? [])))
  }
}
