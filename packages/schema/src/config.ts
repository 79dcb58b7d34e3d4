/**
 * Configuration files: the process-wide `proxops.yaml` (RB 6.1), cluster entries `pve.clusters.<name>`
 * (RB 6.2, normally in `clusters/<name>/config.yaml`) and the composition `clusters/<name>/resources.yaml`
 * (RB 2.3). Durations are normalised to **milliseconds**.
 */
import * as v from 'valibot'
import { issueMessage as m } from './errors.js'
import { checkClusterName, checkNodeName } from './names.js'
import { parseDuration } from './duration.js'
import { bool, checked, int, nonEmptyStr, oneOf, str } from './manifest/fields.js'
import { DISRUPTION_POLICIES } from './manifest/parse.js'

const objectMessage = (issue: v.BaseIssue<unknown>): string =>
  issue.expected === 'never'
    ? 'unknown key'
    : issue.received === 'undefined' && issue.path
      ? 'missing key'
      : m('field-type', `must be a mapping, got ${issue.received}`)
const obj = <T extends v.ObjectEntries>(entries: T, description: string) =>
  v.pipe(v.strictObject(entries, objectMessage), v.description(description))

const duration = (description: string, def: string) =>
  v.optional(
    v.pipe(
      v.string(m('field-type', 'must be a duration string such as "30s"')),
      v.description(description),
      checked('field-invalid', (s: string) => {
        const ms = parseDuration(s)
        return ms === undefined
          ? `"${s}" is not a duration: write e.g. 30s, 5m, 1h30m`
          : ms <= 0
            ? 'must be greater than zero'
            : undefined
      }),
      v.transform((s: string) => parseDuration(s)!),
    ),
    def,
  )

/** `http(s)://host[:port]`, optionally with a path; trailing `/` removed. */
export function checkBaseUrl(s: string): string | undefined {
  let url: URL
  try {
    url = new URL(s)
  } catch {
    return `base-url ${JSON.stringify(s)} is not a URL: write https://<host>:8006`
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return `base-url ${JSON.stringify(s)} must use https:// (or http://)`
  if (!url.hostname) return `base-url ${JSON.stringify(s)} has no host`
  if (url.username || url.password) return 'base-url must not carry credentials'
  if (url.search || url.hash) return 'base-url must not have a query or fragment'
  return undefined
}

export function normaliseBaseUrl(s: string): string {
  const url = new URL(s.trim())
  const path = url.pathname.replace(/\/+$/, '')
  return `${url.protocol}//${url.host}${path}`
}

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
    auth: v.optional(oneOf(['token', 'ticket'], 'Auth method for this cluster; default the process `pve.auth`.')),
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
    log: v.optional(
      obj({ level: v.optional(oneOf(['debug', 'info', 'warn', 'error'], 'Log level.'), 'info') }, 'Logging.'),
      {},
    ),
    pve: v.optional(
      obj(
        {
          auth: v.optional(oneOf(['token', 'ticket'], 'Auth method shared by all clusters.'), 'token'),
          user: v.optional(str('Bootstrap PVE user (e.g. root@pam).')),
          'token-id': v.optional(str('API token id.')),
          token: v.optional(str('API token secret (prefer PROXOPS_PVE_TOKEN or SOPS).')),
          'token-value': v.optional(str('Composed `user@realm!tokenid=uuid`.')),
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
          url: v.optional(str('Remote repository (URL mode).')),
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
    listen: v.optional(nonEmptyStr('HTTP bind address of the daemon (host:port).'), '127.0.0.1:9494'),
    'data-dir': v.optional(nonEmptyStr('Git cache and scratch directory; `~` expanded.'), '~/.local/share/proxops'),
  },
  'ProxOps process configuration.',
)

export type ProcessConfig = v.InferOutput<typeof processConfigSchema>
