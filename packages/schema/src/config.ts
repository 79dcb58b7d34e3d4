/**
 * Configuration files: the process-wide `proxops.yaml`, cluster entries `pve.clusters.<name>` (normally in
 * `clusters/<name>/config.yaml`). The one parser of both: `validate`, the CLI and the daemon read them through
 * these schemas and `configProblems` (see docs/configuration.md). Durations are normalised to **milliseconds**.
 */
import { baseUrlProblem, normaliseBaseUrl } from '@proxops/pve-client/wire'
import * as v from 'valibot'
import { issueMessage as m } from './errors.js'
import { checkClusterName, checkNodeName } from './names.js'
import { parseDuration } from './duration.js'
import { calendarEventError } from './kinds/backup-job/calendar-event.js'
import { bool, checked, int, nonEmptyStr, obj, oneOf, str } from './manifest/fields.js'
import { DEFAULT_SAFETY_SNAPSHOT_KEEP, DISRUPTION_POLICIES, IGNORE_FIELD_PATH } from './manifest/annotations.js'

/** `pve.auth`: an API token, or a ticket from a user and password */
export const AUTH_METHODS = ['token', 'ticket'] as const
export type AuthMethod = (typeof AUTH_METHODS)[number]
/** `log.level` (and `--log-level`) */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const duration = (description: string, def: string) =>
  v.optional(
    v.pipe(
      v.union([v.string(), v.number()], m('field-type', 'must be a duration such as "30s"')),
      v.description(description),
      v.transform((x: string | number) => String(x)),
      checked('field-invalid', (s: string) => {
        const ms = parseDuration(s)
        return ms === undefined
          ? `"${s}" is not a duration: write e.g. 30s, 1.5s, 5m, 1h30m`
          : ms <= 0
            ? 'must be greater than zero'
            : undefined
      }),
      v.transform((s: string) => parseDuration(s)!),
    ),
    def,
  )

/** `http(s)://host[:port]`, optionally with a path (pve-client's rule, baseUrlProblem). */
export function checkBaseUrl(s: string): string | undefined {
  const problem = baseUrlProblem(s)
  if (problem === undefined) return undefined
  // a value with `@` in it may hold credentials: it is not echoed
  return s.includes('@') ? `base-url ${problem}` : `base-url ${JSON.stringify(s)} ${problem}`
}

/** git remotes ProxOps can fetch: https://, ssh://, git://, file:// URLs or scp-style `user@host:path`. */
export function isGitUrl(url: string): boolean {
  return /^(https?|ssh|git|file):\/\/\S+$/.test(url) || /^[\w.-]+@[\w.-]+:\S+$/.test(url)
}

/** `host:port` or `[v6]:port`, the daemon's listen address. */
export function parseListen(text: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(text.trim())
  if (!match) return undefined
  const port = Number(match[3])
  if (port > 65535) return undefined
  return { host: (match[1] ?? match[2]) as string, port }
}

/** A host name (or IP address) the daemon answers to: no port, no scheme, no wildcard. */
export function checkAllowedHost(name: string): string | undefined {
  const host = name.toLowerCase()
  return /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.?$/.test(host) ||
    /^[0-9a-f:.]+$/.test(host)
    ? undefined
    : `"${name}" is not a host name: write it as the browser's address bar shows it, without scheme or port`
}

/** The token id of a composed `user@realm!tokenid=secret`, or undefined when malformed (never echoes it). */
export const TOKEN_VALUE = /^([^\s!=]+@[^\s!=]+![^\s!=]+)=(\S+)$/

const FINGERPRINT = /^[0-9A-F]{2}(?::[0-9A-F]{2}){31}$/

