#!/usr/bin/env node
/**
 * `pnpm sim`: the simulator as a standalone server on 127.0.0.1 with a seeded 3-node cluster. Prints the base
 * URL, the certificate fingerprint and an API token, then serves until SIGINT/SIGTERM.
 */
import { parseArgs } from 'node:util'
import { DEMO_TOKEN_ID, DEMO_TOKEN_SECRET, startSimulator, type SimulatorOptions } from './index.js'

const USAGE = `usage: pve-sim [options]
  --port N              listen port (default 8006; 0 = any free port)
  --host ADDR           listen address (default 127.0.0.1)
  --nodes a,b,c         node names (default pve1,pve2,pve3)
  --seed N              seed for MACs, UUIDs, estates (default 1)
  --guests N            preload an estate of N guests
  --pve-version V       9.1 (default) or 8.4
  --http                plain HTTP instead of HTTPS
  --task-duration MS    how long worker tasks run (default 2000)
  --control FILE        JSON control file, re-read on change (see docs/simulator.md)
  --token-secret S      secret of the API token root@pam!proxops (default: the demo secret, or $PROXOPS_SIM_TOKEN_SECRET)
  --root-password P     password of root@pam for tickets (default: random, printed)
  --no-schema           do not validate requests against apidoc.json
  --fast-auth-failures  answer 401 at once instead of after 3 s
  -h, --help`

function fail(msg: string): never {
  process.stderr.write(`pve-sim: ${msg}\n${USAGE}\n`)
  process.exit(2)
}

function int(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt
  if (!/^\d+$/.test(v)) fail(`--${name} expects a non-negative integer, got '${v}'`)
  return Number(v)
}

async function main(): Promise<void> {
  let values
  try {
    ;({ values } = parseArgs({
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
        'token-secret': { type: 'string' },
        'root-password': { type: 'string' },
        'no-schema': { type: 'boolean' },
        'fast-auth-failures': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }))
  } catch (err) {
    fail((err as Error).message)
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  const version = values['pve-version'] ?? '9.1'
  if (version !== '9.1' && version !== '8.4') fail(`--pve-version must be 9.1 or 8.4, got '${version}'`)
  const nodes = values.nodes ? values.nodes.split(',').map((n) => n.trim()).filter(Boolean) : ['pve1', 'pve2', 'pve3']
  const guests = int('guests', values.guests, 0)
  const opts: SimulatorOptions = {
    port: int('port', values.port, 8006),
    host: values.host ?? '127.0.0.1',
    nodes,
    seed: int('seed', values.seed, 1),
    pveVersion: version,
    tls: !values.http,
    taskDurationMs: int('task-duration', values['task-duration'], 2000),
    tokens: [{ id: DEMO_TOKEN_ID, secret: values['token-secret'] ?? process.env.PROXOPS_SIM_TOKEN_SECRET ?? DEMO_TOKEN_SECRET }],
    schemaValidation: !values['no-schema'],
    authFailureDelayMs: values['fast-auth-failures'] ? 0 : 3000,
    ...(guests > 0 ? { estate: { guests } } : {}),
    ...(values.control ? { controlFile: values.control } : {}),
    ...(values['root-password'] ? { rootPassword: values['root-password'] } : {}),
  }
  const sim = await startSimulator(opts)
  const lines = [
    `pve-sim: Proxmox VE ${sim.pveVersion} simulator, nodes ${sim.nodes.join(', ')}${guests ? `, ${guests} preloaded guests` : ''}`,
    `  url          ${sim.url}`,
    `  api          ${sim.apiUrl}`,
    ...(sim.fingerprint ? [`  fingerprint  ${sim.fingerprint}`] : []),
    `  token        ${sim.token.header}`,
    `  root@pam     password ${sim.rootPassword}`,
    `  schema       ${sim.schemaValidation ? 'requests validated against apidoc.json' : 'checks OFF'}`,
    `  control      ${values.control ? `file ${values.control}, ` : ''}POST ${sim.url}/_sim/control (loopback only)`,
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
  const stop = (): void => {
    void sim.close().then(() => process.exit(0))
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

main().catch((err: unknown) => {
  process.stderr.write(`pve-sim: ${err instanceof Error ? err.message : String(err)}\n`)
  process.exit(1)
})
