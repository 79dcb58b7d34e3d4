/**
 * Pure configuration resolution (RB 6.4). Layers, lowest first: built-in defaults, the repository's
 * proxops.yaml, the --config file, cluster-local files (clusters; legacy process fields), flags given on
 * the command line, then environment variables for credentials only. SOPS values beat env, which beats
 * YAML, per cluster. Every rejection names the file, field or flag.
 */
import path from 'node:path'
import { CliError } from '../errors.js'
import { LOG_LEVELS, type LogLevel } from '../log.js'
import { parseDuration } from './duration.js'
import type { RawClusterEntry, RawConfigFile } from './raw.js'
import type {
  AuthMethod,
  ClusterConfig,
  Credentials,
  DisruptionPolicy,
  DraftConfig,
  GlobalFlags,
  PruneBudget,
  PruneWindow,
  ResolvedCluster,
  ResolvedConfig,
  SopsSecrets,
} from './types.js'

export const DEFAULTS = {
  logLevel: 'info' as LogLevel,
  auth: 'token' as AuthMethod,
  branch: 'main',
  pollIntervalMs: 30_000,
  taskTimeoutMs: 30 * 60_000,
  pruneBudget: 3 as PruneBudget,
  pruneWindow: { max: 10, periodMs: 3_600_000 },
  shutdownTimeoutMs: 120_000,
  disruption: 'stop' as DisruptionPolicy,
  listen: '127.0.0.1:9494',
}

export interface ClusterFile {
  /** the directory name under clusters/ */
  name: string
  raw: RawConfigFile
}

export interface MergeInput {
  /** the repository root (local mode: the tree that is read; URL mode: where cluster configs live) */
  root: string
  /** `<root>/proxops.yaml` when present */
  rootFile?: RawConfigFile
  /** the `--config` file, when given (layered above rootFile; its git source wins) */
  configFile?: RawConfigFile
  clusterFiles: readonly ClusterFile[]
  flags: GlobalFlags
  /** for `~` expansion and the default data dir */
  home: string
  /** flags' relative paths resolve against it */
  cwd: string
}

const CLUSTER_NAME = /^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$/
const NODE_NAME = /^[^\s/]+$/
const FINGERPRINT = /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/
const DISRUPTIONS: readonly DisruptionPolicy[] = ['allow', 'none', 'hotplug', 'reboot', 'stop']

function invalid(
  message: string,
  file: string | undefined,
  field: string,
  lines?: Readonly<Record<string, number>>,
): never {
  const line = lines?.[field]
  throw new CliError('CONFIG_INVALID', message, { ...(file ? { file } : {}), ...(line ? { line } : {}), field })
}

function expand(p: string, home: string, base: string): string {
  const tilde = p === '~' ? home : p.startsWith('~/') ? path.join(home, p.slice(2)) : p
  return path.resolve(base, tilde)
}

/** A value with the file (or flag) it came from, for error messages. */
interface Sourced<T> {
  value: T
  file?: string
  field: string
  lines?: Readonly<Record<string, number>>
}

function pick<T>(
  layers: ReadonlyArray<RawConfigFile | undefined>,
  field: string,
  get: (raw: RawConfigFile) => T | undefined,
): Sourced<T> | undefined {
  let found: Sourced<T> | undefined
  for (const raw of layers) {
    if (!raw) continue
    const value = get(raw)
    if (value !== undefined) found = { value, file: raw.file, field, lines: raw.lines }
  }
  return found
}

