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
    // no actions is not converged while the fixture's anomaly and pending change stand
    expect(cycleResult({ ...fixturePlan(), actions: [] })).toBe('blocked')
    expect(cycleResult({ ...fixturePlan(), actions: [], anomalies: [], pending: [] })).toBe('converged')
  })

  it('objects that cannot be converged this cycle are blocked, with the reason', () => {
    const plan = {
      ...fixturePlan([]),
      anomalies: [],
      pending: [],
      skips: [
        {
          code: 'node-offline' as const,
          address: 'VM/pve2/101(db)',
          kind: 'VM' as const,
          node: 'pve2',
          vmid: 101,
          message: 'node pve2 is offline',
        },
        {
          code: 'prune-budget' as const,
          address: 'VM/pve1/120(old)',
          kind: 'VM' as const,
          node: 'pve1',
          vmid: 120,
          message: 'prune budget spent',
        },
      ],
    }
    const states = objectStates('homelab', desired, plan)
    expect(states.find((s) => s.name === 'db')).toMatchObject({
      state: 'blocked',
      blocked: 'node-offline',
      reason: 'node pve2 is offline',
    })
    expect(states.find((s) => s.name === 'VM/pve1/120(old)')).toMatchObject({
      state: 'blocked',
      blocked: 'prune-deferred',
    })
    expect(states.find((s) => s.name === 'web')?.state).toBe('converged')
    expect(cycleResult(plan)).toBe('blocked')
  })

  it('after execute: converged, failed with the error, pruned; incomplete when anything failed', () => {
    const r = report({ 'VM/pve2/101(db)#shutdown-then-update': 'failed' })
    const states = objectStates('homelab', desired, fixturePlan(), r)
    expect(states.find((s) => s.name === 'db')).toMatchObject({ state: 'failed', error: 'boom' })
    expect(states.find((s) => s.name === 'web')?.state).toBe('converged')
    expect(states.find((s) => s.name === 'LXC/pve3/300')?.state).toBe('pruned')
    expect(cycleResult(fixturePlan(), r)).toBe('incomplete')
    // every action ran, yet the anomaly and the pending change remain: blocked, not converged
    expect(cycleResult(fixturePlan(), report({}))).toBe('blocked')
    expect(cycleResult({ ...fixturePlan(), anomalies: [], pending: [] }, report({}))).toBe('converged')
    expect(cycleResult(fixturePlan(), report({ 'VM/pve1/100(web)#create': 'skipped' }))).toBe('incomplete')
  })
})
