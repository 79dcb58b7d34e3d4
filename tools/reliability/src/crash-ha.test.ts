/**
 * Crash safety with HA guests in the plan (issue 30, item 4), in-process against the simulator so that many seeds
 * stay cheap: each seed plans a random estate of HA and plain VMs (power flips through HA, restart-class cores
 * changes), "SIGKILLs" the apply once PVE has served a random number of writes (from then on the process sends
 * nothing: every call of the dead apply fails), lets PVE finish what it started (tasks, queued CRM commands), and
 * applies again. Every next apply must end well within the task timeout (no wait runs out: HA's state ends it),
 * converged or failed with a reason; one more cycle converges, and no guest desired running is left stopped.
 * Seeds chain on one simulator (each starts from the estate the previous one converged to) and are printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createInProcessSimulator, type InProcessSimulator } from '@proxops/pve-sim'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import { parseManifest, type Manifest } from '@proxops/schema'
import { DEFAULT_POLICY, reconcile, type Policy, type ReconcileResult } from '@proxops/planner'
import { random, runs } from './soak.js'

const VMIDS = [400, 401, 402, 403]
/** the first three are HA resources */
const HA_VMIDS = new Set([400, 401, 402])
const TASK_TIMEOUT_MS = 20_000
/** a next apply must end well inside the task timeout: no HA wait may run it out */
const NEXT_APPLY_BOUND_MS = 10_000

let sim: InProcessSimulator
let client: PveClient
const policy: Policy = { ...DEFAULT_POLICY, clusterEntry: 'c', pruneBudget: 0 }

beforeAll(() => {
  sim = createInProcessSimulator({
    nodes: ['pve1', 'pve2'],
    taskDurationMs: 5,
    haLagMs: 20,
    resourcesLagMs: 0,
    authFailureDelayMs: 0,
    log: () => {},
  })
  client = clientOf(sim)
})
afterAll(async () => {
  await client.close()
  await sim.close()
})

function clientOf(s: InProcessSimulator): PveClient {
  return createPveClient({
    baseUrl: s.url,
    auth: { type: 'token', tokenId: s.token.id, secret: s.token.secret },
    dispatcher: s.dispatcher,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
  })
}

interface Want {
  vmid: number
  state: 'started' | 'stopped'
  cores: number
}

function estate(seed: number): Want[] {
  const r = random(seed)
  return VMIDS.map((vmid) => ({ vmid, state: r() < 0.6 ? 'started' : 'stopped', cores: r() < 0.5 ? 1 : 2 }))
}

function manifest(w: Want): Manifest {
  const parsed = parseManifest({
    apiVersion: 'proxops/v1alpha1',
    kind: 'VM',
    metadata: { name: `vm-${w.vmid}` },
    spec: {
      node: w.vmid % 2 === 0 ? 'pve1' : 'pve2',
      vmid: w.vmid,
      state: w.state,
      memory: '512MiB',
      cpu: { type: 'host', cores: w.cores },
      disks: [{ storage: 'local-lvm', size: '1GiB', interface: 'scsi0' }],
      networks: [{ bridge: 'vmbr0' }],
      ...(HA_VMIDS.has(w.vmid) ? { ha: { max_restart: 1, max_relocate: 0 } } : {}),
    },
  })
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues))
  return parsed.manifest
}

const desiredOf = (wants: Want[]) => ({ cluster: 'c', manifests: wants.map(manifest) })
const execute = { taskPollIntervalMs: 10, taskTimeoutMs: TASK_TIMEOUT_MS, confirmDelayMs: 5, lockRetryDelayMs: 5 }

async function apply(wants: Want[], pve: PveClient): Promise<ReconcileResult> {
  return reconcile({ desired: desiredOf(wants), reader: pve, writer: pve, policy, execute })
}

/**
 * The same client, dead once PVE has served `writes` writes: what a SIGKILL leaves (nothing more is sent; what
 * PVE already accepted runs on).
 */
