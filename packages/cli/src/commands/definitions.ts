/**
 * The yargs command definitions: flags, descriptions and examples. Handlers load their modules on demand,
 * so `--help` and completion start without loading the libraries.
 */
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import type { CliContext } from '../runtime/context.js'
import type { GlobalArgs } from './options.js'
import type { PlanArgs } from './reconcile.js'
import type { AdoptArgs } from './adopt.js'
import type { RunArgs } from './run.js'
import type { ShowArgs } from './show.js'
import type { InitArgs } from './init.js'
import type { SuspendArgs } from './suspend.js'
import type { ReconcileNowArgs } from './reconcile-now.js'

type Setter = (code: number) => void
type Ctx = () => CliContext

const clusterOption = {
  type: 'string',
  requiresArg: true,
  describe: 'Only this cluster (default: every configured cluster)',
} as const
const targetOption = {
  type: 'string',
  requiresArg: true,
  array: true,
  describe: 'Only this object and what it depends on: KIND/name, such as VM/web (repeatable)',
} as const
/** its kinds are written out (loading @proxops/schema here would slow `--help`); common.test.ts checks them */
export const allowEmptyOption = {
  type: 'string',
  requiresArg: true,
  array: true,
  describe:
    'Accept 0 desired objects of this kind even though owned ones exist on PVE (VM, TemplateVM, LXC, TemplateCT, BackupJob, Pool, Role, Group, User, Token, ACL, Storage)',
} as const

export function diffCommand(
  ctx: Ctx,
  setExit: Setter,
): CommandModule<GlobalArgs, PlanArgs & { 'detailed-exitcode'?: boolean; out?: string }> {
  return {
    command: 'diff',
    aliases: ['plan'],
    describe: 'Show what apply would change on each cluster (reads PVE, never writes); also `plan`',
    builder: (y: Argv<GlobalArgs>) =>
      y
        .option('cluster', clusterOption)
        .option('output', {
          alias: 'o',
          type: 'string',
          requiresArg: true,
          choices: ['text', 'json', 'yaml', 'markdown'] as const,
          describe: 'Output format (json: the byte-stable plan set; yaml: the same as YAML)',
        })
        .option('detailed-exitcode', { type: 'boolean', describe: 'Exit 2 when changes are present (0 none, 1 error)' })
        .option('override-window', {
          type: 'boolean',
          describe: 'Plan disruptive changes as apply --override-window would run them, outside the sync windows',
        })
        .option('out', {
          type: 'string',
          requiresArg: true,
          describe: 'Also save the plan set to this file for apply --plan',
        })
        .option('target', targetOption)
        .option('allow-empty', allowEmptyOption)
        .example('proxops diff', 'plan every cluster, Terraform-style')
        .example('proxops diff --target VM/web', 'only the VM web and what it depends on')
        .example('proxops diff --cluster homelab --output markdown', 'a pull-request comment for one cluster')
        .example('proxops diff --out plan.json --detailed-exitcode', 'save the plan; exit 2 when there are changes'),
    handler: async (args: ArgumentsCamelCase<PlanArgs & { 'detailed-exitcode'?: boolean; out?: string }>) =>
      setExit(await (await import('./reconcile.js')).diffHandler(ctx(), args)),
  }
}

export function applyCommand(
  ctx: Ctx,
  setExit: Setter,
): CommandModule<GlobalArgs, PlanArgs & { plan?: string; planfile?: string; yes?: boolean; 'dry-run'?: boolean }> {
  return {
    command: 'apply [planfile]',
    describe: 'Converge each cluster to git (asks on a terminal unless --yes)',
    builder: (y: Argv<GlobalArgs>) =>
      y
        .positional('planfile', {
          type: 'string',
          describe: 'A plan saved by diff --out: the same as --plan PLANFILE (as Terraform takes it)',
        })
        .option('cluster', clusterOption)
        .option('plan', {
          type: 'string',
          requiresArg: true,
          describe: 'Apply exactly this saved plan (refused if the commit or a digest changed)',
        })
        .option('yes', { alias: 'y', type: 'boolean', describe: 'Do not ask for confirmation' })
        .option('dry-run', { alias: 'n', type: 'boolean', describe: 'Only show the plan (same as diff)' })
        .option('output', {
          alias: 'o',
          type: 'string',
          requiresArg: true,
          choices: ['text', 'json', 'yaml'] as const,
          describe: 'Format of the final status (json: cycles as JSON; yaml: the same as YAML)',
        })
        .option('target', targetOption)
        .option('allow-empty', allowEmptyOption)
        .option('override-window', {
          type: 'boolean',
          describe: "Run disruptive changes now, outside the clusters' sync windows",
        })
        .option('lock-wait', {
          type: 'number',
          requiresArg: true,
          describe:
            'How long to wait for a running daemon cycle on the same data dir, in seconds (default 60), then refuse',
        })
        .example('proxops apply', 'plan, confirm on the terminal, converge')
        .example('proxops apply --yes --cluster edge', 'converge one cluster without asking')
        .example('proxops diff --out plan.json && proxops apply --plan plan.json', 'apply exactly the reviewed plan'),
    handler: async (
      args: ArgumentsCamelCase<
        PlanArgs & { plan?: string; planfile?: string; yes?: boolean; 'dry-run'?: boolean; 'lock-wait'?: number }
      >,
    ) => {
      const plan = (await import('./plan-file-arg.js')).planFileOf(ctx().cwd, args)
      setExit(
        await (
          await import('./reconcile.js')
        ).applyHandler(ctx(), { ...args, ...(plan !== undefined ? { plan } : {}) }),
      )
    },
  }
}

