/**
 * Pure configuration resolution. @proxops/schema has parsed, validated and defaulted every file (the same
 * parser `validate` uses) and layers their process settings (proxops.yaml, the --config file, legacy
 * process fields of cluster-local files); this module adds only what the command line and the environment
 * say: flags given on the command line, then environment variables for credentials. SOPS values beat env,
 * which beats YAML, per cluster. Every rejection names the file, field or flag.
 */
import path from 'node:path'
import {
  AUTH_METHODS,
  LOG_LEVELS,
  TOKEN_VALUE,
  canonicalKind,
  isGitUrl,
  layerProcessConfig,
  legacyConflicts,
  legacySettings,
  parseListen,
  type ClusterEntry,
  type ConfigLayer,
  type ProcessConfig,
} from '@proxops/schema'
import { CliError, settingProblem } from '../errors.js'
import type { ConfigFile } from './raw.js'
import type {
  AuthMethod,
  ClusterConfig,
  ClusterPolicy,
  Credentials,
  DraftConfig,
  GlobalFlags,
  PruneBudget,
  ResolvedCluster,
  ResolvedConfig,
  SopsSecrets,
} from './types.js'

export { parseListen }

export interface ClusterFile {
  /** the directory name under clusters/ */
  name: string
  raw: ConfigFile
}

export interface MergeInput {
  /** the repository root (local mode: the tree that is read; URL mode: where cluster configs live) */
  root: string
  /** `<root>/proxops.yaml` when present */
  rootFile?: ConfigFile
  /** the `--config` file, when given (layered above rootFile; its git source wins) */
  configFile?: ConfigFile
  clusterFiles: readonly ClusterFile[]
  flags: GlobalFlags
  /** for `~` expansion and the default data dir */
  home: string
  /** flags' relative paths resolve against it */
  cwd: string
}

/** A problem of a config file only the merged configuration shows (no position): `validate`'s format. */
function invalid(message: string, file: string, field: string): never {
  throw new CliError('CONFIG_INVALID', settingProblem('config-invalid', file, field, message))
}

/** A path as written in a file or flag: `~` and `~/` are HOME, a relative path is relative to `base`. */
export function expand(p: string, home: string, base: string): string {
  const tilde = p === '~' ? home : p.startsWith('~/') ? path.join(home, p.slice(2)) : p
  return path.resolve(base, tilde)
}

/** Where ProxOps keeps its state when nothing names a data dir. */
export const defaultDataDir = (home: string): string => path.join(home, '.local', 'share', 'proxops')

/** whether a flag's text is one of the values the config file accepts for that setting */
const oneOf = <T extends string>(values: readonly T[], text: string): text is T =>
  (values as readonly string[]).includes(text)

function flagError(flag: string, message: string): never {
  throw new CliError('USAGE', `${flag} ${message}`)
}

/** Whether a file writes the setting at `keys` (it was not left to the default). */
function writes(file: ConfigFile | undefined, ...keys: string[]): boolean {
  let at: unknown = file?.layer.doc
  for (const key of keys) {
    if (typeof at !== 'object' || at === null) return false
    at = (at as Record<string, unknown>)[key]
  }
  return at !== undefined && at !== null
}

/** The highest of `files` that writes the setting (for relative paths and messages). */
function writer(files: ReadonlyArray<ConfigFile | undefined>, ...keys: string[]): ConfigFile | undefined {
  return [...files].reverse().find((f) => writes(f, ...keys))
}

export function parsePruneBudget(text: string): PruneBudget | undefined {
  const trimmed = text.trim()
  if (trimmed === 'unlimited') return 'unlimited'
  return /^\d+$/.test(trimmed) ? Number(trimmed) : undefined
}

