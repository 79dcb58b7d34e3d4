import { nearest } from '@proxops/schema'

/**
 * What people type from the tools next door (Terraform, kubectl) and ProxOps does not take, with the ProxOps way to
 * say it. ProxOps meets the common habits itself (`plan`, `show <planfile>`, `--target`, `-o yaml`,
 * `status KIND/name`); for the rest the error names the ProxOps way instead of a bare "unknown argument".
 */

/** Commands of other tools, and what to run instead. */
export const COMMAND_HABITS: Readonly<Record<string, string>> = {
  get: 'proxops status (one object: proxops status KIND/name)',
  describe: 'proxops status KIND/name',
  import: 'proxops adopt --cluster <name>, which writes manifests for what already runs',
  refresh: 'proxops diff: every command reads live PVE, there is no state to refresh',
  state: 'proxops status: PVE is the state, there is no state file',
  destroy: 'remove the manifest from resources.yaml, then proxops apply (deletions are bounded)',
  delete: 'remove the manifest from resources.yaml, then proxops apply (deletions are bounded)',
  watch: 'proxops run, the daemon (it applies every 30 s), or watch proxops status',
  output: 'proxops status -o json (or -o yaml)',
}

/** Flags of other tools (by name, without dashes), and what ProxOps takes instead. */
export const FLAG_HABITS: Readonly<Record<string, string>> = {
  'auto-approve': '--yes',
  approve: '--yes',
  force: '--yes (apply), or --force (adopt: overwrite manifest files)',
  w: 'proxops run (the daemon re-applies every 30 s), or watch proxops status',
  watch: 'proxops run (the daemon re-applies every 30 s), or watch proxops status',
  f: 'nothing: ProxOps reads the whole repository (narrow with --cluster or --target KIND/name)',
  filename: 'nothing: ProxOps reads the whole repository (narrow with --cluster or --target KIND/name)',
  A: '--cluster (without it: every cluster)',
  'all-namespaces': '--cluster (without it: every cluster)',
  namespace: '--cluster',
  var: 'a value in the manifest (secrets: the cluster SOPS file, docs/sops.md)',
  'var-file': 'a value in the manifest (secrets: the cluster SOPS file, docs/sops.md)',
  input: '--yes (without a terminal apply never asks)',
  lock: 'nothing: the daemon holds its own lock, and every update sends the config digest it was planned at',
}

/** `-name` or `-name=value`: a long flag written with one dash (Terraform's spelling); undefined otherwise. */
function singleDash(arg: string): string | undefined {
  return /^-([A-Za-z][A-Za-z0-9-]+)(?:=.*)?$/.exec(arg)?.[1]
}

/**
 * The ProxOps way for what `argv` holds from another tool, or undefined: a command of another tool, a long flag with
 * one dash, a flag of another tool. `command`: the command typed, when ProxOps knows it; `flags`: its long flags.
 */
export function habitMessage(
  argv: readonly string[],
  command: string | undefined,
  flags: readonly string[],
): string | undefined {
  const end = argv.indexOf('--')
  const words = end >= 0 ? argv.slice(0, end) : argv
  const first = words.find((a) => !a.startsWith('-'))
  if (command === undefined && first !== undefined && Object.hasOwn(COMMAND_HABITS, first))
    return `unknown command "${first}"; in ProxOps: ${COMMAND_HABITS[first]}`
  const where = command !== undefined ? `proxops ${command}` : 'proxops'
  const habit = (arg: string, name: string): string =>
    `${arg.split('=')[0]!} is not a ProxOps flag; in ProxOps: ${FLAG_HABITS[name]} (see ${where} --help)`
  for (const arg of words) {
    const single = singleDash(arg)
    if (single !== undefined) {
      if (Object.hasOwn(FLAG_HABITS, single)) return habit(arg, single)
      const guess = flags.includes(single) ? single : nearest(single, flags)
      return `${arg.split('=')[0]!}: ProxOps long flags take two dashes${guess ? `: --${guess}` : `, and ${where} has no --${single}`} (see ${where} --help)`
    }
    const name = /^--([A-Za-z][\w-]*)/.exec(arg)?.[1] ?? /^-([A-Za-z])$/.exec(arg)?.[1]
    if (name !== undefined && !flags.includes(name) && Object.hasOwn(FLAG_HABITS, name)) return habit(arg, name)
  }
  return undefined
}
