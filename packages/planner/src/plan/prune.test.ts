/**
 * The one prune stage (plan/prune.ts), applied on the simulator with every kind in play: guests (with HA and
 * pools), backup jobs naming them and pools holding them are declared, then a random part of git is removed
 * and the cycles run under a random budget. No plan deletes more than `pruneBudget` objects of all kinds
 * together, no cycle fails because PVE already did what the plan meant to do (a destroy with purge edits backup
 * jobs, HA and pools), and the estate converges.
 */
import { fc, test } from '@fast-check/vitest'
import { expect } from 'vitest'
import type { Manifest } from '@proxops/schema'
import { backupJob, desired, policy, pool, vm } from '../fixtures.test.helpers.js'
import { failures, simCycle, withSim } from '../test-support/sim.js'

const DELETES = new Set(['delete'])

const estate = fc.record({
  guests: fc.uniqueArray(fc.integer({ min: 100, max: 109 }), { minLength: 1, maxLength: 6 }),
  ha: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
  inPool: fc.array(fc.constantFrom(undefined, 'a', 'b'), { minLength: 6, maxLength: 6 }),
  jobs: fc.array(fc.subarray([0, 1, 2, 3, 4, 5], { minLength: 1 }), { maxLength: 3 }),
  // what git keeps afterwards (the rest is removed)
  keepGuest: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
  keepHa: fc.array(fc.boolean(), { minLength: 6, maxLength: 6 }),
  keepJob: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
  keepPool: fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }),
  budget: fc.integer({ min: 0, max: 3 }),
})

test.prop([estate], { numRuns: 25 })(
  'one budget for every kind: deletes of all kinds together never exceed it, and no cycle fails',
  async (e) => {
    const ha = { max_restart: 1, max_relocate: 1, strict: false, state: 'stopped' }
    const guest = (i: number, keep = { ha: true }): Manifest =>
      vm(
        `g${e.guests[i]}`,
        e.guests[i] as number,
        {
          state: 'stopped',
          ...(e.ha[i] && keep.ha ? { ha } : {}),
          ...(e.inPool[i] !== undefined ? { pool: e.inPool[i] } : {}),
        } as never,
      )
    const all = (keep: boolean): Manifest[] => {
      const out: Manifest[] = []
      e.guests.forEach((_, i) => {
        if (keep && !e.keepGuest[i]) return
        out.push(guest(i, { ha: !keep || (e.keepHa[i] as boolean) }))
      })
      ;(['a', 'b'] as const).forEach((id, i) => {
        const used = out.some((m) => (m.spec as { pool?: string }).pool === id)
        if (!keep || e.keepPool[i] || used) out.push(pool(id))
      })
      e.jobs.forEach((members, j) => {
        const vmids = members.filter((i) => i < e.guests.length).map((i) => e.guests[i] as number)
        const alive = keep ? vmids.filter((v) => out.some((m) => (m.spec as { vmid?: number }).vmid === v)) : vmids
        if (alive.length === 0 || (keep && !e.keepJob[j])) return
        out.push(backupJob(`job${j}`, { selection: { vmids: alive } }))
      })
      return out
    }
    const pol = policy({ nodes: [], pruneRatioLimit: 1, allowEmpty: ['VM', 'BackupJob', 'Pool'] })
    await withSim(undefined, async (env) => {
      const first = await simCycle(env, desired(...all(false)), { ...pol, pruneBudget: 'unlimited' }, { apply: true })
      expect(failures(first.report)).toEqual([])
      const later = desired(...all(true))
      for (let cycle = 0; cycle < 12; cycle++) {
        const c = await simCycle(env, later, { ...pol, pruneBudget: e.budget }, { apply: true })
        expect(c.plan.actions.filter((a) => DELETES.has(a.type)).length).toBeLessThanOrEqual(e.budget)
        expect(failures(c.report)).toEqual([])
        if (c.plan.actions.length === 0) break
      }
      if (e.budget > 0) expect((await simCycle(env, later, { ...pol, pruneBudget: e.budget })).plan.actions).toEqual([])
    })
  },
)
