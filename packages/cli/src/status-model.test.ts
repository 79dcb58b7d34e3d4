import { describe, expect, it } from 'vitest'
import type { Report } from '@proxops/planner'
import { cycleResult, objectStates } from './status-model.js'
import { fixturePlan } from './render/fixtures.test-support.js'

const desired = [
  { kind: 'VM', name: 'web', node: 'pve1', vmid: 100 },
  { kind: 'VM', name: 'db', node: 'pve2', vmid: 101 },
  { kind: 'VM', name: 'idle', node: 'pve1', vmid: 105 },
]

function report(statuses: Record<string, 'ok' | 'failed' | 'skipped'>): Report {
  const plan = fixturePlan()
  const results = plan.actions.map((a) => ({
    id: a.id,
    address: a.address,
    kind: a.kind,
    type: a.type,
    node: a.node,
    status: statuses[a.id] ?? 'ok',
    ...(statuses[a.id] === 'failed' ? { error: 'boom' } : {}),
    ...(statuses[a.id] === 'skipped' ? { skip: { code: 'cancelled' as never, reason: 'cancelled' } } : {}),
    tasks: [],
    durationMs: 10,
  }))
  const failed = results.filter((r) => r.status === 'failed').length
  const skipped = results.filter((r) => r.status === 'skipped').length
  return {
    cluster: 'homelab',
    results,
    summary: { actions: results.length, ok: results.length - failed - skipped, failed, skipped },
    cancelled: false,
    complete: failed + skipped === 0,
  }
}

describe('objectStates', () => {
  it('dry run: drift for planned objects, converged for the rest, prunes listed by address', () => {
    const states = objectStates('homelab', desired, fixturePlan())
    expect(states.map((s) => [s.kind, s.name, s.state])).toEqual([
      ['LXC', 'LXC/pve3/300', 'drift'],
      ['VM', 'db', 'drift'],
      ['VM', 'idle', 'converged'],
      ['VM', 'web', 'drift'],
    ])
    expect(cycleResult(fixturePlan())).toBe('drift')
    expect(cycleResult({ ...fixturePlan(), actions: [] })).toBe('converged')
  })

  it('after execute: converged, failed with the error, pruned; incomplete when anything failed', () => {
    const r = report({ 'VM/pve2/101(db)#shutdown-then-update': 'failed' })
    const states = objectStates('homelab', desired, fixturePlan(), r)
    expect(states.find((s) => s.name === 'db')).toMatchObject({ state: 'failed', error: 'boom' })
    expect(states.find((s) => s.name === 'web')?.state).toBe('converged')
    expect(states.find((s) => s.name === 'LXC/pve3/300')?.state).toBe('pruned')
    expect(cycleResult(fixturePlan(), r)).toBe('incomplete')
    expect(cycleResult(fixturePlan(), report({}))).toBe('converged')
    expect(cycleResult(fixturePlan(), report({ 'VM/pve1/100(web)#create': 'skipped' }))).toBe('incomplete')
  })
})