export const clusterEntrySchema = obj(
  {
    'base-url': v.pipe(
      v.string(m('field-type', 'must be a string')),
      v.description('PVE API endpoint of the cluster, `https://host[:port]`; unique across clusters.'),
      checked('config-invalid', checkBaseUrl),
      v.transform(normaliseBaseUrl),
    ),
    nodes: v.optional(
      v.pipe(
        v.array(
          v.pipe(v.string(m('field-type', 'must be a string')), checked('node-name-invalid', checkNodeName)),
          m('field-type', 'must be a list'),
        ),
        v.description('Node allowlist: the safety boundary for reads, writes and prunes. Empty = no allowlist check.'),
      ),
      [],
    ),
    'secrets-file': v.optional(
      str("SOPS file with this cluster's credentials, relative to the directory of the file declaring it."),
    ),
    secrets: v.optional(
      obj(
        {
          pve: v.optional(
            obj(
              {
                user: v.optional(nonEmptyStr('Key under the decrypted `secrets:` map holding the PVE user.')),
                'token-id': v.optional(nonEmptyStr('Key holding the token id.')),
                token: v.optional(nonEmptyStr('Key holding the token secret.')),
                password: v.optional(nonEmptyStr('Key holding the password (ticket auth).')),
              },
              'PVE credential keys.',
            ),
          ),
          git: v.optional(
            obj({ token: v.optional(nonEmptyStr('Key holding the git token (URL mode).')) }, 'Git credential keys.'),
          ),
        },
        'Names of keys in the decrypted SOPS document.',
      ),
    ),
    auth: v.optional(oneOf(AUTH_METHODS, 'Auth method for this cluster; default the process `pve.auth`.')),
    tls: v.optional(
      obj(
        {
          ca: v.optional(str('PEM CA file for this endpoint (e.g. /etc/pve/pve-root-ca.pem).')),
          fingerprint: v.optional(
            v.pipe(
              v.string(m('field-type', 'must be a string')),
              v.description('Pinned SHA-256 certificate fingerprint, `AA:BB:...` as PVE shows it.'),
              v.transform((s) => s.trim().toUpperCase()),
              v.regex(
                FINGERPRINT,
                m('config-invalid', 'fingerprint must be 32 colon-separated hex bytes (SHA-256), as PVE displays it'),
              ),
            ),
          ),
          insecure: v.optional(bool('Skip certificate verification (explicit opt-in; test setups only).')),
        },
        'TLS settings for this cluster.',
      ),
    ),
    disruption: v.optional(
      oneOf(
        DISRUPTION_POLICIES,
        'Most disruptive change class applied automatically (none, hotplug, reboot, stop); more disruptive changes stay pending and are reported.',
      ),
    ),
    'safety-snapshots': v.optional(
      obj(
        {
          keep: v.optional(
            int('Safety snapshots (proxops-<UTC timestamp>) kept per guest; older ones are deleted.', 1, 20),
            DEFAULT_SAFETY_SNAPSHOT_KEEP,
          ),
        },
        'Take a PVE snapshot of a guest before a restart- or stop-class change or a disk resize (docs/safety.md); a guest opts out with the annotation `proxops/safety-snapshots: "false"`.',
      ),
    ),
    access: v.optional(
      obj(
        {
          'role-prefix': v.optional(
            v.pipe(
              nonEmptyStr(
                "A role whose id starts with this prefix is this cluster entry's: ProxOps deletes such a role when git no longer declares it. Without it no role is ever deleted.",
              ),
              v.regex(
                /^[A-Za-z0-9.\-_]+$/,
                m('config-invalid', 'must be letters, digits, ".", "-" or "_" (a role id prefix)'),
              ),
              v.check((p) => !/^PVE/i.test(p), m('config-invalid', 'PVE reserves role ids starting with "PVE"')),
            ),
          ),
          'acknowledge-lockout': v.optional(
            bool(
              'Let a plan remove or weaken what the running credential holds, or the last holder of Permissions.Modify on `/` (the lock-out guards then only warn).',
            ),
            false,
          ),
          'token-secrets-dir': v.optional(
            str(
              "Where the secrets of tokens ProxOps creates are written, age-encrypted to the recipients of the cluster's secrets-file (mode 0600); default `<data-dir>/token-secrets/<cluster>`. Must be outside the repository.",
            ),
          ),
        },
        'Access as code (docs/access.md): the cluster manages its roles, groups, users, tokens and ACLs; the access objects are read every cycle.',
      ),
    ),
    'sync-windows': v.optional(
      v.pipe(
        v.array(
          obj(
            {
              kind: oneOf(
                ['allow', 'deny'] as const,
                '`allow`: disruptive changes run only inside such windows; `deny`: never inside.',
              ),
              schedule: v.pipe(
                v.string(m('field-type', 'must be a string')),
                v.description(
                  'When the window opens: a calendar event as PVE and systemd write them (`mon..fri 22:00`).',
                ),
                checked('config-invalid', (s: string) => calendarEventError(s) ?? undefined),
              ),
              duration: v.pipe(
                duration('How long the window stays open (`4h`, `30m`).', '1h'),
                v.check((ms) => ms <= 7 * 24 * 3600 * 1000, m('config-invalid', 'must be at most 7 days (168h)')),
              ),
              'time-zone': v.optional(
                v.pipe(
                  v.string(m('field-type', 'must be a string')),
                  v.description('The time zone the schedule is read in (IANA, `Europe/Berlin`); default UTC.'),
                  checked('config-invalid', (z: string) => {
                    try {
                      new Intl.DateTimeFormat('en-US', { timeZone: z })
                      return undefined
                    } catch {
                      return `unknown time zone ${JSON.stringify(z)}: write an IANA name such as Europe/Berlin`
                    }
                  }),
                ),
                'UTC',
              ),
            },
            'One sync window.',
          ),
        ),
        v.description(
          'When disruptive changes (reboot, stop, migration, delete) may run; hotplug changes never wait (docs/operations.md, "Sync windows").',
        ),
      ),
    ),
    notifications: v.optional(
      v.pipe(
        v.array(
          obj(
            {
              type: oneOf(
                ['webhook', 'ntfy', 'slack', 'matrix'] as const,
                'Where to: a generic JSON webhook, ntfy, a Slack-compatible incoming webhook, or Matrix.',
              ),
              url: v.optional(str('The webhook or ntfy topic URL, or the Matrix homeserver.')),
              'url-secret': v.optional(
                nonEmptyStr('Key under the SOPS `secrets:` map holding the URL (a Slack webhook URL is a secret).'),
              ),
              'token-secret': v.optional(
                nonEmptyStr('Key holding a bearer token (ntfy, webhook) or the Matrix access token.'),
              ),
              room: v.optional(nonEmptyStr('The Matrix room id, !id:server.')),
            },
            'One notification target.',
          ),
        ),
        v.description(
          'Where the daemon reports changes of state: a failed cycle, recovery, a blocked object, drift, a prune (docs/operations.md, "Notifications").',
        ),
      ),
    ),
    webhooks: v.optional(
      obj(
        {
          github: v.optional(nonEmptyStr('Key under the SOPS `secrets:` map holding the GitHub webhook secret.')),
          gitlab: v.optional(nonEmptyStr('Key holding the GitLab webhook secret token.')),
          gitea: v.optional(nonEmptyStr('Key holding the Gitea or Forgejo webhook secret.')),
          generic: v.optional(nonEmptyStr('Key holding the secret of the generic HMAC-SHA256 receiver.')),
        },
        'Push webhook receivers of `proxops run`, at /hooks/<cluster>/<forge>, each with its secret from the SOPS file (docs/operations.md, "Push webhooks").',
      ),
    ),
    policy: v.optional(
      obj(
        {
          prune: v.optional(
            oneOf(
              ['allow', 'never'] as const,
              '`never`: nothing of this cluster is ever deleted by ProxOps (reported instead).',
            ),
          ),
          'prune-never': v.optional(
            v.pipe(
              v.array(nonEmptyStr('KIND/name, such as VM/db.')),
              v.description('Objects never deleted, even after they left git (KIND/name).'),
            ),
          ),
          'ignore-fields': v.optional(
            v.pipe(
              v.record(
                v.string(),
                v.array(
                  v.pipe(
                    v.string(m('field-type', 'must be a string')),
                    v.regex(IGNORE_FIELD_PATH, m('config-invalid', 'must be a manifest path such as spec.memory')),
                  ),
                ),
              ),
              v.description(
                'Per guest kind (VM, LXC, ...), manifest paths whose live values are never compared; a manifest adds its own with `proxops/ignore-fields`.',
              ),
            ),
          ),
        },
        'The cluster\'s per-object policy defaults (docs/operations.md, "Per-object policies").',
      ),
    ),
  },
  'One PVE cluster.',
)

