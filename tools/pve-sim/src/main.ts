#!/usr/bin/env node
/**
 * `pnpm sim`: the simulator as a standalone server on 127.0.0.1 with a seeded 3-node cluster. Prints the base
 * URL, the certificate fingerprint and an API token, then serves until SIGINT/SIGTERM.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { makeCertificate } from './http/tls.js'
import { DEMO_TOKEN_ID, DEMO_TOKEN_SECRET, startSimulator, type Simulator, type SimulatorOptions } from './index.js'

export const USAGE = `usage: pve-sim [options]
  --port N              listen port (default 8006; 0 = any free port)
  --host ADDR           listen address (default 127.0.0.1)
  --nodes a,b,c         node names (default pve1,pve2,pve3)
  --seed N              seed for MACs, UUIDs, estates (default 1)
  --guests N            preload an estate of N guests
  --pve-version V       9.1 (default) or 8.4
  --http                plain HTTP instead of HTTPS
  --task-duration MS    how long worker tasks run (default 2000)
  --control FILE        JSON control file, re-read on change (see docs/simulator.md)
  --cert-dir DIR        keep the TLS key and certificate in DIR and reuse them on the next start, so the
                        fingerprint stays the same (pnpm sim: .pve-sim in the repository)
  --token-secret S      secret of the API token root@pam!proxops (default: $PROXOPS_SIM_TOKEN_SECRET or the demo secret)
  --root-password P     password of root@pam for tickets (default: random, printed)
  --no-schema           do not validate requests against apidoc.json
  --fast-auth-failures  answer 401 at once instead of after 3 s
  --json                print the start banner as one JSON line (for scripts)
  -h, --help`

export class UsageError extends Error {}

export type CliResult =
  | { help: true }
  | {
      help: false
      options: SimulatorOptions
      guests: number
      controlFile: string | undefined
      certDir: string | undefined
      json: boolean
    }

function int(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} expects a non-negative integer, got '${v}'`)
  return Number(v)
}

/** The simulator options for a command line (pure; env only supplies the token secret). */
export function parseSimArgs(argv: string[], env: NodeJS.ProcessEnv = process.env): CliResult {
  let values
  try {
    ;({ values } = parseArgs({
      // `pnpm sim -- --port 0` may hand the `--` through (after the script's own flags)
      args: argv.filter((a) => a !== '--'),
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        nodes: { type: 'string' },
        seed: { type: 'string' },
        guests: { type: 'string' },
        'pve-version': { type: 'string' },
        http: { type: 'boolean' },
        'task-duration': { type: 'string' },
        control: { type: 'string' },
        'cert-dir': { type: 'string' },
        'token-secret': { type: 'string' },
        'root-password': { type: 'string' },
        'no-schema': { type: 'boolean' },
        'fast-auth-failures': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }))
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  if (values.help) return { help: true }
  const version = values['pve-version'] ?? '9.1'
  if (version !== '9.1' && version !== '8.4') throw new UsageError(`--pve-version must be 9.1 or 8.4, got '${version}'`)
  const nodes = values.nodes
    ? values.nodes
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean)
    : ['pve1', 'pve2', 'pve3']
  for (const n of nodes)
    if (!/^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$/.test(n))
      throw new UsageError(`--nodes: '${n}' is not a valid node name`)
  const guests = int('guests', values.guests, 0)
  const options: SimulatorOptions = {
    port: int('port', values.port, 8006),
    host: values.host ?? '127.0.0.1',
    nodes,
    seed: int('seed', values.seed, 1),
    pveVersion: version,
    tls: !values.http,
    taskDurationMs: int('task-duration', values['task-duration'], 2000),
    tokens: [
      { id: DEMO_TOKEN_ID, secret: values['token-secret'] ?? env.PROXOPS_SIM_TOKEN_SECRET ?? DEMO_TOKEN_SECRET },
    ],
    schemaValidation: !values['no-schema'],
    authFailureDelayMs: values['fast-auth-failures'] ? 0 : 3000,
    ...(guests > 0 ? { estate: { guests } } : {}),
    ...(values.control ? { controlFile: values.control } : {}),
    ...(values['root-password'] ? { rootPassword: values['root-password'] } : {}),
  }
  if (values['cert-dir'] !== undefined && values.http)
    throw new UsageError('--cert-dir is for HTTPS: drop it or --http')
  return {
    help: false,
    options,
    guests,
    controlFile: values.control,
    certDir: values['cert-dir'],
    json: values.json === true,
  }
}

/** The certificate kept in `dir` (key.pem, cert.pem), made and written there on first use. */
export async function keptCertificate(dir: string): Promise<{ key: string; cert: string }> {
  const keyFile = join(dir, 'key.pem')
  const certFile = join(dir, 'cert.pem')
  if (existsSync(keyFile) && existsSync(certFile))
    return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') }
  const made = await makeCertificate()
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  writeFileSync(keyFile, made.key, { mode: 0o600 })
  writeFileSync(certFile, made.cert)
  return { key: made.key, cert: made.cert }
}

/** The start banner as data (`--json`). */
export function bannerJson(sim: Simulator): string {
  return JSON.stringify({
    url: sim.url,
    apiUrl: sim.apiUrl,
    fingerprint: sim.fingerprint ?? null,
    tokenId: sim.token.id,
    tokenHeader: sim.token.header,
    rootPassword: sim.rootPassword,
    pveVersion: sim.pveVersion,
    nodes: sim.nodes,
    schemaValidation: sim.schemaValidation,
  })
}

/** The banner `pnpm sim` prints. */
export function banner(sim: Simulator, guests: number, controlFile: string | undefined): string {
  return [
    `pve-sim: Proxmox VE ${sim.pveVersion} simulator, nodes ${sim.nodes.join(', ')}${guests ? `, ${guests} preloaded guests` : ''}`,
    `  url          ${sim.url}`,
    `  api          ${sim.apiUrl}`,
    ...(sim.fingerprint ? [`  fingerprint  ${sim.fingerprint}`] : []),
    `  token        ${sim.token.header}`,
    `  root@pam     password ${sim.rootPassword}`,
    `  schema       ${sim.schemaValidation ? 'requests validated against apidoc.json' : 'checks OFF'}`,
    `  control      ${controlFile ? `file ${controlFile}, ` : ''}POST ${sim.url}/_sim/control (loopback only)`,
    '',
    'In a cluster config (clusters/<name>/config.yaml), these lines point ProxOps at it:',
    `  base-url: ${sim.url}`,
    ...(sim.fingerprint ? ['  tls:', `    fingerprint: "${sim.fingerprint}"`] : []),
  ].join('\n')
}

async function main(): Promise<void> {
  let cli: CliResult
  try {
    cli = parseSimArgs(process.argv.slice(2))
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    process.stderr.write(`pve-sim: ${err.message}\n${USAGE}\n`)
    process.exit(2)
  }
  if (cli.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const sim = await startSimulator(
    cli.certDir ? { ...cli.options, certificate: await keptCertificate(cli.certDir) } : cli.options,
  )
  process.stdout.write(`${cli.json ? bannerJson(sim) : banner(sim, cli.guests, cli.controlFile)}\n`)
  const stop = (): void => {
    void sim.close().then(() => process.exit(0))
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

const invoked = process.argv[1] ? pathToFileURL(realpathSync(process.argv[1])).href : ''
if (import.meta.url === invoked) {
  main().catch((err: unknown) => {
    process.stderr.write(`pve-sim: ${err instanceof Error ? err.message : String(err)}\n`)
    process.exit(1)
  })
}
