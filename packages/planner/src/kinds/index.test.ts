import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { haDrift2Arb, poolDrift2Arb } from '../arbitraries.test.helpers.js'
import { backupJob, lookup, policy, selectedBy } from '../fixtures.test.helpers.js'
import type { DesiredState } from '../desired.js'
import { kindProblems } from '../kit/kind.js'
import type { Action, Plan } from '../plan-types.js'
import { privilegeNeeds } from '../privileges.js'
import { simApply, simCycle, withSim } from '../test-support/sim.js'
import type { Kind } from '../kit/kind.js'
import { actionProblems, describeAction, KINDS, kindOf, kindOfManifest } from './index.js'

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
    expect(kindProblems({ ...first!, verbs: { join: { rank: 8 } } })).toEqual([
      'verbs for join, which it does not plan',
    ])
  })

  it('names, prune places and manifest kinds are each declared once; one kind reads the guests', () => {
    expect(new Set(KINDS.map((k) => k.name)).size).toBe(KINDS.length)
    const orders = KINDS.flatMap((k) => (k.pruneOrder === undefined ? [] : [k.pruneOrder]))
    expect(new Set(orders).size).toBe(orders.length)
    const manifests = KINDS.flatMap((k) => k.manifests)
    expect(new Set(manifests).size).toBe(manifests.length)
    expect(KINDS.filter((k) => k.readsGuests)).toHaveLength(1)
  })

  it("an action is its kind's by its kind field; one the kind cannot run, confirm or count is named (planted violations)", () => {
    const action = (kind: string, type: string, ...calls: string[]) =>
      ({ id: `x#${type}`, kind, type, requests: calls.map((call) => ({ call })) }) as unknown as Action
    expect(kindOf(action('HA', 'create')).name).toBe('ha')
    expect(kindOf(action('VM', 'create')).name).toBe('guest')
    expect(kindOf(action('Pool', 'join')).name).toBe('pool')
    expect(() => kindOf(action('Network', 'create'))).toThrow(/no kind declares Network actions/)
    expect(() => kindOfManifest({ kind: 'Network' as never })).toThrow(/no kind declares Network/)
    expect(actionProblems(action('VM', 'create', 'createGuest'))).toEqual([])
    expect(actionProblems(action('HA', 'update', 'haWrite'))).toEqual([])
    // an HA write under the guest's kind: the guest kind has no runner for it
    expect(actionProblems(action('VM', 'update', 'haWrite'))).toEqual(['kind guest has no runner for haWrite'])
    // a verb the kind does not plan, a kind nobody declares
    expect(actionProblems(action('HA', 'join', 'haWrite'))).toEqual(['kind ha does not plan join'])
    expect(actionProblems(action('Network', 'create'))).toEqual(['no kind declares Network actions'])
    // a registry entry that plans an action without a confirm or a runner (the planted registry)
    const ha = KINDS.find((k) => k.name === 'ha') as Kind
    const { confirm: _c, ...noConfirm } = ha
    expect(actionProblems(action('HA', 'create', 'haWrite'), [noConfirm as Kind])).toEqual(['kind ha has no confirm'])
    expect(actionProblems(action('HA', 'create', 'haWrite'), [{ ...ha, run: {} }])).toEqual([
      'kind ha has no runner for haWrite',
    ])
  })

  it('every verb a kind plans reads as its kind says, with the symbol its summary count gives', () => {
    for (const kind of KINDS)
      for (const [verb, count] of Object.entries(kind.summary)) {
        const k = kind.actionKinds?.[0] ?? kind.manifests[0]!
        const d = describeAction({ kind: k, type: verb, address: `${k}/x` })
        expect(d.phrase, `${kind.name} ${verb}`).toMatch(/^will /)
        expect(d.symbol).toBe(count === 'delete' ? '-' : ['create', 'download', 'snapshot'].includes(count) ? '+' : '~')
      }
    expect(describeAction({ kind: 'HA', type: 'create', address: 'VM/pve1/100(web)' })).toEqual({
      symbol: '+',
      phrase: 'will become an HA resource',
      label: 'HA create',
    })
    expect(describeAction({ kind: 'VM', type: 'create', address: 'VM/pve1/100(web)' }).label).toBe('create')
  })

  /** every action of a plan: its kind runs all its requests, confirms it, counts it and says what it needs */
  function expectWhole(p: Plan): void {
    for (const a of p.actions) expect(actionProblems(a), a.id).toEqual([])
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