export type ClusterEntry = v.InferOutput<typeof clusterEntrySchema>

const clusterName = v.pipe(v.string(), checked('cluster-name-invalid', checkClusterName))

const pruneBudget = v.optional(
  v.pipe(
    v.union([v.literal('unlimited'), v.number()], m('field-type', 'must be a whole number or "unlimited"')),
    v.description('Maximum prunes per cycle per cluster; 0 = no prunes, "unlimited" = no cap.'),
    checked('field-invalid', (x: number | 'unlimited') =>
      x === 'unlimited' || (Number.isInteger(x) && x >= 0) ? undefined : 'must be a whole number >= 0 or "unlimited"',
    ),
  ),
  3,
)

/** The process-wide settings (proxops.yaml); a cluster-local file has the same shape. */
export const processConfigSchema = obj(
  {
    log: v.optional(obj({ level: v.optional(oneOf(LOG_LEVELS, 'Log level.'), 'info') }, 'Logging.'), {}),
    pve: v.optional(
      obj(
        {
          auth: v.optional(oneOf(AUTH_METHODS, 'Auth method shared by all clusters.'), 'token'),
          user: v.optional(str('Bootstrap PVE user (e.g. root@pam).')),
          'token-id': v.optional(str('API token id.')),
          token: v.optional(str('API token secret (prefer PROXOPS_PVE_TOKEN or SOPS).')),
          'token-value': v.optional(
            v.pipe(
              str('Composed `user@realm!tokenid=uuid`.'),
              checked('config-invalid', (t: string) =>
                TOKEN_VALUE.test(t.trim())
                  ? undefined
                  : 'must look like user@realm!tokenid=secret (the value is not shown)',
              ),
            ),
          ),
          password: v.optional(str('Password (ticket auth only).')),
          'ca-file': v.optional(str('PEM CA for every endpoint; `~` expanded.')),
          clusters: v.optional(
            v.pipe(
              v.record(clusterName, clusterEntrySchema, m('field-type', 'must be a mapping of cluster names')),
              v.description('Inline clusters (normally empty: clusters come from clusters/<name>/config.yaml).'),
            ),
            {},
          ),
        },
        'PVE connection defaults.',
      ),
      {},
    ),
    git: v.optional(
      obj(
        {
          url: v.optional(
            v.pipe(
              str('Remote repository (URL mode).'),
              checked('config-invalid', (u: string) =>
                isGitUrl(u) ? undefined : 'must be an https://, ssh://, git@host:path or file:// URL',
              ),
            ),
          ),
          branch: v.optional(nonEmptyStr('Branch.'), 'main'),
          token: v.optional(str('HTTPS token (prefer env or SOPS).')),
          path: v.optional(str('Local work tree (local mode); "." = the .git ancestor of this file.')),
        },
        'Git source.',
      ),
      {},
    ),
    reconcile: v.optional(
      obj(
        {
          'poll-interval': duration('Daemon cadence.', '30s'),
          'task-timeout': duration('Maximum wait per PVE task.', '30m'),
          'prune-budget': pruneBudget,
          'prune-window': v.optional(
            obj(
              {
                max: v.optional(int('Maximum prunes per window per cluster (daemon).', 0), 10),
                period: duration('Sliding window length.', '1h'),
              },
              'Sliding-window prune limit of the daemon.',
            ),
            {},
          ),
          'shutdown-timeout': duration('Graceful shutdown wait before a stop-class change.', '120s'),
          disruption: v.optional(oneOf(DISRUPTION_POLICIES, 'Default disruption policy for all clusters.'), 'stop'),
        },
        'Reconcile settings.',
      ),
      {},
    ),
    listen: v.optional(
      v.pipe(
        nonEmptyStr('HTTP bind address of the daemon (host:port).'),
        checked('config-invalid', (l: string) =>
          parseListen(l) ? undefined : 'must be host:port, such as 127.0.0.1:9494',
        ),
      ),
      '127.0.0.1:9494',
    ),
    'allowed-hosts': v.optional(
      v.pipe(
        v.array(
          v.pipe(v.string(m('field-type', 'must be a string')), checked('config-invalid', checkAllowedHost)),
          m('field-type', 'must be a list'),
        ),
        v.description(
          'Names the daemon answers to besides its listen address and localhost (the `Host` header; others get 421).',
        ),
      ),
      [],
    ),
    'data-dir': v.optional(nonEmptyStr('Git cache and scratch directory; `~` expanded.'), '~/.local/share/proxops'),
  },
  'ProxOps process configuration.',
)

