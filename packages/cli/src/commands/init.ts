/**
 * `proxops init`: a repository to start from (docs/getting-started.md, "The fast way"): the cluster's config from
 * flags, an age key where there is none, the encrypted credentials file, resources.yaml and one VM. Everything is
 * written to a staging directory first and checked there by validate's own code; only a repository that validates
 * is copied in, file by file, never over a file that exists.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { CliError } from '../errors.js'
import { out, type CliContext } from '../runtime/context.js'
import type { GlobalArgs } from './options.js'

export interface InitArgs extends GlobalArgs {
  directory?: string
  cluster?: string
  endpoint?: string
  'token-id'?: string
  /** one --node is a string, several an array */
  node?: string | string[]
  fingerprint?: string
  'age-key-file'?: string
  vmid?: number
  storage?: string
  bridge?: string
}

/** `user@realm!name`, as `pveum user token add` names a token */
const TOKEN_ID = /^([^\s@!]+@[^\s@!]+)!([A-Za-z][A-Za-z0-9._-]*)$/
const SECRETS_RULE = '^clusters/[^/]+/secrets\\.sops\\.yaml$'
/** the token secret until `proxops-sops set` puts the real one in: never a valid PVE token (those are UUIDs) */
export const TOKEN_PLACEHOLDER = 'REPLACE-ME'
const VM_NAME = 'first-vm'

export async function initHandler(ctx: CliContext, args: InitArgs): Promise<number> {
  const missing = (['cluster', 'endpoint', 'token-id', 'node'] as const).filter((k) => args[k] === undefined)
  if (missing.length > 0)
    throw new CliError('USAGE', `init needs ${missing.map((k) => `--${k}`).join(', ')} (see proxops init --help)`)
  const cluster = args.cluster!
  // a path segment before anything is staged; the naming rule itself is validate's (checkStaged)
  if (cluster === '' || cluster.startsWith('.') || path.basename(cluster) !== cluster || cluster.includes('\\'))
    throw new CliError('USAGE', `--cluster ${JSON.stringify(cluster)}: a cluster name is one word, such as homelab`)
  const token = TOKEN_ID.exec(args['token-id']!)
  if (!token)
    throw new CliError(
      'USAGE',
      `--token-id ${args['token-id']!}: write it as PVE names it, user@realm!name (such as 'proxops@pve!gitops')`,
    )
  const root = repositoryRoot(ctx, args.directory)
  const nodes = [args.node!].flat()
  const files: Record<string, string> = {
    [`clusters/${cluster}/config.yaml`]: configYaml(cluster, args.endpoint!, nodes, args.fingerprint),
    [`clusters/${cluster}/resources.yaml`]: `# The manifest files cluster ${cluster} consumes, relative to this directory (docs/repository.md).\nresources:\n  - ../../vm/${cluster}/${VM_NAME}.yaml\n`,
    [`vm/${cluster}/${VM_NAME}.yaml`]: vmYaml(
      nodes[0]!,
      args.vmid ?? 100,
      args.storage ?? 'local-lvm',
      args.bridge ?? 'vmbr0',
    ),
  }
  const secretsFile = `clusters/${cluster}/secrets.sops.yaml`
  const taken = [...Object.keys(files), secretsFile].filter((f) => existsSync(path.join(root, f)))
  if (taken.length > 0)
    throw new CliError(
      'USAGE',
      `init writes no file that exists, and ${taken.join(', ')} already exist in ${root}; nothing was written`,
    )

  const sops = await import('@proxops/sops')
  const keyPlace = args['age-key-file'] ?? ctx.env.SOPS_AGE_KEY_FILE ?? sops.defaultKeysFile(ctx.env, ctx.home)
  if (keyPlace === undefined)
    throw new CliError(
      'USAGE',
      'init finds no place for the age key (no HOME, or a relative XDG_CONFIG_HOME): pass --age-key-file',
    )
  const keyFile = path.resolve(ctx.cwd, keyPlace)
  // the recipients: the existing .sops.yaml's rule for the secrets file, else the age key's public key
  const sopsConfig = path.join(root, '.sops.yaml')
  let recipients: readonly string[]
  let key: Awaited<ReturnType<typeof sops.ageKeyFile>> | undefined
  if (existsSync(sopsConfig)) {
    recipients = (await sops.loadCreationRule(sopsConfig, path.join(root, secretsFile))).recipients
    if (recipients.length === 0)
      throw new CliError(
        'USAGE',
        `.sops.yaml in ${root} has no creation rule with age keys for ${secretsFile}; nothing was written`,
      )
  } else {
    key = await sops.ageKeyFile(keyFile)
    recipients = [key.recipient]
    files['.sops.yaml'] =
      `# Which age keys new SOPS files are encrypted to (docs/sops.md).\ncreation_rules:\n  - path_regex: ${SECRETS_RULE}\n    age: ${key.recipient}\n`
  }
  const plain = `secrets:\n  proxops-user: ${JSON.stringify(token[1])}\n  proxops-token-id: ${JSON.stringify(token[2])}\n  proxops-token: ${TOKEN_PLACEHOLDER}\n`
  files[secretsFile] = await sops.encryptSops(plain, { recipients, file: secretsFile, format: 'yaml' })

  await checkStaged(files)
  await key?.write()
  if (!existsSync(path.join(root, '.git'))) execFileSync('git', ['init', '-q', root], { stdio: 'ignore' })
  const written: string[] = []
  for (const [file, text] of Object.entries(files).sort(([a], [b]) => (a < b ? -1 : 1))) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    writeFileSync(path.join(root, file), text, { flag: 'wx' })
    written.push(file)
  }

  const lines = [`proxops init: wrote ${written.join(', ')} in ${root}`]
  if (key)
    lines.push(
      !key.exists
        ? `age key: created ${keyFile} (public key ${key.recipient}); keep a copy somewhere safe: without it the secrets cannot be read`
        : `age key: using ${keyFile} (public key ${key.recipient})`,
    )
  const discovered = ctx.env.SOPS_AGE_KEY_FILE ?? sops.defaultKeysFile(ctx.env, ctx.home)
  const rel = (f: string) => path.relative(ctx.cwd, path.join(root, f)) || '.'
  lines.push(
    'next:',
    ...(key && discovered !== undefined && path.resolve(ctx.cwd, discovered) !== keyFile
      ? [`  export SOPS_AGE_KEY_FILE=${keyFile}`]
      : []),
    `  proxops-sops set ${rel(secretsFile)} secrets.proxops-token --stdin   # paste the token secret, then Ctrl-D`,
    `  proxops validate${rel('.') === '.' ? '' : ` --git-path ${rel('.')}`}`,
    '  proxops diff',
  )
  out(ctx, `${lines.join('\n')}\n`)
  return 0
}

