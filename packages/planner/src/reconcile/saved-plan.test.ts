import { describe, expect } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import type { Plan } from '../plan-types.js'
import { planDifference } from './saved-plan.js'

const action = (vmid: number, type: string) => ({
  id: `VM/pve1/${vmid}#${type}`,
  address: `VM/pve1/${vmid}(vm-${vmid})`,
  kind: 'VM',
  node: 'pve1',
  vmid,
  type,
  reason: 'r',
  diffs: [],
  disruption: 'none',
  digest: `d${vmid}`,
  requests: [{ call: type === 'delete' ? 'deleteGuest' : 'updateConfig', node: 'pve1', guest: 'qemu', vmid }],
})

const plan = (actions: ReturnType<typeof action>[]): Plan =>
  ({
    format_version: 1,
    cluster: 'lab',
    commit: 'c0ffee',
    policy: { pruneBudget: 3, disruption: 'reboot', ownershipTag: 'proxops' },
    actions,
    anomalies: [],
    skips: [],
    pending: [],
    gaps: [],
    summary: { create: 0, update: actions.length, delete: 0 },
  }) as unknown as Plan

describe('saved plan contract', () => {
  test.prop([
    fc.uniqueArray(fc.integer({ min: 100, max: 999 }), { minLength: 1, maxLength: 6 }),
    fc.nat(),
    fc.constantFrom('vmid', 'node', 'type', 'digest', 'call', 'drop', 'add', 'budget', 'order'),
  ])('any edit of a saved plan is told apart from the fresh plan, and an equal one passes', (vmids, pick, edit) => {
    const fresh = plan(vmids.map((v) => action(v, 'update')))
    expect(planDifference(structuredClone(fresh), fresh)).toBeUndefined()
    const saved = structuredClone(fresh) as unknown as {
      actions: ReturnType<typeof action>[]
      policy: { pruneBudget: unknown }
    }
    const i = pick % saved.actions.length
    const a = saved.actions[i] as ReturnType<typeof action>
    if (edit === 'vmid') a.vmid += 1000
    if (edit === 'node') a.node = 'pve9'
    if (edit === 'type') a.type = 'delete'
    if (edit === 'digest') a.digest = 'other'
    if (edit === 'call') a.requests = [{ call: 'deleteGuest', node: 'pve1', guest: 'qemu', vmid: a.vmid }]
    if (edit === 'drop') saved.actions.splice(i, 1)
    if (edit === 'add') saved.actions.push(action(1000 + i, 'delete'))
    if (edit === 'budget') saved.policy.pruneBudget = 'unlimited'
    if (edit === 'order') {
      if (saved.actions.length < 2) saved.actions.push(action(5000, 'delete'))
      else saved.actions.reverse()
    }
    expect(planDifference(saved as unknown as Plan, fresh)).toMatch(/action|policy|fresh plan/)
  })
})

describe('saved plan contract, in detail (pnpm mutate)', () => {
  test('a policy whose budget is another number is told as another policy', () => {
    const fresh = plan([action(100, 'update')])
    const saved = structuredClone(fresh) as unknown as { policy: { pruneBudget: number } }
    saved.policy.pruneBudget = 4
    expect(planDifference(saved as unknown as Plan, fresh)).toBe(
      'it was made with another policy (prune budget, disruption or ownership tag)',
    )
  })

  test("the order of an action's keys does not matter: the part that differs is named", () => {
    const fresh = plan([action(100, 'update')])
    const saved = structuredClone(fresh) as unknown as { actions: Record<string, unknown>[]; summary: object }
    saved.actions = saved.actions.map((a) => Object.fromEntries(Object.entries(a).reverse()))
    saved.summary = { create: 1, update: 1, delete: 0 }
    expect(planDifference(saved as unknown as Plan, fresh)).toBe('its summary differ from a fresh plan')
  })

  test('a null in a plan (a field that had no value) compares like any value', () => {
    const fresh = plan([{ ...action(100, 'update'), diffs: [{ key: 'k', before: null, after: '1' }] } as never])
    const saved = structuredClone(fresh) as unknown as { summary: object }
    saved.summary = { create: 1, update: 1, delete: 0 }
    expect(planDifference(saved as unknown as Plan, fresh)).toBe('its summary differ from a fresh plan')
  })
})
