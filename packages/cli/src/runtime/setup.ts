/**
 * Startup: config files and flags, SOPS decryption of each cluster's secrets file (@proxops/sops, no
 * binary), credential resolution, and registration of every secret with the redactor before anything
 * can print it. Fails closed with one actionable line.
 */
import path from 'node:path'
import { readRepositoryFile } from '@proxops/schema'
import type { SopsCredentials } from '@proxops/sops'
import { CliError, problemLine, settingProblem } from '../errors.js'
import { loadDraftConfig } from '../config/load.js'
import { resolveCredentials } from '../config/resolve.js'
import type { GlobalFlags, ResolvedConfig } from '../config/types.js'
import type { CliContext } from './context.js'
import { checkPinnedEndpoints, endpointOrigin, pinDir, PinRecorder } from './endpoint-pins.js'
import { checkEndpointTwins } from './identity.js'
import { maskProblem, printedWords, requireMaskable, sopsRoles, type Roles } from './secret-roles.js'

/** The environment variable that allows plain-http PVE endpoints; only the operator's environment can set it. */
export const ALLOW_HTTP_ENV = 'PROXOPS_ALLOW_HTTP'

/**
 * Plain http would hand the PVE token to anyone on the path, and the repository alone must not be able to
 * choose that: an http base-url is refused unless the operator's environment allows it.
 */
export function checkPlainHttp(
  clusters: ReadonlyArray<{ name: string; baseUrl: string; file: string }>,
  env: Readonly<Record<string, string | undefined>>,
): void {
  if (env[ALLOW_HTTP_ENV] === '1') return
  for (const c of clusters) {
    if (/^http:/i.test(c.baseUrl)) {
      throw new CliError(
        'INSECURE_ENDPOINT',
        settingProblem(
          'endpoint-refused',
          c.file,
          `pve.clusters.${c.name}.base-url`,
          `plain http (${c.baseUrl}) would send the PVE credentials unencrypted; use https, or allow it outside the repository with ${ALLOW_HTTP_ENV}=1`,
        ),
      )
    }
  }
}

export interface Setup {
  config: ResolvedConfig
  /** decrypted credential documents by cluster (clusters with a secrets-file) */
  sops: ReadonlyMap<string, SopsCredentials>
  /** the endpoint pins this run records, each once its endpoint has answered an authenticated read */
  pins: PinRecorder
}

/**
 * Credentials follow the commit only as far as the SOPS file allows: when the encrypted file names the
 * endpoint (`pve-endpoint`, an https origin) or its certificate (`pve-fingerprint`), a `base-url` or
 * `tls.fingerprint` in the repository that differs is refused, so moving the token to another host needs
 * someone who can decrypt (and re-encrypt) that file. See docs/safety.md.
 */
export function checkBoundEndpoint(
  cluster: { name: string; file: string; baseUrl: string; tls: { fingerprint?: string }; secretsFile?: string },
  creds: Pick<SopsCredentials, 'secret'>,
): void {
  const where = `pve.clusters.${cluster.name}`
  const bound = creds.secret('pve-endpoint')?.reveal().trim()
  if (bound !== undefined && bound !== '' && endpointOrigin(bound) !== endpointOrigin(cluster.baseUrl)) {
    throw new CliError(
      'INSECURE_ENDPOINT',
      settingProblem(
        'endpoint-refused',
        cluster.file,
        `${where}.base-url`,
        `${cluster.baseUrl} is not the endpoint its secrets file binds (pve-endpoint ${bound}); its credentials go only there: change both, which needs the age key`,
      ),
    )
  }
  const pin = creds.secret('pve-fingerprint')?.reveal().trim().toUpperCase()
  if (pin !== undefined && pin !== '' && pin !== cluster.tls.fingerprint) {
    throw new CliError(
      'INSECURE_ENDPOINT',
      settingProblem(
        'endpoint-refused',
        cluster.file,
        `${where}.tls.fingerprint`,
        `${cluster.tls.fingerprint ?? '(none)'} is not the certificate its secrets file binds (pve-fingerprint ${pin}); change both, which needs the age key`,
      ),
    )
  }
}

export async function decryptClusterSecrets(
  ctx: CliContext,
  cluster: string,
  file: string,
  root: string,
): Promise<SopsCredentials> {
  // the loader's rules: a secrets-file inside the repository, a regular file, bounded (no FIFO, no /dev/zero)
  // its problems read as validate lists them (the file relative to the repository)
  const read = await readRepositoryFile(file, { root })
  if ('error' in read) throw new CliError('SECRETS', problemLine(read.error))
  if ('missing' in read) {
    const rel = path.relative(root, file)
    const message = `cluster ${cluster}: secrets-file ${rel} does not exist`
    throw new CliError('SECRETS', problemLine({ code: 'secrets-unavailable', file: rel, line: 0, column: 0, message }))
  }
  // loaded only for a cluster with a secrets file: age and its curves were a tenth of every diff's start-up
  const { decryptSops, isSopsError, readCredentials } = await import('@proxops/sops')
  try {
    const doc = await decryptSops(read.text, { file, discovery: { env: ctx.env, homeDir: ctx.home } })
    return readCredentials(doc, { cluster })
  } catch (error) {
    if (isSopsError(error)) {
      throw new CliError('SECRETS', `cluster ${cluster}: ${ctx.redactor.text(error.message)}`)
    }
    throw new CliError(
      'SECRETS',
      `cluster ${cluster}: cannot decrypt ${file}: ${ctx.redactor.text(String((error as Error).message ?? error))}`,
    )
  }
}