export type ProcessConfig = v.InferOutput<typeof processConfigSchema>

/** A problem found after the schema: a path in the document and a message (code `config-invalid`). */
export interface ConfigProblem {
  path: (string | number)[]
  message: string
  /** point at the key rather than the value */
  key?: boolean
}

const CLUSTER_LOCAL_FORBIDDEN: ReadonlyArray<readonly [string, string]> = [
  ['pve', 'user'],
  ['pve', 'token-id'],
  ['pve', 'token'],
  ['pve', 'token-value'],
  ['pve', 'password'],
  ['pve', 'ca-file'],
  ['git', 'url'],
  ['git', 'token'],
  ['git', 'branch'],
]

function has(doc: unknown, path: readonly string[]): boolean {
  let at: unknown = doc
  for (const key of path) {
    if (typeof at !== 'object' || at === null || !(key in at)) return false
    at = (at as Record<string, unknown>)[key]
  }
  return at !== undefined && at !== null
}

/**
 * The rules across fields of one validated config file, shared by `validate` and every command. `doc` is the
 * file as written (which keys it sets); `clusterLocal` names the cluster of a `clusters/<name>/config.yaml`.
 */
export function configProblems(cfg: ProcessConfig, doc: unknown, clusterLocal?: string): ConfigProblem[] {
  const out: ConfigProblem[] = []
  if (cfg.git.url !== undefined && cfg.git.path !== undefined) {
    out.push({ path: ['git', 'path'], key: true, message: 'git.url and git.path are mutually exclusive: keep one' })
  }
  if (cfg.pve.auth === 'token' && cfg.pve.password) {
    out.push({
      path: ['pve', 'password'],
      key: true,
      message: 'pve.password must be empty with auth: token (use auth: ticket for password login)',
    })
  }
  if (clusterLocal !== undefined) {
    for (const path of CLUSTER_LOCAL_FORBIDDEN) {
      if (has(doc, path)) {
        out.push({
          path: [...path],
          key: true,
          message: `${path.join('.')} is not allowed in a cluster-local config: put credentials in the SOPS file or environment, process settings in proxops.yaml`,
        })
      }
    }
    if (cfg.git.path !== undefined && cfg.git.path !== '.')
      out.push({ path: ['git', 'path'], message: 'git.path: only "." is allowed in a cluster-local config' })
  }
  for (const [name, entry] of Object.entries(cfg.pve.clusters)) {
    const at = (...rest: (string | number)[]) => ['pve', 'clusters', name, ...rest]
    const seen = new Set<string>()
    entry.nodes.forEach((node, i) => {
      if (seen.has(node)) out.push({ path: at('nodes', i), message: `duplicate node "${node}"` })
      seen.add(node)
    })
    if (entry.tls?.insecure && entry.tls.fingerprint !== undefined) {
      out.push({
        path: at('tls', 'insecure'),
        message:
          'tls.insecure conflicts with tls.fingerprint: a pinned fingerprint already trusts that certificate; drop one',
      })
    }
    if (entry.tls?.insecure && entry.tls.ca !== undefined)
      out.push({ path: at('tls', 'insecure'), message: 'tls.insecure conflicts with tls.ca; drop one' })
    const refs = entry.secrets
    const hasRefs = Object.values(refs?.pve ?? {}).some((x) => x !== undefined) || refs?.git?.token !== undefined
    if (hasRefs && entry['secrets-file'] === undefined)
      out.push({ path: at('secrets'), key: true, message: 'secrets references SOPS keys but secrets-file is not set' })
  }
  return out
}