function dyingAfter(writes: number): PveClient {
  const dead = (): boolean => sim.stats.writes() >= writes
  return new Proxy(client, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        if (dead()) return Promise.reject(new Error('killed'))
        return (value as (...a: unknown[]) => unknown).apply(target, args)
      }
    },
  })
}

const settle = async (ms: number) => new Promise((r) => setTimeout(r, ms))

const failures = (r: ReconcileResult): string[] =>
  (r.report?.results ?? []).filter((x) => x.status === 'failed').map((x) => `${x.address}: ${x.error ?? ''}`)

describe('SIGKILL in the middle of an apply with HA guests in the plan', { timeout: 600_000 }, () => {
  it(`every next apply ends in bounded time, then converges with desired-running guests running`, async () => {
    const first = await apply(estate(1), client)
    expect(failures(first)).toEqual([])
    const seeds = Array.from({ length: runs(50) }, (_, i) => 2000 + i * 7919)
    const outcomes: { seed: number; killAt: number; killed: boolean; tookMs: number; blocked: boolean }[] = []
    for (const seed of seeds) {
      const wants = estate(seed)
      sim.stats.reset()
      // kill once PVE has served a random number of writes: always inside the apply when it writes that much
      const killAt = 1 + ((Math.imul(seed, 2654435761) >>> 0) % 8)
      const killedRun = await apply(wants, dyingAfter(killAt)).catch(() => undefined)
      const killed = killedRun === undefined || failures(killedRun).some((f) => f.endsWith('killed'))
      // tasks PVE already started, and commands already queued for the HA manager, run to their end; every other
      // seed applies again at once, while a stop the dead apply queued may still wait for the CRM's next round
      await settle(seed % 2 === 0 ? 150 : 0)

      const started = Date.now()
      const next = await apply(wants, client)
      const took = Date.now() - started
      const failed = failures(next)
      expect(took, `seed ${seed} (killed after ${killAt} writes): the next apply took ${took} ms`).toBeLessThan(
        NEXT_APPLY_BOUND_MS,
      )
      // honest: a failure says why, and no wait ran out the task timeout
      for (const f of failed) expect(f, `seed ${seed}`).not.toMatch(/not waiting longer|: $/)

      const again = failed.length > 0 ? await apply(wants, client) : next
      expect(failures(again), `seed ${seed}: after ${failed.join('; ')}`).toEqual([])
      const check = await reconcile({ desired: desiredOf(wants), reader: client, policy })
      // what HA and the guests looked like, for a seed that did not converge
      const state = async () =>
        JSON.stringify({
          wants,
          next: next.report?.results.map((r) => [r.id, r.status, r.error]),
          guests: VMIDS.map((v) => [v, sim.control.guest(v)?.status]),
          ha: (await client.haConfig('resources')).map((r) => [r.sid, r.state]),
        })
      if (check.plan.actions.length > 0) expect.fail(`seed ${seed} (killed after ${killAt} writes): ${await state()}`)
      for (const w of wants) {
        const g = sim.control.guest(w.vmid)
        expect(g?.status, `seed ${seed}: vm ${w.vmid}`).toBe(w.state === 'started' ? 'running' : 'stopped')
        expect(g?.config.cores, `seed ${seed}: vm ${w.vmid}`).toBe(String(w.cores))
      }
      outcomes.push({ seed, killAt, killed, tookMs: took, blocked: failed.length > 0 })
    }
    expect(outcomes).toHaveLength(seeds.length)
    const slowest = Math.max(...outcomes.map((o) => o.tookMs))
    const blocked = outcomes.filter((o) => o.blocked).length
    const killed = outcomes.filter((o) => o.killed).length
    console.log(
      `${seeds.length} seeds, ${killed} killed inside the apply: ${blocked} next applies failed with a reason first, slowest ${slowest} ms`,
    )
    // most seeds must really kill an apply (a plan with fewer writes than the kill point finishes)
    expect(killed).toBeGreaterThanOrEqual(seeds.length / 2)
  })
})
