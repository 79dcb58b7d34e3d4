import yargs, { type Argv } from 'yargs'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline/promises'
import { version } from './version.js'
import { validateCommand, type ValidateHooks } from './commands/validate.js'
import {
  adoptCommand,
  applyCommand,
  diffCommand,
  initCommand,
  reconcileNowCommand,
  resumeCommand,
  suspendCommand,
  runCommand,
  showCommand,
  statusCommand,
} from './commands/definitions.js'
import { GLOBAL_OPTIONS, type GlobalArgs } from './commands/options.js'
import { CliError, oneLine } from './errors.js'
import { nearest } from '@proxops/schema'
import { SHELLS, completer, completionScript } from './completion.js'
import { createLogger } from './log.js'
import { Redactor } from './redact.js'
import { habitMessage } from './habits.js'
import { terminalText, type CliContext, type CliIo } from './runtime/context.js'
import { safeLine } from './safe-text.js'

export interface MainOptions {
  io?: Partial<CliIo>
  env?: Readonly<Record<string, string | undefined>>
  cwd?: string
  signal?: AbortSignal
}

function terminalConfirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  return rl.question(question).then(
    (answer) => {
      rl.close()
      return answer.trim() === 'yes'
    },
    () => {
      rl.close()
      return false
    },
  )
}

export function buildContext(options: MainOptions = {}): CliContext {
  const redactor = new Redactor()
  const io: CliIo = {
    stdout: options.io?.stdout ?? process.stdout,
    stderr: options.io?.stderr ?? process.stderr,
    stdinIsTty: options.io?.stdinIsTty ?? Boolean(process.stdin.isTTY),
    ...(options.io?.confirm ? { confirm: options.io.confirm } : options.io ? {} : { confirm: terminalConfirm }),
  }
  const env = options.env ?? process.env
  return {
    io,
    env,
    cwd: options.cwd ?? process.cwd(),
    home: env.HOME ?? os.homedir(),
    redactor,
    log: createLogger({ level: 'info', format: 'text', redactor, stream: io.stderr }),
    now: () => Date.now(),
    signal: options.signal ?? new AbortController().signal,
    announceStop: (line) => void io.stderr.write(`${line}\n`),
  }
}

/** What a command says when a stop is asked for; `reason` is the abort reason bin.ts gives (`received SIGINT`). */
export function stopLine(reason: unknown): string {
  const signal = /\b(SIG[A-Z]+)\b/.exec(reason instanceof Error ? reason.message : String(reason))?.[1] ?? 'stop'
  return `proxops: ${signal}: stopping after running actions finish; ${signal === 'SIGINT' ? 'Ctrl-C' : 'signal'} again to abort`
}

/** validate's SOPS checks, loaded only when validate runs. */
function lazySopsHooks(ctx: () => CliContext): ValidateHooks {
  return {
    checkCluster: async (cluster, model) => {
      if (!cluster.secretsFile) return [] // nothing to decrypt: do not load the SOPS stack (~100 ms)
      let hooks: typeof import('./runtime/validate-hooks.js')
      try {
        hooks = await import('./runtime/validate-hooks.js')
      } catch (error) {
        // the other problems are still reported: a failed module load is one problem, not the whole answer
        const message = `cluster ${cluster.name}: SOPS checks skipped: ${oneLine(String((error as Error).message ?? error))}`
        return [
          {
            code: 'secrets-unavailable',
            file: path.relative(model.root, cluster.secretsFile),
            line: 0,
            column: 0,
            message,
          },
        ]
      }
      return (await hooks.sopsValidateHooks(ctx).checkCluster?.(cluster, model)) ?? []
    },
  }
}

/** The part of yargs' internals this file reaches: the usage object of a program. */
interface YargsInternals {
  getInternalMethods?: () => { getUsageInstance: () => { cacheHelpMessage: () => void } }
}

