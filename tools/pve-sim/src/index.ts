/**
 * @proxops/pve-sim: a Proxmox VE 9.1 (8.4 selectable) API simulator for tests, the demo and benchmarks.
 * `startSimulator` composes the PVE model (src/model) with the HTTP layer (src/http: decoding, schema
 * validation against apidoc.json, auth, envelopes, faults). See README.md and docs/simulator.md.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { loadApidoc, type PveVersion } from './apidoc/load.js'
import { ControlApplier, parseControlDoc, watchControlFile } from './control/file.js'
import { FaultState } from './control/faults.js'
import { createControl, type SimControl } from './control/index.js'
import { StatsLog, type SimStats } from './control/stats.js'
import { createCluster } from './sim-cluster.js'
import { ApiHandler } from './http/api.js'
import { accessRoutes } from './access/routes.js'
import { AccessState } from './access/state.js'
import { AuthState } from './http/auth.js'
import { listen } from './http/server.js'
import { fingerprintOf, makeCertificate } from './http/tls.js'
import { SimDispatcher } from './in-process.js'

export type { SimControl, TransportControls, FailureBurst, LatencyRule, RequestMatcher } from './control/index.js'
export type { SimStats, RequestRecord } from './control/stats.js'
export type { ControlDoc } from './control/file.js'
export { parseControlDoc, ControlDocError } from './control/file.js'
export type { GuestInfo, GuestSpec, TaskInfo, VolumeSpec, TaskBehaviour } from './model/index.js'
export type { SimCluster } from './sim-cluster.js'
export { PveHttpError } from './model/errors.js'
export type { PveVersion, ApiNode, ApiMethodInfo, SchemaProp } from './apidoc/load.js'
export { loadApidoc } from './apidoc/load.js'
export { apidocForTests } from './apidoc/test-data.js'
export type { SimDispatcher } from './in-process.js'

/** the API token `pnpm sim` prints by default (test-only; the examples' SOPS files hold it) */
export const DEMO_TOKEN_ID = 'root@pam!proxops'
export const DEMO_TOKEN_SECRET = '5b1f0c2e-0d0b-4a51-9a43-0c7a1d2e3f40'

export interface SimulatorOptions {
  /** node names (default pve1, pve2, pve3) */
  nodes?: string[]
  pveVersion?: PveVersion
  /** HTTPS with a self-signed certificate (default true); false = plain HTTP */
  tls?: boolean
  /** 0 = a free port (default) */
  port?: number
  host?: string
  /** how long worker tasks run (default 250 ms) */
  taskDurationMs?: number
  seed?: number
  /** preload N guests spread over the nodes, derived from the seed */
  estate?: { guests: number }
  /** accepted API tokens (default one token `root@pam!proxops` with a random secret) */
  tokens?: { id: string; secret: string }[]
  /** root@pam's password for POST /access/ticket (default random) */
  rootPassword?: string
  /**
   * validate requests against apidoc.json: true (default; off with a warning when the file is absent), false, or
   * 'if-found' (on when the file is found, quietly off otherwise: the demo in a clone with nothing beside it)
   */
  schemaValidation?: boolean | 'if-found'
  /** PVE delays every 401 by 3 s (default 3000) */
  authFailureDelayMs?: number
  /** PVE >= 8.4 error bodies carry `message` (default true); false = PVE <= 8.3 bodies */
  errorMessageInBody?: boolean
  /** how long fresh guests and power changes take to show in /cluster/resources (model default) */
  resourcesLagMs?: number
  /** pveproxy's timeout for proxied calls (PVE: 30000): injected latency above it answers 596 while the call still completes */
  proxyTimeoutMs?: number
  /** window after dispatch in which task status answers 400 `no such task` (model default 0) */
  noSuchTaskWindowMs?: number
  /** one HA CRM/LRM cycle: an HA-managed guest's power request takes this long before the LRM acts (default 2000) */
  haLagMs?: number
  /** JSON control file, applied now and re-read on change */
  controlFile?: string
  /** serve `POST /_sim/control`, `GET /_sim/stats` on loopback (default true) */
  controlEndpoint?: boolean
  /** the key and certificate to serve (PEM); default: a new self-signed one at every start */
  certificate?: { key: string; cert: string }
  /** warnings and internal errors (default: stderr) */
  log?: (line: string) => void
}

