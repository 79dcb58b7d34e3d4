import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { haDrift2Arb, poolDrift2Arb } from '../arbitraries.test.helpers.js'
import { backupJob, lookup, policy, selectedBy } from '../fixtures.test.helpers.js'
import type { DesiredState } from '../desired.js'
import { kindProblems } from '../kit/kind.js'
import type { Action, Plan } from '../plan-types.js'
import { privilegeNeeds } from '../privileges.js'
import { simApply, simCycle, withSim } from '../test-support/sim.js'
import { KINDS, kindOf, kindOfManifest, SUMMARY } from './index.js'

describe('the kind contract', () => {
  it('every registry entry has every part of the contract', () => {
    for (const kind of KINDS) expect(kindProblems(kind), kind.name).toEqual([])
  })

  it('a kind value that lacks a part is named with what it lacks (a planted violation)', () => {
    const [first] = KINDS
    const { confirm: _c, ...noConfirm } = first!
    expect(kindProblems(noConfirm)).toEqual(['no confirm'])
    const { createGuest: _r, ...fewerRunners } = first!.run
    expect(kindProblems({ ...first!, run: fewerRunners })).toEqual([
      'privileges for createGuest, which it does not run',
    ])
    expect(kindProblems({ ...first!, privileges: {} })).toContain('no privileges for createGuest')
  })

  it('names, prune places and manifest kinds are each declared once; one kind reads the guests', () => {
    expect(new Set(KINDS.map((k) => k.name)).size).toBe(KINDS.length)
    const orders = KINDS.flatMap((k) => (k.pruneOrder === undefined ? [] : [k.pruneOrder]))
    expect(new Set(orders).size).toBe(orders.length)
    const manifests = KINDS.flatMap((k) => k.manifests)
    expect(new Set(manifests).size).toBe(manifests.length)
    expect(KINDS.filter((k) => k.readsGuests)).toHaveLength(1)
  })

  it('kinds that plan the same action type count it the same way', () => {
    const seen = new Map<string, string>()
    for (const kind of KINDS)
      for (const [type, count] of Object.entries(kind.summary)) {
        expect(seen.get(type) ?? count, `${kind.name} ${type}`).toBe(count)
        seen.set(type, count)
      }
  })

  it('an action whose requests no kind runs, or two kinds run, has no kind (a planted violation)', () => {
    const action = (...calls: string[]) =>
      ({ id: 'x#update', requests: calls.map((call) => ({ call })) }) as unknown as Action
    expect(() => kindOf(action('createGuest'))).not.toThrow()
    expect(() => kindOf(action('renameGuest'))).toThrow(/not one kind's/)
    expect(() => kindOf(action('createGuest', 'createPool'))).toThrow(/not one kind's/)
    expect(() => kindOf(action())).toThrow(/not one kind's/)
    expect(() => kindOfManifest({ kind: 'Network' as never })).toThrow(/no kind declares Network/)
  })

  /** every action of a plan: one kind runs all its requests, confirms it, counts it and says what it needs */
  function expectWhole(p: Plan): void {
    for (const a of p.actions) {
      const kind = kindOf(a)
      for (const r of a.requests) expect(Object.keys(kind.run)).toContain(r.call)
      expect(typeof kind.confirm).toBe('function')
      expect(kind.summary[a.type], `${kind.name} counts ${a.type}`).toBe(SUMMARY[a.type])
      expect(SUMMARY[a.type], a.type).toBeDefined()
    }
    expect(() => privilegeNeeds(p)).not.toThrow()
  }

  const withJob = (d: DesiredState, job: boolean): DesiredState =>
    job
      ? {
          ...d,
          manifests: [
            ...d.manifests,
            backupJob('nightly', { selection: { vmids: [901] } }),
            ...selectedBy([backupJob('nightly', { selection: { vmids: [901] } })]),
          ],
        }
      : d

  test.prop([fc.oneof(haDrift2Arb, poolDrift2Arb), fc.boolean()], { numRuns: 12 })(
    "a push's plans (creates, then changes and prunes of every kind) hold only actions some kind runs, confirms and counts",
    ([a, b], job) =>
      withSim(undefined, async (env) => {
        const pol = policy({ pruneRatioLimit: 1, pruneBudget: 'unlimited' })
        const first = await simApply(env, withJob(a, job), pol, lookup)
        expectWhole(first.plan)
        expectWhole((await simCycle(env, withJob(b, !job), pol, { secrets: lookup })).plan)
      }),
  )
})