/**
 * yargs renders the whole help text of a command before running its handler (`cacheHelpMessage`, kept in case the
 * handler asks for help once yargs has reset; no ProxOps handler does): 20-60 ms of text layout on every command.
 * Without it, help is rendered for --help only (docs/performance.md, "A CLI that feels instant").
 */
function helpOnlyForHelp<T>(y: Argv<T>): Argv<T> {
  const usage = (y as unknown as YargsInternals).getInternalMethods?.().getUsageInstance()
  if (usage) usage.cacheHelpMessage = () => undefined
  return y
}

/** The yargs program; exported so docs tests can walk every command and flag. */
export function program(
  argv: readonly string[],
  ctx: () => CliContext,
  setExit: (code: number) => void,
): Argv<GlobalArgs> {
  return helpOnlyForHelp(
    yargs([...argv])
      .scriptName('proxops')
      .usage('$0 <command> [options]\n\nGitOps for Proxmox VE: plans and converges what a git repository declares.')
      .version(false)
      // main() resolves to the exit code: yargs must not end the process (after --help, say), bin.ts does
      .exitProcess(false)
      .options(GLOBAL_OPTIONS)
      .option('version', { type: 'boolean', describe: 'Print the version and exit (anywhere on the line)' })
      .command('version', 'Print the version and exit')
      .command('help [command]', 'Show the help of a command')
      .strict()
      .demandCommand(1, 'no command given')
      .command(diffCommand(ctx, setExit))
      .command(applyCommand(ctx, setExit))
      .command(statusCommand(ctx, setExit))
      .command(showCommand(ctx, setExit))
      .command(validateCommand(setExit, ctx, lazySopsHooks(ctx)))
      .command(adoptCommand(ctx, setExit))
      .command(runCommand(ctx, setExit))
      .command(initCommand(ctx, setExit))
      .command(suspendCommand(ctx, setExit))
      .command(resumeCommand(ctx, setExit))
      .command(reconcileNowCommand(ctx, setExit))
      .command(
        'completion [shell]',
        'Print the completion script for bash, zsh or fish (commands, flags, cluster names)',
        (y) => y.positional('shell', { choices: SHELLS, describe: 'The shell (default: the one of $SHELL)' }),
        (args) => {
          const c = ctx()
          c.io.stdout.write(completionScript(args.shell, c.env))
        },
      )
      // the hidden flag the scripts call: --get-yargs-completions <words>
      .completion('__complete', false, completer(argv.slice(argv.indexOf('--get-yargs-completions') + 1), ctx) as never)
      .example('proxops diff', 'what would change on every cluster')
      .example('proxops apply --yes', 'converge every cluster without asking')
      .example('eval "$(proxops completion bash)"', 'enable shell completion (also zsh, fish)')
      .epilogue(
        'Exit codes: 0 success, 1 error or a failed action, 2 changes present (diff --detailed-exitcode). Docs: https://github.com/proxops/proxops/blob/main/docs/cli.md',
      )
      .wrap(Math.min(120, process.stdout.columns ?? 100))
      .help()
      .alias('help', 'h'),
  )
}

/** What yargs hands the fail callback as its third argument: the usage of the command being parsed. */
interface YargsUsage {
  getDescriptions?: () => Record<string, unknown>
}

/** The commands of the program, as typed (completion and "did you mean" use them). */
export const COMMANDS = [
  'diff',
  'plan',
  'apply',
  'show',
  'status',
  'validate',
  'adopt',
  'run',
  'init',
  'completion',
  'version',
  'help',
] as const

/**
 * yargs' strict mode says `Unknown arguments: clustr, x`; this names what was typed (`--clustr`, or the word
 * `dif`) and the nearest command, or the nearest flag of that command. A wrong command is named first.
 */
