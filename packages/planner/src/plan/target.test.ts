import { describe, expect, it } from 'vitest'
import { desired, inventory, lookup, policy, vm } from '../fixtures.test.helpers.js'
import { makeAction, makePlan } from '../testing/index.js'
import { plan } from './plan.js'
import { targetPlan } from './target.js'
import { convergence } from '../convergence.js'
import { actionShape, templatePlan } from '../test-support/template-plan.js'

const full = templatePlan
const shape = actionShape

describe('--target: a plan narrowed to some objects and what they depend on', () => {
  it('the full plan holds every object', () => {
    expect(shape(full)).toEqual(['CTTemplate:debian-12:download', 'VM:web:create', 'LXC:ct:create', 'LXC:ct2:create'])
  })

  it('a container brings the template download it needs, nothing else', () => {
    const p = targetPlan(full, [{ kind: 'LXC', name: 'ct' }])
    expect(shape(p)).toEqual(['CTTemplate:debian-12:download', 'LXC:ct:create'])
    expect(p.summary).toMatchObject({ create: 1, download: 1, delete: 0, actions: 2 })
    // every action it keeps waits only for actions it keeps
    const ids = new Set(p.actions.map((a) => a.id))
    for (const a of p.actions) for (const d of a.dependsOn) expect(ids.has(d)).toBe(true)
  })

  it('is repeatable; a VM alone; a prune by the name PVE shows', () => {
    expect(shape(targetPlan(full, [{ kind: 'VM', name: 'web' }]))).toEqual(['VM:web:create'])
    expect(
      shape(
        targetPlan(full, [
          { kind: 'VM', name: 'web' },
          { kind: 'LXC', name: 'ct2' },
        ]),
      ),
    ).toEqual(['CTTemplate:debian-12:download', 'VM:web:create', 'LXC:ct2:create'])
    // an owned guest that left git has no name in the plan: its address carries the one PVE shows
    const prune = makeAction({
      type: 'delete',
      address: 'VM/pve1/300(gone)',
      requests: [{ call: 'deleteGuest', node: 'pve1', guest: 'qemu', vmid: 300 }],
    })
    const withPrune = makePlan([...full.actions, prune])
    expect(shape(targetPlan(withPrune, [{ kind: 'VM', name: 'gone' }]))).toEqual(['VM:VM/pve1/300(gone):delete'])
  })

  it('the kind matters, and an object with nothing to do gives an empty, converged plan', () => {
    expect(targetPlan(full, [{ kind: 'LXC', name: 'web' }]).actions).toEqual([])
    const converged = plan(desired(vm('web', 100)), inventory(), policy(), { secrets: lookup })
    expect(convergence(targetPlan(full, [{ kind: 'TemplateVM', name: 'none' }])).converged).toBe(true)
    expect(targetPlan(converged, [{ kind: 'VM', name: 'web' }]).actions.length).toBe(1)
  })

  it('is a subset of the plan, in its order: targeting every object gives the plan back', () => {
    const all = targetPlan(full, [
      { kind: 'CTTemplate', name: 'debian-12' },
      { kind: 'VM', name: 'web' },
      { kind: 'LXC', name: 'ct' },
      { kind: 'LXC', name: 'ct2' },
    ])
    expect(all).toEqual(full)
  })
})
