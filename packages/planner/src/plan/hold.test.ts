import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { holdPlan } from './hold.js'
import { convergence } from '../convergence.js'
import { actionShape, templatePlan } from '../test-support/template-plan.js'

const full = templatePlan
const shape = actionShape

describe('held actions (suspensions, sync windows)', () => {
  it('a held object keeps its drift as a skip naming what was withheld; the rest runs', () => {
    const p = holdPlan(full, [
      { target: { kind: 'VM', name: 'web' }, code: 'suspended', message: 'suspended since 2026-01-01: incident 7' },
    ])
    expect(shape(p)).toEqual(['CTTemplate:debian-12:download', 'LXC:ct:create', 'LXC:ct2:create'])
    const skip = p.skips.find((s) => s.code === 'suspended')
    expect(skip).toMatchObject({ kind: 'VM', vmid: 100 })
    expect(skip?.message).toMatch(/^suspended since 2026-01-01: incident 7; withheld: create \(/)
    expect(convergence(p).byReason).toMatchObject({ suspended: 1 })
    expect(p.summary.actions).toBe(3)
  })

  it('what waits for a held action is held with it; a predicate holds only some actions', () => {
    const p = holdPlan(full, [
      { target: { kind: 'CTTemplate', name: 'debian-12' }, code: 'sync-window', message: 'waits for its window' },
    ])
    expect(shape(p)).toEqual(['VM:web:create'])
    expect(p.skips.filter((s) => s.code === 'sync-window').map((s) => s.kind)).toEqual(['CTTemplate', 'LXC', 'LXC'])
    const some = holdPlan(full, [{ code: 'sync-window', message: 'w', holds: (a) => a.kind === 'VM' }])
    expect(shape(some)).toEqual(['CTTemplate:debian-12:download', 'LXC:ct:create', 'LXC:ct2:create'])
    // a whole cluster held: nothing runs, every object says why
    const all = holdPlan(full, [{ code: 'suspended', message: 'cluster suspended' }])
    expect(all.actions).toEqual([])
    expect(all.skips.filter((s) => s.code === 'suspended')).toHaveLength(4)
  })

  test.prop([fc.subarray(['VM:web', 'LXC:ct', 'LXC:ct2', 'CTTemplate:debian-12'])])(
    'no kept action waits for a held one; no hold is the plan itself; byte-identical for the same input',
    (held) => {
      const holds = held.map((h) => {
        const [kind, name] = h.split(':') as ['VM', string]
        return { target: { kind, name }, code: 'suspended' as const, message: 'held' }
      })
      const p = holdPlan(full, holds)
      const ids = new Set(p.actions.map((a) => a.id))
      for (const a of p.actions) for (const d of a.dependsOn) expect(ids.has(d)).toBe(true)
      expect(p.actions.length + new Set(p.skips.filter((s) => s.code === 'suspended').map((s) => s.address)).size).toBe(
        full.actions.length,
      )
      expect(JSON.stringify(holdPlan(full, holds))).toBe(JSON.stringify(p))
      if (holds.length === 0) expect(p).toBe(full)
    },
  )
})