/** Merges files and flags into a DraftConfig (no credentials yet). */
export function mergeConfig(input: MergeInput): DraftConfig {
  const { flags, home } = input
  const legacyFiles = input.clusterFiles.map((c) => c.raw)
  const conflict = legacyConflicts(legacyFiles.map((f) => f.layer))[0]
  if (conflict) invalid(conflict.message.replace(/^\S+ /, ''), conflict.file, conflict.path.join('.'))
  const legacy: ConfigLayer[] = legacyFiles.map((f) => ({ ...f.layer, doc: legacySettings(f.layer.doc) }))
  const files = [input.rootFile, input.configFile]
  const cfg: ProcessConfig = layerProcessConfig([...files.flatMap((f) => (f ? [f.layer] : [])), ...legacy])
  // relative paths in a file are relative to that file
  const dirOf = (...keys: string[]): string => {
    const f = writer([...files, ...legacyFiles], ...keys)
    return f ? path.dirname(f.file) : input.root
  }

  const level = flags.logLevel ?? cfg.log.level
  if (!oneOf(LOG_LEVELS, level)) flagError('--log-level', `must be one of ${LOG_LEVELS.join(', ')}`)
  const format = flags.logFormat ?? 'text'
  if (format !== 'text' && format !== 'json') flagError('--log-format', 'must be text or json')

  const auth = flags.pveAuth ?? cfg.pve.auth
  if (!oneOf(AUTH_METHODS, auth)) flagError('--pve-auth', `must be ${AUTH_METHODS.join(' or ')}`)
  const globalCa =
    flags.caFile !== undefined
      ? expand(flags.caFile, home, input.cwd)
      : cfg.pve['ca-file'] !== undefined
        ? expand(cfg.pve['ca-file'], home, dirOf('pve', 'ca-file'))
        : undefined

  const git = mergeGit(input)

  let pollIntervalMs = cfg.reconcile['poll-interval']
  if (flags.gitPollSec !== undefined) {
    if (!Number.isInteger(flags.gitPollSec) || flags.gitPollSec < 0)
      flagError('--git-poll-sec', 'must be a whole number of seconds')
    if (flags.gitPollSec > 0) pollIntervalMs = flags.gitPollSec * 1000
  }
  const pruneBudget: PruneBudget =
    flags.pruneBudget !== undefined
      ? (parsePruneBudget(flags.pruneBudget) ??
        flagError('--prune-budget', 'must be a whole number >= 0 (0 = no prunes) or "unlimited"'))
      : cfg.reconcile['prune-budget']
  const listenText = flags.listen ?? cfg.listen
  const listen = parseListen(listenText) ?? flagError('--listen', 'must be host:port, such as 127.0.0.1:9494')
  const dataDir =
    flags.dataDir !== undefined
      ? expand(flags.dataDir, home, input.cwd)
      : writer([...files, ...legacyFiles], 'data-dir')
        ? expand(cfg['data-dir'], home, dirOf('data-dir'))
        : defaultDataDir(home)

  const clusters = mergeClusters(input, auth, globalCa)
  if (clusters.length === 0) {
    throw new CliError(
      'CONFIG_INVALID',
      `at least one named PVE cluster is required: add clusters/<name>/config.yaml under ${input.root}`,
    )
  }
  return {
    root: input.root,
    log: { level, format },
    pve: {
      auth,
      ...optional('user', flags.pveUser ?? cfg.pve.user),
      ...optional('tokenId', cfg.pve['token-id']),
      ...optional('token', cfg.pve.token),
      ...optional('tokenValue', cfg.pve['token-value']),
      ...optional('password', cfg.pve.password),
    },
    git,
    reconcile: {
      pollIntervalMs,
      taskTimeoutMs: cfg.reconcile['task-timeout'],
      pruneBudget,
      pruneWindow: { max: cfg.reconcile['prune-window'].max, periodMs: cfg.reconcile['prune-window'].period },
      shutdownTimeoutMs: cfg.reconcile['shutdown-timeout'],
      disruption: cfg.reconcile.disruption,
    },
    listen,
    allowedHosts: cfg['allowed-hosts'],
    dataDir,
    clusters,
  }
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string }
}

function mergeGit(input: MergeInput): DraftConfig['git'] {
  const { flags } = input
  // the git source comes from the --config file when one is given, else from proxops.yaml
  const source = input.configFile ?? input.rootFile
  const g = source?.layer.config.git
  const branch = flags.gitBranch ?? g?.branch ?? 'main'
  if (branch.trim() === '') flagError('--git-branch', 'must not be empty')
  const extra = g?.token ? { token: g.token } : {}
  // --git-path pins local mode; --git-url switches to URL mode; otherwise the file decides
  if (flags.gitPath !== undefined) return { branch, path: input.root, ...extra }
  if (flags.gitUrl !== undefined && !isGitUrl(flags.gitUrl))
    flagError('--git-url', 'must be an https://, ssh://, git@host:path or file:// URL')
  const url = flags.gitUrl ?? g?.url
  if (url !== undefined) return { url, branch, ...extra }
  return { branch, path: input.root, ...extra }
}

