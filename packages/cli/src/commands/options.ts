/** Global flags and their argument type: light, so that --help loads no library. */
import type { Options } from 'yargs'

/** Global flags. No defaults here: a flag counts only when given. */
export const GLOBAL_OPTIONS = {
  config: {
    type: 'string',
    requiresArg: true,
    describe: 'Advanced: load this single config file (default $PROXOPS_CONFIG)',
    global: true,
  },
  'git-path': {
    type: 'string',
    requiresArg: true,
    describe: 'Explicit work tree (default $PROXOPS_GIT_PATH, else discovery from the cwd); disables URL mode',
    global: true,
  },
  'git-url': {
    type: 'string',
    requiresArg: true,
    describe: 'Switch to URL mode: fetch this repository into the data dir',
    global: true,
  },
  'git-branch': {
    type: 'string',
    requiresArg: true,
    describe: 'Branch to follow in URL mode (default main)',
    global: true,
  },
  'git-poll-sec': { type: 'number', describe: 'Daemon poll interval in seconds (0 = use config)', global: true },
  'prune-budget': {
    type: 'string',
    requiresArg: true,
    describe: 'Deletions per cluster per cycle: a number (0 = no prunes) or "unlimited"',
    global: true,
  },
  'pve-user': { type: 'string', requiresArg: true, describe: 'Bootstrap PVE user, such as root@pam', global: true },
  'pve-auth': {
    type: 'string',
    requiresArg: true,
    choices: ['token', 'ticket'],
    describe: 'PVE auth method',
    global: true,
  },
  'ca-file': {
    type: 'string',
    requiresArg: true,
    describe: 'PEM CA file for every PVE endpoint without its own tls.ca',
    global: true,
  },
  'data-dir': {
    type: 'string',
    requiresArg: true,
    describe: 'Git cache and daemon state directory (default ~/.local/share/proxops)',
    global: true,
  },
  'accept-endpoint': {
    type: 'string',
    array: true,
    requiresArg: true,
    describe: "Pin this cluster's SOPS credentials to its configured endpoint, replacing the earlier pin",
    global: true,
  },
  'log-level': {
    type: 'string',
    requiresArg: true,
    choices: ['debug', 'info', 'warn', 'error'],
    describe: 'Log level (logs go to stderr)',
    global: true,
  },
  'log-format': {
    type: 'string',
    requiresArg: true,
    choices: ['text', 'json'],
    describe: 'Log format (run defaults to json)',
    global: true,
  },
  listen: {
    type: 'string',
    requiresArg: true,
    describe: 'Daemon HTTP bind address host:port (default 127.0.0.1:9494)',
    global: true,
  },
  color: {
    type: 'boolean',
    describe: 'Colour output on a terminal (--no-color to disable; NO_COLOR is honoured)',
    global: true,
  },
} as const satisfies Record<string, Options>

export interface GlobalArgs {
  config?: string
  'git-path'?: string
  'git-url'?: string
  'git-branch'?: string
  'git-poll-sec'?: number
  'accept-endpoint'?: string[]
  'prune-budget'?: string
  'pve-user'?: string
  'pve-auth'?: string
  'ca-file'?: string
  'data-dir'?: string
  'log-level'?: string
  'log-format'?: string
  listen?: string
  color?: boolean
}