/** Merges files and flags into a DraftConfig (no credentials yet). */
export function mergeConfig(input: MergeInput): DraftConfig {
  const { flags, home } = input
  // legacy process fields in cluster-local files must agree with each other
  const legacy = legacyLayer(input.clusterFiles)
  const layers = [input.rootFile, input.configFile, legacy]
  const dirOf = (s: Sourced<unknown> | undefined): string => (s?.file ? path.dirname(s.file) : input.root)

  const levelSrc = pick(layers, 'log.level', (r) => r.log?.level)
  const level = flags.logLevel ?? levelSrc?.value ?? DEFAULTS.logLevel
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    if (flags.logLevel !== undefined) flagError('--log-level', `must be one of ${LOG_LEVELS.join(', ')}`)
    invalid(`must be one of ${LOG_LEVELS.join(', ')}`, levelSrc?.file, 'log.level', levelSrc?.lines)
  }
  const format = flags.logFormat ?? 'text'
  if (format !== 'text' && format !== 'json') flagError('--log-format', 'must be text or json')

  const authSrc = pick(layers, 'pve.auth', (r) => r.pve?.auth)
  const auth = flags.pveAuth ?? authSrc?.value ?? DEFAULTS.auth
  if (auth !== 'token' && auth !== 'ticket') {
    if (flags.pveAuth !== undefined) flagError('--pve-auth', 'must be token or ticket')
    invalid('must be token or ticket', authSrc?.file, 'pve.auth', authSrc?.lines)
  }
  const globalLayers = [input.rootFile, input.configFile]
  const pveField = (field: string, get: (r: RawConfigFile) => string | undefined): string | undefined =>
    pick(globalLayers, field, get)?.value
  const caSrc = pick(globalLayers, 'pve.ca-file', (r) => r.pve?.caFile)
  const globalCa =
    flags.caFile !== undefined
      ? expand(flags.caFile, home, input.cwd)
      : caSrc
        ? expand(caSrc.value, home, dirOf(caSrc))
        : undefined

  const git = mergeGit(input)

  const pollSrc = pick(layers, 'reconcile.poll-interval', (r) => r.reconcile?.pollInterval)
  let pollIntervalMs = pollSrc ? positiveDuration(pollSrc) : DEFAULTS.pollIntervalMs
  if (flags.gitPollSec !== undefined) {
    if (!Number.isInteger(flags.gitPollSec) || flags.gitPollSec < 0)
      flagError('--git-poll-sec', 'must be a whole number of seconds')
    if (flags.gitPollSec > 0) pollIntervalMs = flags.gitPollSec * 1000
  }
  const timeoutSrc = pick(layers, 'reconcile.task-timeout', (r) => r.reconcile?.taskTimeout)
  const taskTimeoutMs = timeoutSrc ? positiveDuration(timeoutSrc) : DEFAULTS.taskTimeoutMs

  const budgetSrc = pick(layers, 'reconcile.prune-budget', (r) => r.reconcile?.pruneBudget)
  let pruneBudget: PruneBudget = DEFAULTS.pruneBudget
  if (flags.pruneBudget !== undefined) {
    pruneBudget =
      parsePruneBudget(flags.pruneBudget) ??
      flagError('--prune-budget', 'must be a whole number >= 0 (0 = no prunes) or "unlimited"')
  } else if (budgetSrc) {
    pruneBudget =
      parsePruneBudget(budgetSrc.value) ??
      invalid(
        'must be a whole number >= 0 (0 = no prunes) or "unlimited"',
        budgetSrc.file,
        budgetSrc.field,
        budgetSrc.lines,
      )
  }
  const windowMaxSrc = pick(layers, 'reconcile.prune-window.max', (r) => r.reconcile?.pruneWindow?.max)
  const windowPeriodSrc = pick(layers, 'reconcile.prune-window.period', (r) => r.reconcile?.pruneWindow?.period)
  let windowMax = DEFAULTS.pruneWindow.max
  if (windowMaxSrc) {
    if (!/^\d+$/.test(windowMaxSrc.value))
      invalid('must be a whole number >= 0', windowMaxSrc.file, windowMaxSrc.field, windowMaxSrc.lines)
    windowMax = Number(windowMaxSrc.value)
  }
  const pruneWindow: PruneWindow = {
    max: windowMax,
    periodMs: windowPeriodSrc ? positiveDuration(windowPeriodSrc) : DEFAULTS.pruneWindow.periodMs,
  }
  const shutdownSrc = pick(layers, 'reconcile.shutdown-timeout', (r) => r.reconcile?.shutdownTimeout)
  const shutdownTimeoutMs = shutdownSrc ? positiveDuration(shutdownSrc) : DEFAULTS.shutdownTimeoutMs
  const disruptionSrc = pick(layers, 'reconcile.disruption', (r) => r.reconcile?.disruption)
  if (disruptionSrc && !(DISRUPTIONS as readonly string[]).includes(disruptionSrc.value)) {
    invalid(`must be one of ${DISRUPTIONS.join(', ')}`, disruptionSrc.file, disruptionSrc.field, disruptionSrc.lines)
  }
  const disruption = (disruptionSrc?.value ?? DEFAULTS.disruption) as DisruptionPolicy

  const listenSrc = pick(layers, 'listen', (r) => r.listen)
  const listenText = flags.listen ?? listenSrc?.value ?? DEFAULTS.listen
  const listen =
    parseListen(listenText) ??
    (flags.listen !== undefined
      ? flagError('--listen', 'must be host:port, such as 127.0.0.1:9494')
      : invalid('must be host:port, such as 127.0.0.1:9494', listenSrc?.file, 'listen', listenSrc?.lines))

  const dataSrc = pick(layers, 'data-dir', (r) => r.dataDir)
  const dataDir =
    flags.dataDir !== undefined
      ? expand(flags.dataDir, home, input.cwd)
      : dataSrc
        ? expand(dataSrc.value, home, dirOf(dataSrc))
        : path.join(home, '.local', 'share', 'proxops')

  const clusters = mergeClusters(input, auth, globalCa)
  if (clusters.length === 0) {
    throw new CliError(
      'CONFIG_INVALID',
      `at least one named PVE cluster is required: add clusters/<name>/config.yaml under ${input.root}`,
    )
  }

  return {
    root: input.root,
    log: { level: level as LogLevel, format },
    pve: {
      auth,
      user: flags.pveUser ?? pveField('pve.user', (r) => r.pve?.user),
      tokenId: pveField('pve.token-id', (r) => r.pve?.tokenId),
      token: pveField('pve.token', (r) => r.pve?.token),
      tokenValue: pveField('pve.token-value', (r) => r.pve?.tokenValue),
      password: pveField('pve.password', (r) => r.pve?.password),
    },
    git,
    reconcile: { pollIntervalMs, taskTimeoutMs, pruneBudget, pruneWindow, shutdownTimeoutMs, disruption },
    listen,
    dataDir,
    clusters,
  }
}