/** what both kinds of simulator offer: the credentials, the estate's shape, the control and the counters */
export interface SimulatorBase {
  readonly token: { id: string; secret: string; header: string }
  readonly rootPassword: string
  readonly pveVersion: PveVersion
  readonly nodes: string[]
  /** whether requests are checked against apidoc.json */
  readonly schemaValidation: boolean
  readonly control: SimControl
  readonly stats: SimStats
}

export interface Simulator extends SimulatorBase {
  /** `https://127.0.0.1:PORT` */
  readonly url: string
  /** url + `/api2/json` */
  readonly apiUrl: string
  /** SHA-256 `AA:BB:...`, undefined with tls=false */
  readonly fingerprint: string | undefined
  readonly caPem: string | undefined
  close(): Promise<void>
}

/** startSimulator's options that apply without a socket (no TLS, port, host, control file or endpoint) */
export type InProcessOptions = Omit<
  SimulatorOptions,
  'tls' | 'port' | 'host' | 'controlFile' | 'controlEndpoint' | 'certificate'
>

export interface InProcessSimulator extends SimulatorBase {
  /** a placeholder origin for the client's baseUrl: requests never leave the process */
  readonly url: string
  /** an undici Dispatcher that answers here: pass it as the client's `dispatcher` */
  readonly dispatcher: SimDispatcher
  /** ends the requests under way (as dropped connections) and refuses new ones */
  close(): Promise<void>
}

