/**
 * Integration harness: the simulator (tools/pve-sim) behind the real client (@proxops/pve-client), and the
 * planner's observe -> plan -> execute cycle over it, as the CLI composes them.
 */
import { afterAll, beforeAll } from 'vitest'
import { startSimulator, type Simulator, type SimulatorOptions } from '@proxops/pve-sim'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import type { Manifest } from '@proxops/schema'
import { manifest } from '../src/testing/index.js'
import { failures } from '../src/test-support/sim.js'
import {
  DEFAULT_POLICY,
  describeAction,
  reconcile,
  type ExecuteOptions,
  type LiveInventory,
  type LiveReader,
  type Plan,
  type Policy,
  type PveWriter,
  type Report,
} from '../src/index.js'

export interface Env {
  sim: Simulator
  client: PveClient
  /** the client, as the planner's read port */
  reader: LiveReader
  writer: PveWriter
  close(): Promise<void>
}

export async function startEnv(options: SimulatorOptions = {}): Promise<Env> {
  const sim = await startSimulator({
    taskDurationMs: 10,
    resourcesLagMs: 0,
    authFailureDelayMs: 0,
    log: () => {},
    ...options,
  })
  const client = createPveClient({
    baseUrl: sim.url,
    auth: { type: 'token', tokenId: sim.token.id, secret: sim.token.secret },
    tls: sim.fingerprint !== undefined ? { fingerprint: sim.fingerprint } : {},
    // read retries as in production, with short delays so fault tests stay fast
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
  })
  // the real client fits both ports as is, as the CLI passes it
  const reader: LiveReader = client
  const writer: PveWriter = client
  return {
    sim,
    client,
    reader,
    writer,
    async close() {
      await client.close()
      await sim.close()
    },
  }
}

/**
 * The Env of a test file (or describe): started in beforeAll (startEnv with `options`), closed in afterAll. Its
 * fields read through to the started Env, so the tests use it as they would the Env itself.
 */
export function useEnv(options: SimulatorOptions = {}): Env {
  let started: Env | undefined
  beforeAll(async () => {
    started = await startEnv(options)
  })
  afterAll(async () => {
    await started?.close()
  })
  const env = (): Env => {
    if (started === undefined) throw new Error('the Env starts in beforeAll')
    return started
  }
  return {
    get sim() {
      return env().sim
    },
    get client() {
      return env().client
    },
    get reader() {
      return env().reader
    },
    get writer() {
      return env().writer
    },
    close: () => env().close(),
  }
}

/** A manifest document through the schema's parser (the normalised model plan() reads): the testing subpath's. */
export { manifest }

/**
 * The planner's standard test VM on pve1 (1 GiB, 2 cores, one 8 GiB disk, one NIC); `spec` overrides, and a field
 * set to undefined is left out (a VM without a NIC: `networks: undefined`; a clone: `disks: undefined`). `kind`
 * TemplateVM makes it a template.
 */
export const testVm = (vmid: number, spec: Record<string, unknown> = {}, name = `vm${vmid}`, kind = 'VM') =>
  manifest({
    kind,
    metadata: { name },
    spec: Object.fromEntries(
      Object.entries({
        node: 'pve1',
        vmid,
        memory: '1GiB',
        cpu: { type: 'host', cores: 2 },
        disks: [{ storage: 'local-lvm', size: '8GiB' }],
        networks: [{ bridge: 'vmbr0' }],
        ...spec,
      }).filter(([, v]) => v !== undefined),
    ),
  })

/** one host core, and one disk of `size` on local-lvm: the smaller VMs' hardware (spread into testVm's spec) */
export const small = (size: string, cores = 1) => ({
  cpu: { type: 'host', cores },
  disks: [{ storage: 'local-lvm', size }],
})

export interface CycleResult {
  live: LiveInventory
  plan: Plan
  report?: Report
}

export interface CycleOptions {
  policy?: Partial<Policy>
  secrets?: Record<string, string>
  /** plan only (like `proxops diff`) */
  dryRun?: boolean
  execute?: Omit<ExecuteOptions, 'reader' | 'secrets'>
}

/** One reconcile cycle: observe, plan, execute. */
export async function cycle(
  env: Env,
  manifests: readonly Manifest[],
  options: CycleOptions = {},
): Promise<CycleResult> {
  const policy: Policy = { ...DEFAULT_POLICY, shutdownTimeoutSeconds: 5, ...options.policy }
  const secrets = options.secrets ?? {}
  const { signal, ...executeOptions } = options.execute ?? {}
  // the cycle every caller runs: the planner's reconcile(), as the CLI calls it
  const { inventory, plan, report } = await reconcile({
    desired: { cluster: 'homelab', manifests },
    reader: env.reader,
    ...(options.dryRun ? {} : { writer: env.writer }),
    policy,
    secrets: (ref) => secrets[ref],
    ...(signal ? { signal } : {}),
    execute: {
      confirmDelayMs: 20,
      lockRetryDelayMs: 20,
      progressIntervalMs: 60_000,
      taskPollIntervalMs: 10,
      ...executeOptions,
    },
  })
  return { live: inventory, plan, ...(report ? { report } : {}) }
}

/** Actions of a plan as `type address` lines (for readable assertions). */
export function actionLines(p: Plan): string[] {
  return p.actions.map((a) => `${describeAction(a).label} ${a.address}`)
}

/** the actions of a report that did not end ok (the in-process harness's, test-support/sim.ts) */
export { failures }

/**
 * One raw API call with the simulator's root token, as an admin (or another cluster sharing a storage) would
 * make it outside ProxOps: form-encoded body, `{"data": ...}` unwrapped, PVE's message thrown on an error.
 */
export async function adminCall(
  env: Env,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  params: Record<string, string | number> = {},
): Promise<unknown> {
  const { request } = await import('node:https')
  const body = new URLSearchParams(
    Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])),
  ).toString()
  const u = new URL(`/api2/json${path}`, env.sim.url)
  const withQuery = method === 'GET' || method === 'DELETE'
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method,
        hostname: u.hostname,
        port: u.port,
        path: u.pathname + (withQuery && body ? `?${body}` : ''),
        agent: false,
        ...(env.sim.caPem !== undefined ? { ca: env.sim.caPem } : {}),
        headers: {
          Authorization: env.sim.token.header,
          ...(withQuery
            ? {}
            : {
                'Content-Type': 'application/x-www-form-urlencoded',
                'Content-Length': String(Buffer.byteLength(body)),
              }),
        },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          if ((res.statusCode ?? 500) >= 400) reject(new Error(`${res.statusCode} ${res.statusMessage}: ${text}`))
          else resolve((JSON.parse(text) as { data: unknown }).data)
        })
      },
    )
    req.on('error', reject)
    if (!withQuery) req.write(body)
    req.end()
  })
}