function flagError(flag: string, message: string): never {
  throw new CliError('USAGE', `${flag} ${message}`)
}

function positiveDuration(src: Sourced<string>): number {
  const ms = parseDuration(src.value)
  if (ms === undefined || ms <= 0)
    invalid('must be a duration > 0 such as 30s, 5m or 1h', src.file, src.field, src.lines)
  return ms
}

export function parsePruneBudget(text: string): PruneBudget | undefined {
  const trimmed = text.trim()
  if (trimmed === 'unlimited') return 'unlimited'
  return /^\d+$/.test(trimmed) ? Number(trimmed) : undefined
}

export function parseListen(text: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:[\]]+)):(\d{1,5})$/.exec(text.trim())
  if (!match) return undefined
  const port = Number(match[3])
  if (port > 65535) return undefined
  return { host: (match[1] ?? match[2]) as string, port }
}

const LEGACY_GETTERS: Readonly<Record<string, (r: RawConfigFile) => string | undefined>> = {
  'log.level': (r) => r.log?.level,
  'reconcile.poll-interval': (r) => r.reconcile?.pollInterval,
  'reconcile.task-timeout': (r) => r.reconcile?.taskTimeout,
  'reconcile.prune-budget': (r) => r.reconcile?.pruneBudget,
  'reconcile.prune-window.max': (r) => r.reconcile?.pruneWindow?.max,
  'reconcile.prune-window.period': (r) => r.reconcile?.pruneWindow?.period,
  'reconcile.shutdown-timeout': (r) => r.reconcile?.shutdownTimeout,
  'reconcile.disruption': (r) => r.reconcile?.disruption,
  listen: (r) => r.listen,
  'data-dir': (r) => r.dataDir,
}

/** Process fields carried by cluster-local files (legacy); two files that disagree fail closed. */
function legacyLayer(files: readonly ClusterFile[]): RawConfigFile | undefined {
  const seen = new Map<string, { value: string; file: string }>()
  for (const { raw } of files) {
    for (const [field, get] of Object.entries(LEGACY_GETTERS)) {
      const value = get(raw)
      if (value === undefined) continue
      const prior = seen.get(field)
      if (prior && prior.value !== value) {
        invalid(`conflicts with ${prior.file}; move it to proxops.yaml`, raw.file, field, raw.lines)
      }
      seen.set(field, { value, file: raw.file })
    }
  }
  if (seen.size === 0) return undefined
  const first = [...seen.values()][0] as { file: string }
  const get = (field: string): string | undefined => seen.get(field)?.value
  return {
    file: first.file,
    lines: {},
    log: { level: get('log.level') },
    reconcile: {
      pollInterval: get('reconcile.poll-interval'),
      taskTimeout: get('reconcile.task-timeout'),
      pruneBudget: get('reconcile.prune-budget'),
      pruneWindow: { max: get('reconcile.prune-window.max'), period: get('reconcile.prune-window.period') },
      shutdownTimeout: get('reconcile.shutdown-timeout'),
      disruption: get('reconcile.disruption'),
    },
    listen: get('listen'),
    dataDir: get('data-dir'),
  }
}