/** Credentials from the environment, by role (the secret part only; the rest names the user or token). */
const ENV_SECRETS: ReadonlyArray<readonly [string, (value: string) => string]> = [
  ['PROXOPS_PVE_TOKEN', (v) => v],
  // user@realm!tokenid=secret
  ['PROXOPS_PVE_TOKEN_VALUE', (v) => v.split('=').slice(1).join('=')],
  ['PROXOPS_PVE_PASSWORD', (v) => v],
  ['PROXOPS_GIT_TOKEN', (v) => v],
  ['PROXOPS_HTTP_TOKEN', (v) => v],
  // user:password
  ['PROXOPS_HTTP_BASIC_AUTH', (v) => v.split(':').slice(1).join(':')],
]

export async function setup(ctx: CliContext, flags: GlobalFlags, options: { cluster?: string } = {}): Promise<Setup> {
  const draft = await loadDraftConfig({ flags, env: ctx.env, cwd: ctx.cwd, home: ctx.home })
  if (options.cluster !== undefined && !draft.clusters.some((c) => c.name === options.cluster)) {
    throw new CliError(
      'USAGE',
      `--cluster "${options.cluster}" is not configured (known: ${draft.clusters.map((c) => c.name).join(', ')})`,
    )
  }
  // every credential by role (secret-roles.ts); registered with the redactor once all are known to be maskable
  const roles: Roles = { secrets: [], identities: [], others: [] }
  // env credentials are secrets too, even when a cluster does not end up using them
  for (const [name, secretOf] of ENV_SECRETS) {
    const value = ctx.env[name]?.trim()
    if (value) roles.secrets.push({ value: secretOf(value).trim(), where: `environment variable ${name}` })
  }
  const yamlSecrets: Array<[string, string | undefined]> = [
    ['pve.token', draft.pve.token],
    ['pve.password', draft.pve.password],
    ['pve.token-value', draft.pve.tokenValue?.split('=').slice(1).join('=')],
    ['git.token', draft.git.token],
  ]
  for (const [field, value] of yamlSecrets)
    if (value?.trim()) roles.secrets.push({ value: value.trim(), where: `${field} in the configuration` })
  // before any credential is resolved: no second name for one endpoint, no plain http unless allowed here
  await checkEndpointTwins(draft.clusters)
  const selected = draft.clusters.filter((c) => options.cluster === undefined || c.name === options.cluster)
  checkPlainHttp(selected, ctx.env)
  const sops = new Map<string, SopsCredentials>()
  const plain: Record<string, Record<string, string>> = {}
  for (const cluster of selected) {
    if (!cluster.secretsFile) continue
    const creds = await decryptClusterSecrets(ctx, cluster.name, cluster.secretsFile, draft.root)
    const refs = cluster.secretRefs
    const clusterRoles = sopsRoles(
      creds,
      {
        ...refs.pve,
        // the git token is read (and so a secret) only in URL mode (config/resolve.ts)
        ...(draft.git.url !== undefined && refs.git.token !== undefined ? { gitToken: refs.git.token } : {}),
      },
      path.relative(draft.root, cluster.secretsFile),
      cluster.name,
    )
    roles.secrets.push(...clusterRoles.secrets)
    roles.identities.push(...clusterRoles.identities)
    roles.others.push(...clusterRoles.others)
    checkBoundEndpoint(cluster, creds)
    sops.set(cluster.name, creds)
    plain[cluster.name] = Object.fromEntries(creds.secretNames.map((n) => [n, creds.secret(n)?.reveal() ?? '']))
  }
  const config = resolveCredentials({ ...draft, clusters: selected }, ctx.env, plain)
  for (const c of config.clusters) {
    const cred = c.credentials
    roles.identities.push(cred.method === 'token' ? cred.tokenId : cred.user)
    roles.secrets.push({
      value: cred.method === 'token' ? cred.secret : cred.password,
      where: `the PVE ${cred.method === 'token' ? 'token secret' : 'password'} of cluster ${c.name}`,
    })
  }
  const printed = printedWords(roles.identities, draft.clusters)
  requireMaskable(roles.secrets, printed)
  ctx.redactor.add(
    ...roles.secrets.map((s) => s.value),
    ...roles.others.filter((v) => maskProblem(v, printed) === undefined),
  )
  // SOPS credentials whose file binds no endpoint go only where they went first, unless the operator accepts
  const unbound = config.clusters.filter((c) => {
    const creds = sops.get(c.name)
    return creds !== undefined && !creds.secret('pve-endpoint')?.reveal().trim()
  })
  const dir = pinDir(flags.dataDir, ctx.home, ctx.cwd)
  const pending = checkPinnedEndpoints(unbound, { dir, accept: flags.acceptEndpoint ?? [] })
  const pins = new PinRecorder(dir, pending, (p) =>
    ctx.log.info(
      p.accepted ? 'endpoint accepted and pinned for SOPS credentials' : 'endpoint pinned for SOPS credentials',
      {
        cluster: p.cluster,
        ...p.pin,
      },
    ),
  )
  return { config, sops, pins }
}