export function statusCommand(ctx: Ctx, setExit: Setter): CommandModule<GlobalArgs, PlanArgs & { object?: string }> {
  return {
    command: 'status [object]',
    describe: 'Per-cluster convergence table of every object, or one object (KIND/name) with its exit code (read-only)',
    builder: (y: Argv<GlobalArgs>) =>
      y
        .positional('object', {
          type: 'string',
          describe: 'One object, KIND/name (VM/web): exit 0 when it matches git, 2 when it does not, 1 on an error',
        })
        .option('cluster', clusterOption)
        .option('output', {
          alias: 'o',
          type: 'string',
          requiresArg: true,
          choices: ['text', 'json', 'yaml'] as const,
          describe: 'Output format',
        })
        .option('allow-empty', allowEmptyOption)
        .example('proxops status', 'which objects are converged, drifting, skipped or anomalous')
        .example('proxops status VM/app-vm', 'one object: its state, why, and what the plan would do to it')
        .example('proxops status --cluster edge --output yaml', 'the same as YAML (or json)'),
    handler: async (args: ArgumentsCamelCase<PlanArgs & { object?: string }>) =>
      setExit(await (await import('./reconcile.js')).statusHandler(ctx(), args)),
  }
}

export function showCommand(ctx: Ctx, setExit: Setter): CommandModule<GlobalArgs, ShowArgs> {
  return {
    command: 'show <planfile>',
    describe: 'Render a plan saved by diff --out, as diff shows it (reads the file only)',
    builder: (y: Argv<GlobalArgs>) =>
      y
        .positional('planfile', { type: 'string', demandOption: true, describe: 'The file diff --out wrote' })
        .option('output', {
          alias: 'o',
          type: 'string',
          requiresArg: true,
          choices: ['text', 'json', 'yaml', 'markdown'] as const,
          describe: 'Output format',
        })
        .example('proxops show edge.plan.json', 'what apply --plan edge.plan.json would do')
        .example('proxops show edge.plan.json -o markdown', 'as a pull-request comment'),
    handler: async (args: ArgumentsCamelCase<ShowArgs>) =>
      setExit((await import('./show.js')).showHandler(ctx(), args)),
  }
}

export function adoptCommand(ctx: Ctx, setExit: Setter): CommandModule<GlobalArgs, AdoptArgs> {
  return {
    command: 'adopt',
    describe: 'Write manifests for what already runs on a cluster (reads PVE, never writes it)',
    builder: (y: Argv<GlobalArgs>) =>
      y
        .option('cluster', { type: 'string', requiresArg: true, describe: 'The cluster to adopt from (required)' })
        .option('force', { type: 'boolean', describe: 'Overwrite manifest files that exist with other content' })
        .option('adopt-secrets', { type: 'boolean', describe: "Merge unmatched SSH keys into the cluster's SOPS file" })
        .option('include-declared', {
          type: 'boolean',
          describe: 'Also adopt what the repository already declares (refreshes those manifests; see --force)',
        })
        .option('vmid', {
          type: 'number',
          array: true,
          requiresArg: true,
          describe: 'Only the guest with this vmid (repeatable)',
        })
        .option('name', {
          type: 'string',
          array: true,
          requiresArg: true,
          describe: 'Only the guest with this name (repeatable)',
        })
        .option('tag', {
          type: 'string',
          array: true,
          requiresArg: true,
          describe: 'Only the guests with this tag (repeatable)',
        })
        .example(
          'proxops adopt --cluster homelab',
          'write vm/homelab/*.yaml and friends, print the resources.yaml lines',
        )
        .example('proxops adopt --cluster homelab --adopt-secrets', 'also move live SSH keys into the SOPS file')
        .example('proxops adopt --cluster homelab --vmid 105 --tag db', 'only guest 105 and the guests tagged db'),
    handler: async (args: ArgumentsCamelCase<AdoptArgs>) =>
      setExit(await (await import('./adopt.js')).adoptHandler(ctx(), args)),
  }
}

export function runCommand(ctx: Ctx, setExit: Setter): CommandModule<GlobalArgs, RunArgs> {
  return {
    command: 'run',
    describe: 'The daemon: converge every poll interval; serves /healthz /readyz /metrics /status',
    builder: (y: Argv<GlobalArgs>) =>
      y
        .option('once', {
          type: 'boolean',
          describe: 'Run one tick, then exit (exit 1 if a cycle aborted or an action failed)',
        })
        .example('proxops run', 'converge now and every 30 s; logs as NDJSON on stderr')
        .example(
          'proxops run --git-url https://git.example/ops.git --listen 127.0.0.1:9494',
          'follow a remote repository',
        ),
    handler: async (args: ArgumentsCamelCase<RunArgs>) =>
      setExit(await (await import('./run.js')).runHandler(ctx(), args)),
  }
}