function mergeGit(input: MergeInput): DraftConfig['git'] {
  const { flags } = input
  // the git source comes from the --config file when one is given, else from proxops.yaml
  const source = input.configFile ?? input.rootFile
  const g = source?.git ?? {}
  const file = source?.file
  if (g.url !== undefined && g.path !== undefined && g.path !== '.') {
    invalid('git.url and git.path are mutually exclusive', file, 'git.path', source?.lines)
  }
  const branch = flags.gitBranch ?? g.branch ?? DEFAULTS.branch
  if (branch.trim() === '') {
    if (flags.gitBranch !== undefined) flagError('--git-branch', 'must not be empty')
    invalid('must not be empty', file, 'git.branch', source?.lines)
  }
  const extra = g.token ? { token: g.token } : {}
  // --git-path pins local mode; --git-url switches to URL mode; otherwise the file decides
  if (flags.gitPath !== undefined) return { branch, path: input.root, ...extra }
  const url = flags.gitUrl ?? g.url
  if (url !== undefined) {
    if (!isGitUrl(url)) {
      if (flags.gitUrl !== undefined)
        flagError('--git-url', 'must be an https://, ssh://, git@host:path or file:// URL')
      invalid('must be an https://, ssh://, git@host:path or file:// URL', file, 'git.url', source?.lines)
    }
    return { url, branch, ...extra }
  }
  return { branch, path: input.root, ...extra }
}

export function isGitUrl(url: string): boolean {
  return /^(https?|ssh|git|file):\/\/\S+$/.test(url) || /^[\w.-]+@[\w.-]+:\S+$/.test(url)
}

function mergeClusters(input: MergeInput, globalAuth: AuthMethod, globalCa: string | undefined): ClusterConfig[] {
  const out = new Map<string, ClusterConfig>()
  const add = (
    name: string,
    entry: RawClusterEntry & { line?: number },
    raw: RawConfigFile,
    auth: string | undefined,
    replace: boolean,
  ): void => {
    const field = `pve.clusters.${name}`
    if (!CLUSTER_NAME.test(name)) {
      invalid(
        'cluster names are lower-case letters, digits and "-" (not at either end), at most 64 characters',
        raw.file,
        field,
        raw.lines,
      )
    }
    if (out.has(name) && !replace) return
    out.set(name, clusterEntry(name, entry, raw, auth ?? globalAuth, globalCa, input.home))
  }
  // lowest first: proxops.yaml inline clusters, then the --config file's, then cluster-local files
  for (const raw of [input.rootFile, input.configFile]) {
    for (const [name, entry] of Object.entries(raw?.pve?.clusters ?? {}))
      add(name, entry, raw as RawConfigFile, undefined, true)
  }
  for (const { name, raw } of input.clusterFiles) {
    const entries = Object.entries(raw.pve?.clusters ?? {})
    if (entries.length !== 1) {
      invalid(
        `must declare exactly one cluster, pve.clusters.${name} (found ${entries.length})`,
        raw.file,
        'pve.clusters',
        raw.lines,
      )
    }
    const [key, entry] = entries[0] as [string, RawClusterEntry]
    if (key !== name) {
      invalid(
        `declares pve.clusters.${key} which does not match its directory name "${name}"`,
        raw.file,
        `pve.clusters.${key}`,
        raw.lines,
      )
    }
    for (const [field, value] of [
      ['pve.user', raw.pve?.user],
      ['pve.token-id', raw.pve?.tokenId],
      ['pve.token', raw.pve?.token],
      ['pve.token-value', raw.pve?.tokenValue],
      ['pve.password', raw.pve?.password],
      ['pve.ca-file', raw.pve?.caFile],
      ['git.url', raw.git?.url],
      ['git.token', raw.git?.token],
      ['git.branch', raw.git?.branch],
    ] as const) {
      if (value !== undefined) {
        invalid(
          'is not allowed in a cluster-local config: put credentials in the SOPS file or environment, process settings in proxops.yaml',
          raw.file,
          field,
          raw.lines,
        )
      }
    }
    if (raw.git?.path !== undefined && raw.git.path !== '.') {
      invalid('only "." is allowed in a cluster-local config', raw.file, 'git.path', raw.lines)
    }
    add(name, entry, raw, raw.pve?.auth, true)
  }
  // unique endpoints: two clusters on one PVE would prune each other's objects
  const byUrl = new Map<string, string>()
  const sorted = [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const cluster of sorted) {
    const key = normaliseUrl(cluster.baseUrl)
    const other = byUrl.get(key)
    if (other)
      invalid(
        `base-url ${cluster.baseUrl} is already used by cluster "${other}"; each cluster needs its own endpoint`,
        cluster.file,
        `pve.clusters.${cluster.name}.base-url`,
      )
    byUrl.set(key, cluster.name)
  }
  return sorted
}

