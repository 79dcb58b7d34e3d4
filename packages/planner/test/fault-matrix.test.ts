/**
 * The fault matrix (docs/safety.md section 4, and the reliability suite): each run with a fault ends converged or reported;
 * once the fault clears, the next cycles converge with nothing deleted that should stay, no duplicate guest
 * and no untagged guest touched. Also: an apply cancelled half-way converges on the next run.
 */
import { describe, expect, it } from 'vitest'
import { ObserveError } from '../src/index.js'
import { cycle, failures, small, startEnv, testVm, type CycleResult, type Env } from './helpers.js'

const desired = [
  ['pve1', 501],
  ['pve2', 502],
  ['pve3', 503],
].map(([node, vmid]) => testVm(Number(vmid), { node, memory: '512MiB', ...small('4GiB') }, `m${vmid}`))
const keep = { pruneBudget: 2 as const, pruneRatioLimit: 1 }

interface Fault {
  name: string
  inject(env: Env): void
  /** what the faulty cycle must show: a failed action, a plan-level skip, an aborted observation, or nothing */
  effect: 'failed' | 'skipped' | 'aborted' | 'any'
}

const faults: Fault[] = [
  {
    name: '5xx burst on creates',
    inject: (env) =>
      env.sim.control.failNext({ method: 'POST', path: /^\/nodes\/pve\d\/qemu$/, status: 500, count: 2 }),
    effect: 'failed',
  },
  {
    name: '595 and 596 on reads',
    inject: (env) => env.sim.control.failNext({ method: 'GET', path: /pending$/, status: 596, count: 2 }),
    effect: 'any',
  },
  {
    name: 'failed create task',
    inject: (env) => env.sim.control.setTaskBehaviour('qmcreate', { fail: 'unable to create VM - storage full' }),
    effect: 'failed',
  },
  {
    name: 'slow tasks',
    inject: (env) => env.sim.control.setTaskBehaviour('qmcreate', { durationMs: 200 }),
    effect: 'any',
  },
  { name: 'node offline', inject: (env) => env.sim.control.setNodeOnline('pve2', false), effect: 'skipped' },
  { name: 'lock contention', inject: (env) => env.sim.control.setFlockContention(502, true), effect: 'failed' },
  { name: 'revoked token', inject: (env) => env.sim.control.revokeToken(), effect: 'aborted' },
]

async function converge(env: Env): Promise<void> {
  for (let i = 0; i < 4; i++) {
    const r = await cycle(env, desired, { policy: keep })
    if (r.plan.actions.length === 0) return
  }
  const last = await cycle(env, desired, { policy: keep, dryRun: true })
  expect(last.plan.actions.map((a) => a.id)).toEqual([])
}

function clear(env: Env): void {
  env.sim.control.clearFaults()
  env.sim.control.setTaskBehaviour('qmcreate', null)
  env.sim.control.setFlockContention(502, false)
  env.sim.control.restoreToken()
}

describe('fault matrix (simulator)', () => {
  it.each(faults)('$name: reported, then converged once cleared', async (fault) => {
    const env = await startEnv({ estate: { guests: 2 }, seed: 3 })
    try {
      const untagged = new Map(env.sim.control.guests().map((g) => [g.vmid, g.digest]))
      // a first, clean cycle for half of the set, so faults meet both creates and updates
      expect(failures((await cycle(env, desired.slice(0, 2), { policy: keep })).report)).toEqual([])
      const changed = desired.map((m) => ({ ...m, spec: { ...m.spec, memory: 1024 } })) as typeof desired
      fault.inject(env)
      const faulty: CycleResult | Error = await cycle(env, changed, { policy: keep }).catch((error: unknown) =>
        error instanceof Error ? error : new Error(String(error)),
      )
      // the API token is a credential: it never shows in errors, plans or reports
      const text = faulty instanceof Error ? `${faulty.message} ${String(faulty.cause)}` : JSON.stringify(faulty)
      expect(text).not.toContain(env.sim.token.secret)
      if (faulty instanceof Error) {
        expect(faulty).toBeInstanceOf(ObserveError)
        expect(fault.effect).toBe('aborted')
      } else {
        if (fault.effect === 'failed') expect(faulty.report!.summary.failed).toBeGreaterThan(0)
        if (fault.effect === 'skipped') expect(faulty.plan.skips.length).toBeGreaterThan(0)
        expect(fault.effect).not.toBe('aborted')
        // every action ended ok, failed or skipped: nothing is left unreported
        for (const r of faulty.report!.results) expect(['ok', 'failed', 'skipped']).toContain(r.status)
        expect(faulty.report!.results.filter((r) => r.type === 'delete')).toEqual([])
      }
      clear(env)
      for (let i = 0; i < 4; i++) {
        const r = await cycle(env, changed, { policy: keep })
        if (r.plan.actions.length === 0) break
      }
      expect((await cycle(env, changed, { policy: keep, dryRun: true })).plan.actions.map((a) => a.id)).toEqual([])
      const vmids = env.sim.control.guests().map((g) => g.vmid)
      expect(vmids).toEqual([...untagged.keys(), 501, 502, 503].sort((a, b) => a - b))
      for (const [vmid, digest] of untagged) expect(env.sim.control.guest(vmid)!.digest).toBe(digest)
      for (const vmid of [501, 502, 503]) expect(env.sim.control.guest(vmid)!.config.memory).toBe('1024')
    } finally {
      await env.close()
    }
  })

  it('an apply cancelled half-way converges on the next run, without duplicates (crash test)', async () => {
    const env = await startEnv()
    try {
      const controller = new AbortController()
      const first = await cycle(env, desired, {
        policy: keep,
        execute: { signal: controller.signal, onProgress: (e) => e.type === 'action-started' && controller.abort() },
      })
      expect(first.report!.cancelled).toBe(true)
      expect(first.report!.results.filter((r) => r.status === 'ok').length).toBeGreaterThanOrEqual(1)
      expect(first.report!.results.filter((r) => r.skip?.code === 'cancelled').length).toBeGreaterThanOrEqual(1)
      await converge(env)
      expect(env.sim.control.guests().map((g) => g.vmid)).toEqual([501, 502, 503])
    } finally {
      await env.close()
    }
  })
})