/** One validated config file: its settings (defaults applied) and the document as written. */
export interface ConfigLayer {
  /** the file's name in messages */
  file: string
  config: ProcessConfig
  /** the YAML document as plain data: which settings the file writes */
  doc: unknown
}

const isMapping = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x)

/** Process settings a cluster-local file may still carry (the legacy layout); everything else is per cluster. */
export const LEGACY_PROCESS_KEYS = ['log', 'reconcile', 'listen', 'data-dir'] as const

/** The part of a cluster-local file's document that sets process settings. */
export function legacySettings(doc: unknown): Record<string, unknown> {
  if (!isMapping(doc)) return {}
  return Object.fromEntries(
    LEGACY_PROCESS_KEYS.filter((k) => doc[k] !== undefined && doc[k] !== null).map((k) => [k, doc[k]]),
  )
}

function leaves(
  doc: unknown,
  config: unknown,
  prefix: string[],
  out: Map<string, { path: string[]; value: unknown }>,
): void {
  if (!isMapping(doc)) return
  for (const [key, value] of Object.entries(doc)) {
    if (value === null || value === undefined) continue
    const sub = isMapping(config) ? config[key] : undefined
    if (isMapping(value) && isMapping(sub) && !(prefix.length === 1 && prefix[0] === 'pve' && key === 'clusters'))
      leaves(value, sub, [...prefix, key], out)
    else out.set([...prefix, key].join('.'), { path: [...prefix, key], value: sub })
  }
}