/** What suspend and resume act on: one object, or the whole cluster. */
const scoped = (y: Argv<GlobalArgs>) =>
  y
    .positional('object', { type: 'string', describe: 'One object, KIND/name (VM/web); absent: the whole cluster' })
    .option('cluster', {
      type: 'string',
      requiresArg: true,
      describe: 'The cluster (required when several are configured)',
    })

export function suspendCommand(ctx: Ctx, setExit: Setter): CommandModule<GlobalArgs, SuspendArgs> {
  return {
    command: 'suspend [object]',
    describe: 'Stop writing to a cluster or one object (KIND/name): still read and shown with its drift',
    builder: (y: Argv<GlobalArgs>) =>
      scoped(y)
        .option('reason', { type: 'string', requiresArg: true, describe: 'Why (required): shown on the status page' })
        .example('proxops suspend VM/db --cluster lab --reason "incident 42"', 'ProxOps stops writing to VM db')
        .example('proxops suspend --cluster lab --reason "PVE upgrade"', 'the whole cluster'),
    handler: async (args: ArgumentsCamelCase<SuspendArgs>) =>
      setExit(await (await import('./suspend.js')).suspendHandler(ctx(), args)),
  }
}

export function resumeCommand(ctx: Ctx, setExit: Setter): CommandModule<GlobalArgs, SuspendArgs> {
  return {
    command: 'resume [object]',
    describe: 'End a suspension of a cluster or one object (KIND/name): the next cycle converges it',
    builder: (y: Argv<GlobalArgs>) =>
      scoped(y).example('proxops resume VM/db --cluster lab', 'ProxOps writes to VM db again'),
    handler: async (args: ArgumentsCamelCase<SuspendArgs>) =>
      setExit(await (await import('./suspend.js')).resumeHandler(ctx(), args)),
  }
}

export function reconcileNowCommand(ctx: Ctx, setExit: Setter): CommandModule<GlobalArgs, ReconcileNowArgs> {
  return {
    command: 'reconcile',
    describe: 'Ask the running daemon (proxops run) to start a cycle now, not at the end of its poll interval',
    builder: (y: Argv<GlobalArgs>) =>
      y
        .option('cluster', {
          type: 'string',
          requiresArg: true,
          array: true,
          describe: 'Only this cluster (repeatable; default every cluster)',
        })
        .example('proxops reconcile', 'the daemon at the configured listen address starts a cycle now'),
    handler: async (args: ArgumentsCamelCase<ReconcileNowArgs>) =>
      setExit(await (await import('./reconcile-now.js')).reconcileNowHandler(ctx(), args)),
  }
}

export function initCommand(ctx: Ctx, setExit: Setter): CommandModule<GlobalArgs, InitArgs> {
  return {
    command: 'init [directory]',
    describe: 'Scaffold a repository: a cluster config, an age key if none, encrypted credentials and one VM',
    builder: (y: Argv<GlobalArgs>) =>
      y
        .positional('directory', { type: 'string', describe: 'Where (default: the current git repository, or .)' })
        .option('cluster', { type: 'string', requiresArg: true, describe: 'The cluster name (required)' })
        .option('endpoint', {
          type: 'string',
          requiresArg: true,
          describe: 'The PVE API URL, https://host:8006 (required)',
        })
        .option('token-id', {
          type: 'string',
          requiresArg: true,
          describe: 'The API token, user@realm!name (required; its secret: proxops-sops set, printed at the end)',
        })
        // repeated, not an array flag: an array flag would take the directory after it for a node
        .option('node', {
          type: 'string',
          requiresArg: true,
          describe: 'A node of the cluster (repeatable; the first one gets the VM) (required)',
        })
        .option('fingerprint', {
          type: 'string',
          requiresArg: true,
          describe: "The SHA-256 fingerprint of the API's certificate, AA:BB:...",
        })
        .option('age-key-file', {
          type: 'string',
          requiresArg: true,
          describe: 'The age key to use, created if missing (default $SOPS_AGE_KEY_FILE, else the SOPS default)',
        })
        .option('vmid', { type: 'number', requiresArg: true, describe: 'The VM id of the first VM (default 100)' })
        .option('storage', {
          type: 'string',
          requiresArg: true,
          describe: "The storage of the first VM's disk (default local-lvm)",
        })
        .option('bridge', { type: 'string', requiresArg: true, describe: "The first VM's bridge (default vmbr0)" })
        .example(
          "proxops init --cluster homelab --endpoint https://pve.example.net:8006 --token-id 'proxops@pve!gitops' --node pve1",
          'a repository for one cluster, here',
        ),
    handler: async (args: ArgumentsCamelCase<InitArgs>) =>
      setExit(await (await import('./init.js')).initHandler(ctx(), args)),
  }
}
