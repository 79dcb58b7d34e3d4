/**
 * The PVE of the planner's unit tests: the simulator's model and HTTP layer run in this process
 * (`createInProcessSimulator`), behind the real client, so observe, execute and every applied plan meet PVE's
 * behaviour without sockets, TLS or a second model written for the tests.
 */
import {
  createInProcessSimulator,
  type InProcessOptions,
  type InProcessSimulator,
  type VolumeSpec,
} from '@proxops/pve-sim'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import type { DesiredState } from '../desired.js'
import type { Report } from '../execute/execute.js'
import { known, type LiveInventory } from '../inventory.js'
import type { Plan, Policy } from '../plan-types.js'
import { reconcile } from '../reconcile/reconcile.js'

export interface SimPve {
  sim: InProcessSimulator
  /** the real client over the in-process simulator; fits both planner ports */
  client: PveClient
  /** the requests so far, as `METHOD /concrete/path` below /api2/json (for request-budget assertions) */
  requests(): string[]
  close(): Promise<void>
}

/**
 * `as: 'root@pam'` logs in with root@pam's password (a ticket), for what PVE reserves to root@pam (bind mounts,
 * feature flags of privileged containers); the default is the simulator's API token.
 */
export function simPve(options: InProcessOptions & { as?: 'token' | 'root@pam' } = {}): SimPve {
  const { as = 'token', ...simOptions } = options
  const sim = createInProcessSimulator({
    taskDurationMs: 10,
    resourcesLagMs: 0,
    authFailureDelayMs: 0,
    log: () => {},
    ...simOptions,
  })
  const client = createPveClient({
    baseUrl: sim.url,
    auth:
      as === 'root@pam'
        ? { type: 'ticket', username: 'root@pam', password: sim.rootPassword }
        : { type: 'token', tokenId: sim.token.id, secret: sim.token.secret },
    dispatcher: sim.dispatcher,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
  })
  return {
    sim,
    client,
    requests: () => sim.stats.requests.map((r) => `${r.method} ${r.rawPath}`),
    async close() {
      await client.close()
      await sim.close()
    },
  }
}

/**
 * Loads a hand-made inventory into the simulator: its guests as existing config files (`loadGuest`), its
 * files (ISOs, templates, images) and its pools with their members, made through the API as an admin would.
 * Pending changes cannot be loaded: a guest that has some is refused.
 */
export async function loadInventory(env: SimPve, inv: LiveInventory): Promise<void> {
  for (const g of inv.guests) {
    if (Object.keys(g.pending).length > 0 || g.pendingDeletes.length > 0)
      throw new Error(`loadInventory: guest ${g.vmid} has pending changes, which a config file cannot hold`)
    env.sim.control.loadGuest({
      vmid: g.vmid,
      type: g.type,
      node: g.node,
      status: g.status === 'running' ? 'running' : 'stopped',
      config: { ...g.config },
    })
  }
  for (const v of inv.volumes) {
    const filename = v.volid.slice(v.volid.indexOf('/') + 1)
    env.sim.control.addVolume(v.node, v.storage, {
      filename,
      content: v.content as VolumeSpec['content'],
      ...(v.size !== undefined ? { size: v.size } : {}),
    })
  }
  for (const p of known(inv.pools) ?? []) {
    await env.client.createPool({ poolid: p.poolid, ...(p.comment !== undefined ? { comment: p.comment } : {}) })
    if (p.vmids.length > 0) await env.client.updatePool({ poolid: p.poolid, vms: p.vmids.join(',') })
  }
}

/**
 * Runs `body` against a fresh in-process simulator logged in as root@pam (what the planner's fixtures
 * declare includes bind mounts), with tasks and HA manager cycles that take no time, loaded with `seed`;
 * closes it afterwards.
 */
export async function withSim<T>(seed: LiveInventory | undefined, body: (env: SimPve) => Promise<T>): Promise<T> {
  const env = simPve({ taskDurationMs: 0, haLagMs: 0, as: 'root@pam' })
  try {
    if (seed) await loadInventory(env, seed)
    return await body(env)
  } finally {
    await env.close()
  }
}