/**
 * The process settings of several config files, lowest first: each setting from the highest file that writes
 * it, else its default. `pve.clusters` is not layered (every cluster is declared once; the loader checks that).
 */
export function layerProcessConfig(layers: readonly ConfigLayer[]): ProcessConfig {
  const out: ProcessConfig = v.parse(processConfigSchema, {})
  for (const layer of layers) {
    const set = new Map<string, { path: string[]; value: unknown }>()
    leaves(layer.doc, layer.config, [], set)
    for (const { path, value } of set.values()) {
      if (path[0] === 'pve' && path[1] === 'clusters') continue
      let at = out as unknown as Record<string, unknown>
      for (const key of path.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>
      at[path[path.length - 1]!] = value
    }
  }
  return out
}

/** Process settings written by two cluster-local files with different values (legacy layout): each one once. */
export function legacyConflicts(
  layers: readonly ConfigLayer[],
): Array<ConfigProblem & { file: string; other: string }> {
  const seen = new Map<string, { value: string; file: string }>()
  const out: Array<ConfigProblem & { file: string; other: string }> = []
  for (const layer of layers) {
    const set = new Map<string, { path: string[]; value: unknown }>()
    leaves(legacySettings(layer.doc), layer.config, [], set)
    for (const [field, { path, value }] of set) {
      const text = JSON.stringify(value)
      const prior = seen.get(field)
      if (prior && prior.value !== text)
        out.push({
          path,
          file: layer.file,
          other: prior.file,
          message: `${field} conflicts with ${prior.file}; move it to proxops.yaml`,
        })
      else if (!prior) seen.set(field, { value: text, file: layer.file })
    }
  }
  return out
}
