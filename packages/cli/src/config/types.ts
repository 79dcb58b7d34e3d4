/** The CLI's resolved configuration (docs/configuration.md). */
import type { DisruptionPolicy, Policy, PruneWindow } from '@proxops/planner'
import type { AuthMethod, LogLevel } from '@proxops/schema'

export type { AuthMethod, DisruptionPolicy, PruneWindow }
export type PruneBudget = Policy['pruneBudget']

/** Global flags, each present only when it was given on the command line. */
export interface GlobalFlags {
  config?: string
  gitPath?: string
  logLevel?: string
  logFormat?: string
  listen?: string
  gitUrl?: string
  gitBranch?: string
  gitPollSec?: number
  pruneBudget?: string
  pveUser?: string
  pveAuth?: string
  caFile?: string
  dataDir?: string
  /** clusters whose SOPS credentials may go to a new endpoint this run (re-pinned) */
  acceptEndpoint?: string[]
}

export interface ClusterTls {
  caFile?: string
  /** SHA-256 of the server certificate, `AA:BB:...` upper case */
  fingerprint?: string
  insecure: boolean
}

export interface ClusterSecretRefs {
  pve: { user?: string; tokenId?: string; token?: string; password?: string }
  git: { token?: string }
}

export interface ClusterConfig {
  name: string
  baseUrl: string
  nodes: string[]
  /** the file that declared the cluster, as messages name it (relative to the repository) */
  file: string
  /** absolute */
  secretsFile?: string
  secretRefs: ClusterSecretRefs
  auth: AuthMethod
  tls: ClusterTls
  disruption?: DisruptionPolicy
  /** `safety-snapshots`: a snapshot before each guest's disruptive changes, the newest `keep` kept (docs/safety.md) */
  safetySnapshots?: { keep: number }
  /** `access` (docs/access.md): the cluster manages its access objects */
  access?: { rolePrefix?: string; acknowledgeLockout: boolean; tokenSecretsDir?: string }
  /** `sync-windows:` when disruptive changes may run (runtime/sync-window.ts) */
  syncWindows?: { kind: 'allow' | 'deny'; schedule: string; durationMs: number; timeZone: string }[]
  /** `notifications:` targets of the daemon's messages; `urlSecret`/`tokenSecret` name keys of the SOPS `secrets:` map */
  notifications?: {
    type: 'webhook' | 'ntfy' | 'slack' | 'matrix'
    url?: string
    urlSecret?: string
    tokenSecret?: string
    room?: string
  }[]
  /** `webhooks:` push receivers of the daemon, each naming the key of its secret in the SOPS `secrets:` map */
  webhooks?: Partial<Record<'github' | 'gitlab' | 'gitea' | 'generic', string>>
  /** `policy:` the cluster's per-object policy defaults (docs/operations.md, "Per-object policies") */
  policy?: ClusterPolicy
}

export interface ClusterPolicy {
  /** `prune: never`: nothing of the cluster is deleted */
  pruneNever: boolean
  /** `prune-never`: these objects (`KIND/name`) are never deleted */
  keep: { kind: string; name: string }[]
  /** `ignore-fields` per kind */
  ignoreFields: Record<string, string[]>
}

export interface GitSettings {
  /** URL mode when set */
  url?: string
  branch: string
  /** local mode: the work tree read as-is */
  path?: string
  /** SSH deploy key (PROXOPS_GIT_SSH_KEY_FILE) */
  sshKeyFile?: string
  /** known_hosts for SSH (PROXOPS_GIT_KNOWN_HOSTS) */
  knownHostsFile?: string
}

/** Everything but credentials: what files and flags say. */
export interface DraftConfig {
  /** the repository root the config files came from */
  root: string
  log: { level: LogLevel; format: 'text' | 'json' }
  pve: { auth: AuthMethod; user?: string; tokenId?: string; token?: string; tokenValue?: string; password?: string }
  git: GitSettings & { token?: string }
  reconcile: {
    pollIntervalMs: number
    taskTimeoutMs: number
    pruneBudget: PruneBudget
    pruneWindow: PruneWindow
    shutdownTimeoutMs: number
    /** default for clusters without their own `disruption` */
    disruption: DisruptionPolicy
  }
  listen: { host: string; port: number }
  /** `allowed-hosts`: names the daemon's HTTP endpoints answer to besides the listen address and localhost */
  allowedHosts: string[]
  dataDir: string
  /** sorted by name */
  clusters: ClusterConfig[]
}

export type Credentials =
  | { method: 'token'; /** `user@realm!name` */ tokenId: string; secret: string }
  | { method: 'ticket'; user: string; password: string }

export interface ResolvedCluster extends ClusterConfig {
  credentials: Credentials
}

export interface ResolvedConfig extends Omit<DraftConfig, 'clusters' | 'pve'> {
  clusters: ResolvedCluster[]
  git: GitSettings & { token?: string }
}

/** The decrypted `secrets:` map of each cluster's SOPS file (absent for clusters without one). */
export type SopsSecrets = Readonly<Record<string, Readonly<Record<string, string>>>>
