/**
 * What the redactor masks, by role (docs/configuration.md#where-secrets-may-appear). A value is masked for what it
 * is, not for where it was found:
 *   - secrets: a PVE token secret or password, the git token (URL mode), every cloud-init password, and the same
 *     credentials from the environment or config files. Each must be maskable: one that is too short, or that is
 *     part of a word ProxOps prints, would either stay visible or shred ordinary output, so ProxOps refuses to start
 *     and says which one (never its value);
 *   - identifiers: the PVE user, realm and token id, and the endpoint a SOPS file binds: never masked;
 *   - the rest of a SOPS file (public SSH keys, keys no setting names): masked where that is safe, else left alone.
 */
import { API_VERSION, KINDS } from '@proxops/schema'
import type { SopsCredentials } from '@proxops/sops'
import { SENSITIVE } from '@proxops/pve-client/wire'
import { CliError } from '../errors.js'

/** Secrets shorter than this cannot be masked safely: they match ordinary words and numbers. */
export const MIN_SECRET_LENGTH = 8

/** A value with the role of a secret, and where it comes from (for the refusal; never the value). */
export interface SecretValue {
  value: string
  where: string
}

export interface Roles {
  /** must be maskable, else ProxOps does not start */
  secrets: SecretValue[]
  /** never masked */
  identities: string[]
  /** masked only when that is safe */
  others: string[]
}

/** Keys of a SOPS file's `secrets` that bind its credentials to one endpoint (public: never masked). */
export const ENDPOINT_KEYS = ['pve-endpoint', 'pve-fingerprint'] as const

/** The keys a cluster entry names in its SOPS file, by role. */
export interface SopsRefs {
  user?: string
  tokenId?: string
  token?: string
  password?: string
  /** only where it is read: URL mode */
  gitToken?: string
}

/** The values of one cluster's decrypted SOPS file, by role. `file` is the file as messages name it. */
export function sopsRoles(creds: SopsCredentials, refs: SopsRefs, file: string, cluster: string): Roles {
  const roles: Roles = { secrets: [], identities: [], others: [] }
  const secretKeys = new Map<string, string>()
  if (refs.token !== undefined) secretKeys.set(refs.token, 'secrets.pve.token')
  if (refs.password !== undefined) secretKeys.set(refs.password, 'secrets.pve.password')
  if (refs.gitToken !== undefined) secretKeys.set(refs.gitToken, 'secrets.git.token')
  const identityKeys = new Set<string>([
    ...[refs.user, refs.tokenId].filter((k): k is string => k !== undefined),
    ...ENDPOINT_KEYS,
  ])
  for (const name of creds.secretNames) {
    const value = creds.secret(name)?.reveal().trim() ?? ''
    if (value === '') continue
    const setting = secretKeys.get(name)
    if (setting !== undefined)
      roles.secrets.push({ value, where: `${file}: secrets.${name} (${setting} of cluster ${cluster})` })
    else if (identityKeys.has(name)) roles.identities.push(value)
    else roles.others.push(value)
  }
  for (const name of creds.names('passwords')) {
    const value = creds.cloudInit('passwords', name)?.reveal().trim() ?? ''
    if (value !== '')
      roles.secrets.push({ value, where: `${file}: cloud-init.passwords.${name} (a cloud-init password)` })
  }
  for (const name of creds.names('ssh-keys')) roles.others.push(creds.cloudInit('ssh-keys', name)?.reveal() ?? '')
  // a value that is also an identifier is one: masking it would hide the user or token name everywhere
  const identities = new Set(roles.identities)
  roles.others = roles.others.filter((v) => !identities.has(v.trim()))
  return roles
}

/** Words ProxOps prints whatever the repository holds: a secret inside one of them would shred every output. */
const PRINTED = [
  API_VERSION,
  ...KINDS,
  'ProxOps will perform the following actions',
  'No changes. PVE matches git.',
  SENSITIVE,
]

/**
 * The names and words output is made of: the fixed ones, and the repository's cluster names, node names, endpoint
 * hosts and PVE identities (users, realms, token ids).
 */
export function printedWords(
  identities: Iterable<string>,
  clusters: ReadonlyArray<{ name: string; nodes: readonly string[]; baseUrl: string }>,
): string[] {
  const words = [...PRINTED]
  for (const c of clusters) {
    words.push(c.name, ...c.nodes)
    try {
      words.push(new URL(c.baseUrl).hostname)
    } catch {
      // an invalid base-url was refused by the config reader already
    }
  }
  for (const id of identities) words.push(id, ...id.split(/[@!]/))
  return words.filter((w) => w !== '')
}

/** Why a secret cannot be masked safely, or undefined. Never names the value. */
export function maskProblem(value: string, printed: readonly string[]): string | undefined {
  const v = value.trim()
  if (v.length < MIN_SECRET_LENGTH)
    return `it is ${v.length} character${v.length === 1 ? '' : 's'} long: a secret shorter than ${MIN_SECRET_LENGTH} characters cannot be masked without hiding ordinary words`
  const lower = v.toLowerCase()
  if (printed.some((w) => w.toLowerCase().includes(lower)))
    return 'it is part of a name or word ProxOps prints (the API version, a kind, a cluster, node, host, user or token name): masking it would corrupt that output'
  return undefined
}

/** Refuses to start on the first secret that cannot be masked safely, naming where it is. */
export function requireMaskable(secrets: readonly SecretValue[], printed: readonly string[]): void {
  for (const s of secrets) {
    const problem = maskProblem(s.value, printed)
    if (problem !== undefined)
      throw new CliError(
        'SECRETS',
        `${s.where} cannot be kept out of the output: ${problem}; use a longer, random value (ProxOps does not start with it)`,
      )
  }
}