/** The parts startSimulator and createInProcessSimulator share: the model, auth, faults and the HTTP layer. */
function compose(
  options: InProcessOptions,
  endpoint?: (nodes: string[]) => { node: string; fingerprint: string } | undefined,
) {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`))
  const nodes = options.nodes ?? ['pve1', 'pve2', 'pve3']
  const pveVersion = options.pveVersion ?? '9.1'
  const taskDurationMs = options.taskDurationMs ?? 250
  const tokens = options.tokens ?? [{ id: DEMO_TOKEN_ID, secret: randomUUID() }]
  const first = tokens[0]
  if (!first) throw new Error('pve-sim: options.tokens must list at least one token')
  const rootPassword = options.rootPassword ?? randomBytes(12).toString('base64url')

  let apidoc
  if (options.schemaValidation !== false) {
    const loaded = loadApidoc(pveVersion)
    if (loaded.ok) apidoc = loaded.tree
    else if (options.schemaValidation !== 'if-found') log(`pve-sim: warning: ${loaded.warning}`)
  }

  const cluster = createCluster({
    nodes,
    pveVersion,
    seed: options.seed ?? 1,
    taskDurationMs,
    ...(options.estate ? { estate: options.estate } : {}),
    ...(options.resourcesLagMs !== undefined ? { resourcesLagMs: options.resourcesLagMs } : {}),
    ...(options.noSuchTaskWindowMs !== undefined ? { noSuchTaskWindowMs: options.noSuchTaskWindowMs } : {}),
    ...(options.haLagMs !== undefined ? { haLagMs: options.haLagMs } : {}),
  })
  const auth = new AuthState(rootPassword, tokens)
  const access = new AccessState(pveVersion)
  access.poolMembers = () => cluster.pools()
  access.backupJob = (id) => cluster.backupJob(id)
  access.replicationJobExists = (id) => cluster.replicationJobExists(id)
  cluster.setAclCleanup({
    vm: (vmid) => access.removeAclNode(`/vms/${vmid}`),
    storage: (id) => access.removeAclNode(`/storage/${id}`),
    pool: (poolid) => access.deletePoolAcl(poolid),
  })
  // configured tokens are full-privilege tokens of their user (privsep=0), as `pveum user token add --privsep 0`
  for (const t of tokens) access.addConfiguredToken(t.id)
  const faults = new FaultState()
  const stats = new StatsLog()
  const control = createControl(cluster, faults, auth, first.id, (id) => access.addConfiguredToken(id))
  const endpointOf = endpoint?.(nodes)
  const api = new ApiHandler({
    routes: [...cluster.routes, ...accessRoutes(access, auth)],
    access,
    apidoc,
    auth,
    faults,
    stats,
    authFailureDelayMs: options.authFailureDelayMs ?? 3000,
    messageInBody: options.errorMessageInBody ?? true,
    nodes: () => nodes,
    localNode: nodes[0] ?? 'pve1',
    proxyTimeoutMs: options.proxyTimeoutMs ?? 30_000,
    currentConfig: (vmid) => cluster.guest(vmid)?.config,
    ...(endpointOf ? { endpoint: endpointOf } : {}),
    log,
  })
  return {
    log,
    nodes,
    pveVersion,
    taskDurationMs,
    rootPassword,
    api,
    control,
    stats,
    schemaValidation: apidoc !== undefined,
    token: { id: first.id, secret: first.secret, header: `PVEAPIToken=${first.id}=${first.secret}` },
  }
}

/**
 * The simulator in this process, without a socket: the same model and HTTP layer as startSimulator, reached
 * through `dispatcher` (an undici Dispatcher) instead of a port. For unit tests that want PVE's behaviour
 * through the real client at the cost of a function call.
 */
export function createInProcessSimulator(options: InProcessOptions = {}): InProcessSimulator {
  const sim = compose(options)
  const dispatcher = new SimDispatcher(sim.api)
  return {
    url: 'http://pve-sim.invalid:8006',
    token: sim.token,
    rootPassword: sim.rootPassword,
    pveVersion: sim.pveVersion,
    nodes: sim.nodes,
    schemaValidation: sim.schemaValidation,
    control: sim.control,
    stats: sim.stats,
    dispatcher,
    close: () => dispatcher.destroy(),
  }
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const tls =
    options.tls === false
      ? undefined
      : options.certificate
        ? { ...options.certificate, fingerprint: fingerprintOf(options.certificate.cert) }
        : await makeCertificate((options.nodes ?? ['pve1'])[0] ?? 'pve-sim')
  // /nodes reports the endpoint's certificate as the first node's ssl_fingerprint
  const sim = compose(options, (nodes) =>
    tls && nodes[0] ? { node: nodes[0], fingerprint: tls.fingerprint } : undefined,
  )
  const { log, nodes, control, stats, api, taskDurationMs } = sim

  const applier = new ControlApplier(control, taskDurationMs)
  const controlEndpoint =
    options.controlEndpoint === false
      ? undefined
      : (method: string, path: string, body: Buffer) => {
          if (method === 'POST' && path === '/_sim/control') {
            try {
              applier.apply(parseControlDoc(body.toString('utf8') || '{}', 'POST /_sim/control'), { replace: false })
              return { status: 200, body: { ok: true } }
            } catch (err) {
              return { status: 400, body: { error: (err as Error).message } }
            }
          }
          if (method === 'GET' && path === '/_sim/stats') {
            return {
              status: 200,
              body: {
                requests: stats.requests.length,
                writes: stats.writes(),
                byStatus: stats.byStatus(),
                imageInfoRuns: control.imageInfoRuns(),
              },
            }
          }
          if (method === 'GET' && path === '/_sim/guests') return { status: 200, body: control.guests() }
          return { status: 404, body: { error: `unknown control call ${method} ${path}` } }
        }

  const host = options.host ?? '127.0.0.1'
  const { port, close: closeListener } = await listen(
    { api, log, ...(tls ? { tls } : {}), ...(controlEndpoint ? { control: controlEndpoint } : {}) },
    options.port ?? 0,
    host,
  )
  const stopWatch = options.controlFile
    ? watchControlFile(options.controlFile, applier, (e) => log(`pve-sim: ${e.message}`))
    : undefined

  const url = `${tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`
  return {
    url,
    apiUrl: `${url}/api2/json`,
    fingerprint: tls?.fingerprint,
    caPem: tls?.cert,
    token: sim.token,
    rootPassword: sim.rootPassword,
    pveVersion: sim.pveVersion,
    nodes,
    schemaValidation: sim.schemaValidation,
    control,
    stats,
    async close() {
      stopWatch?.()
      await closeListener()
    },
  }
}