/** The directory init writes to: the one given, else the git repository around the working directory, else it. */
function repositoryRoot(ctx: CliContext, directory: string | undefined): string {
  const start = path.resolve(ctx.cwd, directory ?? '.')
  let top: string | undefined
  try {
    mkdirSync(start, { recursive: true })
    top = execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd: start,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
  } catch {
    top = undefined
  }
  if (top === undefined) return start
  if (directory !== undefined && path.resolve(top) !== start)
    throw new CliError(
      'USAGE',
      `${start} is inside the git repository ${top}, and ProxOps reads clusters/ at a repository's root: run proxops init ${top}; nothing was written`,
    )
  return top
}

/** validate's checks on the staged files: a flag PVE or ProxOps would refuse is named now, before any write */
async function checkStaged(files: Record<string, string>): Promise<void> {
  const staging = mkdtempSync(path.join(os.tmpdir(), 'proxops-init-'))
  try {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(staging, file)), { recursive: true })
      writeFileSync(path.join(staging, file), text)
    }
    const { runValidate } = await import('./validate-run.js')
    const result = await runValidate({ gitPath: staging, output: 'text', cwd: staging })
    if (result.exitCode !== 0)
      throw new CliError(
        'USAGE',
        `init's flags make a repository that does not validate: ${result.stdout.trim().split('\n').join('; ')}; nothing was written`,
      )
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

/** a flag's value as a YAML scalar: plain when it can be, else a JSON string (which YAML reads as written) */
const q = (s: string): string => (/^[A-Za-z0-9][A-Za-z0-9._:/-]*$/.test(s) ? s : JSON.stringify(s))

function configYaml(
  cluster: string,
  endpoint: string,
  nodes: readonly string[],
  fingerprint: string | undefined,
): string {
  return [
    `# The cluster ${cluster} (docs/configuration.md), written by proxops init.`,
    'pve:',
    '  clusters:',
    `    ${cluster}:`,
    `      base-url: ${q(endpoint)}`,
    `      nodes: [${nodes.map(q).join(', ')}]          # nothing outside this list is read, written or pruned`,
    ...(fingerprint !== undefined ? ['      tls:', `        fingerprint: ${q(fingerprint.toUpperCase())}`] : []),
    '      secrets-file: secrets.sops.yaml    # relative to this directory',
    '      secrets:',
    '        pve:                             # names of keys under `secrets:` in the decrypted file',
    '          user: proxops-user',
    '          token-id: proxops-token-id',
    '          token: proxops-token',
    '',
  ].join('\n')
}

function vmYaml(node: string, vmid: number, storage: string, bridge: string): string {
  return [
    '# A first VM (docs/schema-reference.md), written by proxops init: an empty disk and one NIC, created stopped.',
    'apiVersion: proxops/v1alpha1',
    'kind: VM',
    'metadata:',
    `  name: ${VM_NAME}`,
    'spec:',
    `  node: ${q(node)}`,
    `  vmid: ${vmid}`,
    '  state: stopped',
    '  memory: 1GiB',
    '  cpu: { type: host, cores: 1 }',
    '  disks:',
    `    - { storage: ${q(storage)}, size: 8GiB }`,
    '  networks:',
    `    - { bridge: ${q(bridge)} }`,
    '',
  ].join('\n')
}