function normaliseUrl(url: string): string {
  const parsed = new URL(url)
  const port = parsed.port || (parsed.protocol === 'https:' ? '443' : '80')
  return `${parsed.protocol}//${parsed.hostname.toLowerCase()}:${port}`
}

function clusterEntry(
  name: string,
  entry: RawClusterEntry,
  raw: RawConfigFile,
  auth: string,
  globalCa: string | undefined,
  home: string,
): ClusterConfig {
  const field = (f: string): string => `pve.clusters.${name}.${f}`
  const fail = (f: string, message: string): never => invalid(message, raw.file, field(f), raw.lines)
  const dir = path.dirname(raw.file)
  if (!entry.baseUrl) fail('base-url', 'is required (such as https://pve1.example.net:8006)')
  const baseUrl = (entry.baseUrl as string).replace(/\/+$/, '')
  let parsed: URL | undefined
  try {
    parsed = new URL(baseUrl)
  } catch {
    parsed = undefined
  }
  if (!parsed || !/^https?:$/.test(parsed.protocol) || !parsed.hostname || parsed.search || parsed.hash) {
    fail('base-url', 'must be http(s)://host[:port]')
  }
  if (parsed?.username || parsed?.password)
    fail('base-url', 'must not carry credentials; use the SOPS file or environment')
  const nodes = entry.nodes ?? []
  const seen = new Set<string>()
  nodes.forEach((node, index) => {
    if (!NODE_NAME.test(node)) fail(`nodes[${index}]`, 'node names are non-empty, without spaces or "/"')
    if (seen.has(node)) fail(`nodes[${index}]`, `duplicate node "${node}"`)
    seen.add(node)
  })
  if (auth !== 'token' && auth !== 'ticket') fail('auth', 'must be token or ticket')
  const effectiveAuth = (entry.auth ?? auth) as AuthMethod
  if (effectiveAuth !== 'token' && effectiveAuth !== 'ticket') fail('auth', 'must be token or ticket')
  const tls = entry.tls ?? {}
  let fingerprint: string | undefined
  if (tls.fingerprint !== undefined) {
    fingerprint = tls.fingerprint.trim().toUpperCase()
    if (!FINGERPRINT.test(fingerprint))
      fail('tls.fingerprint', 'must be the SHA-256 certificate fingerprint as 32 hex pairs, AA:BB:...')
  }
  const insecure = tls.insecure ?? false
  if (insecure && fingerprint)
    fail(
      'tls.insecure',
      'conflicts with tls.fingerprint: a pinned fingerprint already trusts that certificate; drop one',
    )
  const caFile = tls.ca !== undefined ? expand(tls.ca, home, dir) : globalCa
  if (insecure && tls.ca !== undefined) fail('tls.insecure', 'conflicts with tls.ca; drop one')
  if (entry.disruption !== undefined && !(DISRUPTIONS as readonly string[]).includes(entry.disruption)) {
    fail('disruption', `must be one of ${DISRUPTIONS.join(', ')}`)
  }
  const refs = entry.secrets ?? {}
  const hasRefs = Object.values(refs.pve ?? {}).some((v) => v !== undefined) || refs.git?.token !== undefined
  if (hasRefs && !entry.secretsFile) fail('secrets', 'references SOPS keys but secrets-file is not set')
  return {
    name,
    baseUrl,
    nodes,
    file: raw.file,
    ...(entry.secretsFile ? { secretsFile: expand(entry.secretsFile, home, dir) } : {}),
    secretRefs: { pve: { ...refs.pve }, git: { ...refs.git } },
    auth: effectiveAuth,
    tls: { ...(caFile && !insecure ? { caFile } : {}), ...(fingerprint ? { fingerprint } : {}), insecure },
    ...(entry.disruption ? { disruption: entry.disruption as DisruptionPolicy } : {}),
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

    const gitToken = fromSops('git', 'token', cluster.secretRefs.git.token)
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
    const match = /^([^\s!=]+@[^\s!=]+![^\s!=]+)=(\S+)$/.exec(c.tokenValue)
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

/** Every secret value a resolved config holds, for the redactor. */
export function credentialValues(config: ResolvedConfig): string[] {
  const values: string[] = []
  for (const cluster of config.clusters) {
    if (cluster.credentials.method === 'token') values.push(cluster.credentials.secret)
    else values.push(cluster.credentials.password)
  }
  if (config.git.token) values.push(config.git.token)
  return values
}