/** what one cycle on the simulator saw, planned and did */
export interface SimCycle {
  /** what PVE showed before the plan */
  live: LiveInventory
  plan: Plan
  /** present when the cycle applied */
  report?: Report
}

/**
 * One cycle on the in-process simulator the way the CLI runs it (`reconcile`), with waits shortened for
 * tests: `apply` executes the plan, otherwise a dry run. Secrets resolve through `secrets`.
 */
export async function simCycle(
  env: SimPve,
  desired: DesiredState,
  policy: Policy,
  options: { apply?: boolean; secrets?: (ref: string) => string | undefined } = {},
): Promise<SimCycle> {
  const { inventory, plan, report } = await reconcile({
    desired,
    reader: env.client,
    ...(options.apply ? { writer: env.client } : {}),
    policy,
    ...(options.secrets ? { secrets: options.secrets } : {}),
    execute: {
      taskPollIntervalMs: 0,
      confirmAttempts: 5,
      confirmDelayMs: 0,
      lockRetryDelayMs: 0,
      progressIntervalMs: 60_000,
    },
  })
  return { live: inventory, plan, ...(report ? { report } : {}) }
}

/** simCycle that applies, refusing a report in which an action did not end ok (its failures are the error) */
export async function simApply(
  env: SimPve,
  desired: DesiredState,
  policy: Policy,
  secrets?: (ref: string) => string | undefined,
): Promise<SimCycle> {
  const c = await simCycle(env, desired, policy, { apply: true, ...(secrets ? { secrets } : {}) })
  const failed = failures(c.report)
  if (failed.length > 0) throw new Error(`actions did not end ok:\n${failed.join('\n')}`)
  return c
}

/**
 * One apply of `desired` on a fresh simulator (loaded with `seed`): the plan it ran (`first`, made over what the
 * simulator showed), what PVE shows after it (`after`) and the next plan (`second`). Every action must succeed.
 */
export function simConverge(
  desired: DesiredState,
  policy: Policy,
  options: { seed?: LiveInventory; secrets?: (ref: string) => string | undefined } = {},
): Promise<{ first: Plan; after: LiveInventory; second: Plan }> {
  return withSim(options.seed, async (env) => {
    const applied = await simApply(env, desired, policy, options.secrets)
    const next = await simCycle(env, desired, policy, options.secrets ? { secrets: options.secrets } : {})
    return { first: applied.plan, after: next.live, second: next.plan }
  })
}

/** the actions of a report that did not end ok, as `id: status error` lines (empty when all went through) */
export function failures(report: Report | undefined): string[] {
  return (report?.results ?? [])
    .filter((r) => r.status !== 'ok')
    .map((r) => `${r.id}: ${r.status} ${r.error ?? r.skip?.reason ?? ''}`)
}

/**
 * Runs `body` with PVE's tasks of `type` held (`setTaskBehaviour(type, { hold: true })`, docs/simulator-model.md),
 * and fails if `body` ends while such a task is still running; then releases the task and returns `body`'s result.
 * Proves a caller waits for a task's end whatever the machine's speed, where a long task duration only hoped so.
 */
export async function waitsForHeldTask<T>(sim: InProcessSimulator, type: string, body: () => Promise<T>): Promise<T> {
  const tick = () => new Promise((resolve) => setTimeout(resolve, 2))
  sim.control.setTaskBehaviour(type, { hold: true })
  let ended = false
  const result = body().finally(() => (ended = true))
  result.catch(() => {}) // reported by the caller's await, or by the throw below
  try {
    while (!ended && !sim.control.tasks().some((t) => t.type === type && t.status === 'running')) await tick()
    // a few more turns: a caller that does not wait for the task ends in them
    for (let i = 0; i < 10 && !ended; i++) await tick()
    if (ended) throw new Error(`ended while its ${type} task was held running (or before one ran)`)
  } finally {
    sim.control.setTaskBehaviour(type, null)
  }
  return result
}