function mergeClusters(input: MergeInput, globalAuth: AuthMethod, globalCa: string | undefined): ClusterConfig[] {
  const out = new Map<string, ClusterConfig>()
  // lowest first: proxops.yaml inline clusters, then the --config file's, then cluster-local files
  for (const file of [input.rootFile, input.configFile]) {
    for (const [name, entry] of Object.entries(file?.layer.config.pve.clusters ?? {})) {
      out.set(name, clusterEntry(name, entry, file!, globalAuth, globalCa, input.home))
    }
  }
  for (const { name, raw } of input.clusterFiles) {
    const entry = raw.layer.config.pve.clusters[name]
    if (!entry) invalid(`must declare exactly pve.clusters.${name}`, raw.layer.file, 'pve.clusters')
    // a cluster-local pve.auth is that cluster's auth method
    const auth = writes(raw, 'pve', 'auth') ? raw.layer.config.pve.auth : globalAuth
    out.set(name, clusterEntry(name, entry, raw, auth, globalCa, input.home))
  }
  // unique endpoints: two clusters on one PVE would prune each other's objects
  const byUrl = new Map<string, string>()
  const sorted = [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const cluster of sorted) {
    const other = byUrl.get(cluster.baseUrl)
    if (other)
      invalid(
        `base-url ${cluster.baseUrl} is already used by cluster "${other}"; each cluster needs its own endpoint`,
        cluster.file,
        `pve.clusters.${cluster.name}.base-url`,
      )
    byUrl.set(cluster.baseUrl, cluster.name)
  }
  return sorted
}

/** A validated cluster entry plus what the CLI adds: paths resolved, the effective auth method and CA. */
function clusterEntry(
  name: string,
  entry: ClusterEntry,
  file: ConfigFile,
  auth: AuthMethod,
  globalCa: string | undefined,
  home: string,
): ClusterConfig {
  const tls = entry.tls ?? {}
  const insecure = tls.insecure ?? false
  const caFile = tls.ca !== undefined ? expand(tls.ca, home, path.dirname(file.file)) : globalCa
  const secretsFile = file.secretsFiles[name]
  const refs = entry.secrets ?? {}
  return {
    name,
    baseUrl: entry['base-url'],
    nodes: [...entry.nodes],
    file: file.layer.file,
    ...(secretsFile ? { secretsFile } : {}),
    secretRefs: {
      pve: { ...camelRefs(refs.pve) },
      git: { ...(refs.git?.token !== undefined ? { token: refs.git.token } : {}) },
    },
    auth: entry.auth ?? auth,
    tls: {
      ...(caFile && !insecure ? { caFile } : {}),
      ...(tls.fingerprint ? { fingerprint: tls.fingerprint } : {}),
      insecure,
    },
    ...(entry.disruption ? { disruption: entry.disruption } : {}),
    ...(entry['safety-snapshots'] ? { safetySnapshots: { keep: entry['safety-snapshots'].keep } } : {}),
    ...(entry.access
      ? {
          access: {
            ...optional('rolePrefix', entry.access['role-prefix']),
            acknowledgeLockout: entry.access['acknowledge-lockout'],
            ...optional('tokenSecretsDir', entry.access['token-secrets-dir']),
          },
        }
      : {}),
    ...(entry.policy ? { policy: clusterPolicy(entry.policy, file.layer.file) } : {}),
    ...(entry.webhooks && Object.keys(entry.webhooks).length > 0 ? { webhooks: { ...entry.webhooks } } : {}),
    ...(entry['sync-windows'] && entry['sync-windows'].length > 0
      ? {
          syncWindows: entry['sync-windows'].map((w) => ({
            kind: w.kind,
            schedule: w.schedule,
            durationMs: w.duration,
            timeZone: w['time-zone'],
          })),
        }
      : {}),
    ...(entry.notifications && entry.notifications.length > 0
      ? {
          notifications: entry.notifications.map((n) => {
            if ((n.url === undefined) === (n['url-secret'] === undefined))
              throw new CliError('CONFIG_INVALID', `${file.layer.file}: notifications: give one of url and url-secret`)
            if (n.type === 'matrix' && n.room === undefined)
              throw new CliError('CONFIG_INVALID', `${file.layer.file}: notifications: a matrix target needs room`)
            return {
              type: n.type,
              ...(n.url !== undefined ? { url: n.url } : {}),
              ...(n['url-secret'] !== undefined ? { urlSecret: n['url-secret'] } : {}),
              ...(n['token-secret'] !== undefined ? { tokenSecret: n['token-secret'] } : {}),
              ...(n.room !== undefined ? { room: n.room } : {}),
            }
          }),
        }
      : {}),
  }
}

