/**
 * Why `apply --plan` refuses a saved plan (reconcile/saved-plan.ts, docs/safety.md): each refusal says what
 * differs, so the operator knows whether to diff again or look at PVE. Pure; part of the tests `pnpm mutate` runs
 * (docs/mutation-testing.md).
 */
import { describe, expect, test } from 'vitest'
import type { LiveGuest, LiveInventory } from '../inventory.js'
import type { Action, Plan } from '../plan-types.js'
import { makeAction, makePlan } from '../testing/index.js'
import { ReconcileError } from './errors.js'
import { checkSavedPlan, planDifference } from './saved-plan.js'

const update = (vmid: number, over: Partial<Action> = {}) =>
  makeAction({ requests: [{ call: 'updateConfig', node: 'pve1', guest: 'qemu', vmid, params: { cores: 2 } }], ...over })
const plan = (actions: readonly Action[], over: Partial<Plan> = {}): Plan => ({ ...makePlan(actions), ...over })

describe('planDifference', () => {
  const base = plan([update(100), update(101)])

  test('the same plan is no difference; keys in another order or spelled undefined do not make one', () => {
    expect(planDifference(base, structuredClone(base))).toBeUndefined()
    const second = 'action 2 (VM/pve1/101 update) differs from a fresh plan'
    const fresh = plan([update(100), update(101, { reason: 'other' })])
    // the first action is the same, written otherwise: the difference named is the second one
    const reordered = Object.fromEntries(Object.entries(update(100)).reverse()) as unknown as Action
    expect(planDifference(plan([reordered, update(101)]), fresh)).toBe(second)
    expect(planDifference(plan([{ ...update(100), name: undefined }, update(101)]), fresh)).toBe(second)
    const nested = update(100, { diffs: [{ key: 'cores', field: 'spec.cores', before: '1', after: '2' }] })
    const nestedReordered = {
      ...nested,
      diffs: nested.diffs.map((d) => Object.fromEntries(Object.entries(d).reverse())),
    }
    expect(
      planDifference(
        plan([nestedReordered as unknown as Action, update(101)]),
        plan([nested, update(101, { reason: 'other' })]),
      ),
    ).toBe(second)
  })

  test('names the first part that differs, in the order an operator checks them', () => {
    expect(planDifference(base, plan(base.actions, { cluster: 'lab' }))).toBe('it is for cluster "homelab"')
    expect(planDifference(base, plan(base.actions, { policy: { ...base.policy, pruneBudget: 9 } }))).toBe(
      'it was made with another policy (prune budget, disruption or ownership tag)',
    )
    expect(planDifference(base, plan([...base.actions, update(102)]))).toBe(
      'a fresh plan has action 3 (VM/pve1/102 update) that the saved plan lacks',
    )
    expect(planDifference(plan([...base.actions, update(102)]), base)).toBe(
      'action 3 (VM/pve1/102 update) is not in a fresh plan',
    )
    expect(planDifference(base, plan([update(100), update(103)]))).toBe(
      'action 2 is VM/pve1/101 update in the saved plan but VM/pve1/103 update in a fresh plan',
    )
    expect(planDifference(base, plan([update(100), update(101, { type: 'delete' })]))).toBe(
      'action 2 is VM/pve1/101 update in the saved plan but VM/pve1/101 delete in a fresh plan',
    )
    expect(planDifference(base, plan([update(100), update(101, { reason: 'other' })]))).toBe(
      'action 2 (VM/pve1/101 update) differs from a fresh plan',
    )
  })

  test('then the findings, each by name', () => {
    const skip = { code: 'untagged', address: 'VM/pve1/300', kind: 'VM', node: 'pve1', message: 'x' } as const
    expect(planDifference(base, plan(base.actions, { skips: [skip] }))).toBe('its skips differ from a fresh plan')
    expect(
      planDifference(base, plan(base.actions, { anomalies: [{ code: 'protected', kind: 'VM', message: 'x' }] })),
    ).toBe('its anomalies differ from a fresh plan')
    expect(planDifference(base, plan(base.actions, { summary: { ...base.summary, anomalies: 7 } }))).toBe(
      'its summary differ from a fresh plan',
    )
    expect(planDifference(base, plan(base.actions, { commit: 'abc' }))).toBe('it differs from a fresh plan')
  })
})

describe('checkSavedPlan', () => {
  const guest = (vmid: number, digest: string): LiveGuest => ({
    type: 'qemu',
    vmid,
    node: 'pve1',
    template: false,
    status: 'running',
    tags: [],
    digest,
    config: {},
    pending: {},
    pendingDeletes: [],
  })
  const live = (guests: LiveGuest[], unknown: number[] = []) =>
    ({
      guests,
      unknownGuests: unknown.map((vmid) => ({ type: 'qemu', vmid, node: 'pve1', tags: [], unreadable: 'x' })),
    }) as unknown as LiveInventory
  const refusal = (saved: Plan, commit: string | undefined, l: LiveInventory): string | undefined => {
    try {
      checkSavedPlan(saved, commit, l)
      return undefined
    } catch (e) {
      expect(e).toBeInstanceOf(ReconcileError)
      expect((e as ReconcileError).code).toBe('PLAN_MISMATCH')
      return (e as Error).message
    }
  }

  test('the full refusal: the cluster, the reason and what to do', () => {
    expect(refusal(plan([], { commit: 'aaa' }), undefined, live([]))).toBe(
      'cluster homelab: the saved plan was made at commit aaa, the repository is now at (none); run proxops diff --out again',
    )
    expect(refusal(plan([], { commit: 'aaa' }), 'aaa', live([]))).toBeUndefined()
    expect(refusal(plan([]), 'bbb', live([]))).toBeUndefined()
  })

  test('a clone of an object that exists now is refused, as a create is; an update of one that exists is not', () => {
    const clone = update(100, { type: 'clone' })
    expect(refusal(plan([clone]), undefined, live([guest(100, 'd')]))).toBe(
      'cluster homelab: VM/pve1/100 exists on PVE now but the plan creates it; run proxops diff --out again',
    )
    expect(refusal(plan([update(100)]), undefined, live([guest(100, 'd')]))).toBeUndefined()
    expect(refusal(plan([clone]), undefined, live([]))).toBeUndefined()
  })

  test('a digest is compared only when the plan recorded one; an object gone since is a changed digest', () => {
    expect(refusal(plan([update(100, { digest: 'd' })]), undefined, live([]))).toBe(
      'cluster homelab: VM/pve1/100 changed on PVE since the plan was made (config digest differs); run proxops diff --out again',
    )
    expect(refusal(plan([update(100, { digest: 'd' })]), undefined, live([guest(100, 'd')]))).toBeUndefined()
    expect(refusal(plan([update(100)]), undefined, live([guest(100, 'other')]))).toBeUndefined()
  })

  test('an unreadable object is refused before its digest is compared; an action without a vmid is not checked', () => {
    expect(refusal(plan([update(100, { digest: 'd' })]), undefined, live([guest(100, 'd')], [100]))).toBe(
      'cluster homelab: VM/pve1/100 cannot be read now; run proxops diff --out again',
    )
    const pool = makeAction({ address: 'Pool/a', kind: 'Pool', type: 'create', requests: [] })
    expect(refusal(plan([{ ...pool, digest: 'x' }]), undefined, live([], [0]))).toBeUndefined()
  })
})
