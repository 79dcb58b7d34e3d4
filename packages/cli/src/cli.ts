import yargs from 'yargs'
import { version } from './version.js'
import { validateCommand } from './commands/validate.js'

/** Runs the CLI with the given arguments and resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  let exitCode = 0
  const setExit = (code: number): void => {
    exitCode = code
  }
  try {
    await yargs(argv)
      .scriptName('proxops')
      .version(version)
      .strict()
      .demandCommand(1, 'Name a command: proxops <command> --help')
      .command(validateCommand(setExit))
      .fail((msg, err) => {
        throw err ?? new Error(msg)
      })
      .help()
      .parseAsync()
  } catch (err) {
    process.stderr.write(`proxops: ${err instanceof Error ? err.message : String(err)}\n`)
    return 1
  }
  return exitCode
}