export function unknownArgument(
  names: readonly string[],
  argv: readonly string[],
  usage: YargsUsage | undefined,
): string {
  const known = COMMANDS as readonly string[]
  const command = argv.find((a) => !a.startsWith('-'))
  if (command !== undefined && !known.includes(command) && names.includes(command)) {
    const guess = nearest(command, known)
    return `unknown command "${command}"${guess ? `; did you mean "${guess}"?` : ''} (see proxops --help)`
  }
  const where = command !== undefined && known.includes(command) ? `proxops ${command}` : 'proxops'
  const name = names[0] ?? ''
  const bare = (a: string): string => a.replace(/^--?/, '').split('=')[0]!
  const flagged = argv.find((a) => a.startsWith('-') && (bare(a) === name || bare(a) === `no-${name}`))
  if (flagged === undefined) return `unexpected argument "${name}" (see ${where} --help)`
  const flags = Object.keys(usage?.getDescriptions?.() ?? GLOBAL_OPTIONS)
  const guess = nearest(bare(flagged), [...flags, ...(flags.includes('color') ? ['no-color'] : [])])
  return `unknown flag ${flagged.split('=')[0]!}${guess ? `; did you mean --${guess}?` : ''} (see ${where} --help)`
}

/** Runs the CLI with the given arguments and resolves to the process exit code. */
export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  // `--version` anywhere before a `--` (or the `version` command) prints the version and never runs a command
  const end = argv.indexOf('--')
  const flags = end >= 0 ? argv.slice(0, end) : argv
  if (flags.includes('--version') || argv[0] === 'version') {
    ;(options.io?.stdout ?? process.stdout).write(`proxops version ${version}\n`)
    return 0
  }
  // `proxops help <command>` is `proxops <command> --help`
  if (argv[0] === 'help') argv = [...argv.slice(1), '--help']
  let exitCode = 0
  let context: CliContext | undefined
  const ctx = (): CliContext => (context ??= buildContext(options))
  const setExit = (code: number): void => {
    exitCode = code
  }
  const signal = options.signal
  if (signal) {
    const announce = (): void => ctx().announceStop(stopLine(signal.reason))
    if (signal.aborted) announce()
    else signal.addEventListener('abort', announce, { once: true })
  }
  try {
    await program(argv, ctx, setExit)
      .fail((msg, err, usage) => {
        // a habit from Terraform or kubectl (`-auto-approve`, `get`): say the ProxOps way, whatever yargs made of it
        const typed = argv.find((a) => !a.startsWith('-'))
        const command = typed !== undefined && (COMMANDS as readonly string[]).includes(typed) ? typed : undefined
        const flags = Object.keys((usage as unknown as YargsUsage | undefined)?.getDescriptions?.() ?? GLOBAL_OPTIONS)
        const habit = err instanceof CliError ? undefined : habitMessage(argv, command, [...flags, 'no-color'])
        if (habit !== undefined) throw new CliError('USAGE', habit)
        // yargs' requiresArg message, said the way the flag is typed
        const missing = /^Not enough arguments following: (\S+)$/.exec(msg ?? '')
        if (missing && !(err instanceof CliError))
          throw new CliError('USAGE', `--${missing[1]} needs a value (see proxops --help)`)
        const unknown = /^Unknown arguments?: (.+)$/.exec(msg ?? '')
        if (unknown?.[1] && !(err instanceof CliError))
          throw new CliError('USAGE', unknownArgument(unknown[1].split(', '), argv, usage as unknown as YargsUsage))
        throw err ?? new CliError('USAGE', `${msg} (see proxops --help)`)
      })
      // yargs prints --help with console.log; the parse callback hands it over, to write where this run's output goes
      .parseAsync(argv, {}, (_err, _args, output) => {
        if (output) ctx().io.stdout.write(`${terminalText(ctx(), output)}\n`)
      })
  } catch (err) {
    const c = ctx()
    const message = err instanceof Error ? err.message : String(err)
    c.io.stderr.write(`proxops: error: ${safeLine(oneLine(c.redactor.text(message)))}\n`)
    if (!(err instanceof CliError) && c.env.PROXOPS_DEBUG)
      c.io.stderr.write(`${terminalText(c, String((err as Error).stack))}\n`)
    return 1
  }
  return exitCode
}