/** The cluster's `policy:` block; `prune-never` entries are `KIND/name`, checked here as the CLI spells them. */
function clusterPolicy(p: NonNullable<ClusterEntry['policy']>, file: string): ClusterPolicy {
  const keep = (p['prune-never'] ?? []).map((text) => {
    const slash = text.indexOf('/')
    const kind = slash > 0 ? canonicalKind(text.slice(0, slash)) : undefined
    if (!kind || slash === text.length - 1)
      throw new CliError('CONFIG_INVALID', `${file}: policy.prune-never: ${text} must be KIND/name, such as VM/db`)
    return { kind, name: text.slice(slash + 1) }
  })
  const ignoreFields: Record<string, string[]> = {}
  for (const [kind, paths] of Object.entries(p['ignore-fields'] ?? {})) {
    const canonical = canonicalKind(kind)
    if (!canonical)
      throw new CliError('CONFIG_INVALID', `${file}: policy.ignore-fields: unknown kind ${JSON.stringify(kind)}`)
    ignoreFields[canonical] = [...(ignoreFields[canonical] ?? []), ...paths]
  }
  return { pruneNever: p.prune === 'never', keep, ignoreFields }
}

function camelRefs(pve: NonNullable<ClusterEntry['secrets']>['pve']): ClusterConfig['secretRefs']['pve'] {
  return {
    ...optional('user', pve?.user),
    ...optional('tokenId', pve?.['token-id']),
    ...optional('token', pve?.token),
    ...optional('password', pve?.password),
  }
}

export const CREDENTIAL_ENV = {
  user: 'PROXOPS_PVE_USER',
  token: 'PROXOPS_PVE_TOKEN',
  tokenValue: 'PROXOPS_PVE_TOKEN_VALUE',
  password: 'PROXOPS_PVE_PASSWORD',
  gitToken: 'PROXOPS_GIT_TOKEN',
  gitSshKeyFile: 'PROXOPS_GIT_SSH_KEY_FILE',
  gitKnownHosts: 'PROXOPS_GIT_KNOWN_HOSTS',
} as const

type Env = Readonly<Record<string, string | undefined>>

function envValue(env: Env, name: string): string | undefined {
  const value = env[name]?.trim()
  return value ? value : undefined
}

/** Resolves every cluster's effective credentials: SOPS > env > YAML. Fails closed, never echoing a value. */
export function resolveCredentials(draft: DraftConfig, env: Env, sops: SopsSecrets): ResolvedConfig {
  let sopsGitToken: { value: string; cluster: string } | undefined
  const clusters: ResolvedCluster[] = draft.clusters.map((cluster) => {
    const doc = cluster.secretsFile ? sops[cluster.name] : undefined
    const fromSops = (kind: 'pve' | 'git', field: string, key: string | undefined): string | undefined => {
      if (key === undefined) return undefined
      const value = doc?.[key]?.trim()
      if (!value) {
        throw new CliError(
          'CONFIG_CREDENTIALS',
          `secrets.${kind}.${field} names key "${key}", which is missing or empty under secrets: in ${cluster.secretsFile}`,
          { field: `pve.clusters.${cluster.name}` },
        )
      }
      return value
    }
    const refs = cluster.secretRefs.pve
    const sopsUser = fromSops('pve', 'user', refs.user)
    const sopsTokenId = fromSops('pve', 'token-id', refs.tokenId)
    const sopsToken = fromSops('pve', 'token', refs.token)
    const sopsPassword = fromSops('pve', 'password', refs.password)
    const usedSops = [sopsUser, sopsTokenId, sopsToken, sopsPassword].some((v) => v !== undefined)

    const user = sopsUser ?? envValue(env, CREDENTIAL_ENV.user) ?? blankToUndefined(draft.pve.user)
    const tokenId = sopsTokenId ?? blankToUndefined(draft.pve.tokenId)
    const token = sopsToken ?? envValue(env, CREDENTIAL_ENV.token) ?? blankToUndefined(draft.pve.token)
    const password = sopsPassword ?? envValue(env, CREDENTIAL_ENV.password) ?? blankToUndefined(draft.pve.password)
    // a SOPS cluster never receives the global composed token value
    const tokenValue = usedSops
      ? undefined
      : (envValue(env, CREDENTIAL_ENV.tokenValue) ?? blankToUndefined(draft.pve.tokenValue))

    // the git token is read only where it is used, in URL mode (as the reference reads secrets.git.token): a local
    // repository needs no `proxops-git-token` in its SOPS files
    const gitToken = draft.git.url !== undefined ? fromSops('git', 'token', cluster.secretRefs.git.token) : undefined
    if (gitToken !== undefined) {
      if (sopsGitToken && sopsGitToken.value !== gitToken) {
        throw new CliError(
          'CONFIG_CREDENTIALS',
          `git token conflict: clusters "${sopsGitToken.cluster}" and "${cluster.name}" resolve different SOPS git tokens, but all clusters share one git source`,
        )
      }
      sopsGitToken ??= { value: gitToken, cluster: cluster.name }
    }
    return { ...cluster, credentials: credentialsFor(cluster, { user, tokenId, token, password, tokenValue }) }
  })
  const gitToken = sopsGitToken?.value ?? envValue(env, CREDENTIAL_ENV.gitToken) ?? blankToUndefined(draft.git.token)
  const { pve: _pve, clusters: _clusters, ...rest } = draft
  const { token: _token, ...gitRest } = draft.git
  const sshKeyFile = envValue(env, CREDENTIAL_ENV.gitSshKeyFile)
  const knownHostsFile = envValue(env, CREDENTIAL_ENV.gitKnownHosts)
  return {
    ...rest,
    git: {
      ...gitRest,
      ...(gitToken ? { token: gitToken } : {}),
      ...(sshKeyFile ? { sshKeyFile } : {}),
      ...(knownHostsFile ? { knownHostsFile } : {}),
    },
    clusters,
  }
}

