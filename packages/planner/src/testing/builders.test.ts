import { describe, expect, it } from 'vitest'
import { plan } from '../plan/plan.js'
import { desired, inventory, liveVm, orphan, policy, vm } from '../fixtures.test.helpers.js'
import { makeAction, makePlan } from './builders.js'

describe('makePlan / makeAction (the testing subpath)', () => {
  it('makePlan counts and wraps actions as plan() does: same policy, same summary', () => {
    // a create, a memory update, a power change and a prune in one plan
    const p = plan(
      desired(vm('new', 110), vm('web', 101, { memory: 4096 }), vm('db', 102, { state: 'stopped' })),
      inventory([liveVm(101, 'web'), liveVm(102, 'db'), orphan(150)]),
      policy(),
    )
    expect(new Set(p.actions.map((a) => a.type)).size).toBeGreaterThanOrEqual(3)
    const built = makePlan(p.actions, p.cluster)
    expect(built.summary).toEqual(p.summary)
    expect(built.policy).toEqual(p.policy)
    expect(built.format_version).toBe(p.format_version)
  })

  it('makeAction derives node, vmid, address and id from the first request and keeps what is given', () => {
    const a = makeAction({ type: 'start', requests: [{ call: 'start', node: 'pve2', guest: 'qemu', vmid: 7 }] })
    expect(a).toMatchObject({ node: 'pve2', vmid: 7, address: 'VM/pve2/7', id: 'VM/pve2/7#start', dependsOn: [] })
    expect(makeAction({ ...a, reason: 'because', requests: a.requests }).reason).toBe('because')
  })
})