function blankToUndefined(value: string | undefined): string | undefined {
  const trimmed = value?.trim()
  return trimmed ? trimmed : undefined
}

function credentialsFor(
  cluster: ClusterConfig,
  c: { user?: string; tokenId?: string; token?: string; password?: string; tokenValue?: string },
): Credentials {
  const where = { field: `pve.clusters.${cluster.name}` }
  if (cluster.auth === 'ticket') {
    if (!c.user)
      throw new CliError(
        'CONFIG_CREDENTIALS',
        `no effective PVE user after credential resolution: set secrets.pve.user, ${CREDENTIAL_ENV.user} or pve.user`,
        where,
      )
    if (!c.password)
      throw new CliError(
        'CONFIG_CREDENTIALS',
        `ticket auth needs a password: set secrets.pve.password or ${CREDENTIAL_ENV.password}`,
        where,
      )
    return { method: 'ticket', user: c.user, password: c.password }
  }
  if (c.password) {
    throw new CliError(
      'CONFIG_CREDENTIALS',
      `a PVE password is set but pve.auth is token: unset it (${CREDENTIAL_ENV.password}, pve.password, secrets.pve.password) or use pve.auth: ticket`,
      where,
    )
  }
  if (c.tokenValue) {
    const match = TOKEN_VALUE.exec(c.tokenValue.trim())
    if (!match)
      throw new CliError(
        'CONFIG_CREDENTIALS',
        `the composed token value (${CREDENTIAL_ENV.tokenValue} or pve.token-value) must look like user@realm!tokenid=secret`,
        where,
      )
    return { method: 'token', tokenId: match[1] as string, secret: match[2] as string }
  }
  if (!c.user && !c.tokenId?.includes('!')) {
    throw new CliError(
      'CONFIG_CREDENTIALS',
      `no effective PVE user after credential resolution: set secrets.pve.user, ${CREDENTIAL_ENV.user}, --pve-user or pve.user`,
      where,
    )
  }
  if (!c.tokenId || !c.token) {
    throw new CliError(
      'CONFIG_CREDENTIALS',
      `no effective PVE token after credential resolution: set secrets.pve.token-id and secrets.pve.token, pve.token-id and ${CREDENTIAL_ENV.token}, or ${CREDENTIAL_ENV.tokenValue}`,
      where,
    )
  }
  // token-id may be the bare name (`proxops`) or the full id (`root@pam!proxops`)
  const tokenId = c.tokenId.includes('!') ? c.tokenId : `${c.user}!${c.tokenId}`
  if (!/^[^\s!=]+@[^\s!=]+![^\s!=]+$/.test(tokenId)) {
    throw new CliError(
      'CONFIG_CREDENTIALS',
      'the PVE token id must be user@realm!name (check pve.user and the token id)',
      where,
    )
  }
  return { method: 'token', tokenId, secret: c.token }
}
