import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { blockedCount, convergence, describeBlocked } from './convergence.js'
import type { Report } from './execute/execute.js'
import { desired, guest, inventory, policy, vm } from './fixtures.test.helpers.js'
import { plan } from './plan/plan.js'
import type { Plan } from './plan-types.js'

const address = fc.constantFrom('VM/pve1/100(a)', 'VM/pve1/101(b)', 'LXC/pve2/200(c)', 'VM/pve3/300(d)')
const skipCode = fc.constantFrom(
  'untagged',
  'unknown',
  'locked',
  'node-offline',
  'prune-budget',
  'prune-guard',
  'disruption',
)
const anomalyCode = fc.constantFrom('volume-shrink', 'protected', 'missing-privilege', 'empty-desired')

const planArb = fc
  .record({
    actions: fc.uniqueArray(address, { maxLength: 3 }),
    skips: fc.array(fc.record({ code: skipCode, address, message: fc.string() }), { maxLength: 4 }),
    anomalies: fc.array(
      fc.record({ code: anomalyCode, address: fc.option(address, { nil: undefined }), message: fc.string() }),
      { maxLength: 3 },
    ),
    pending: fc.array(fc.record({ address, keys: fc.constant(['cores']), message: fc.string() }), { maxLength: 2 }),
  })
  .map(
    (p) =>
      ({
        cluster: 'homelab',
        ...p,
        actions: p.actions.map((a, i) => ({ id: `a${i}`, address: a })),
      }) as unknown as Plan,
  )

describe('convergence: one definition of "PVE matches git"', () => {
  test.prop([planArb])('converged exactly when nothing is to be done and nothing is blocked', (p) => {
    const c = convergence(p)
    const blocking = p.skips.filter((s) => s.code !== 'untagged').length + p.anomalies.length + p.pending.length
    expect(c.converged).toBe(p.actions.length === 0 && blocking === 0)
    expect(c.toDo).toBe(p.actions.length)
    expect(c.blocked).toHaveLength(blocking)
    // each blocked object counts once, whatever its number of reasons
    expect(blockedCount(c)).toBe(new Set(c.blocked.map((b) => b.address)).size)
  })

  test.prop([planArb])('is deterministic: the order of skips and anomalies does not matter', (p) => {
    const shuffled = {
      ...p,
      skips: [...p.skips].reverse(),
      anomalies: [...p.anomalies].reverse(),
      pending: [...p.pending].reverse(),
    }
    expect(JSON.stringify(convergence(shuffled))).toBe(JSON.stringify(convergence(p)))
  })

  test.prop([planArb])('after execute, only what ran ok stops counting', (p) => {
    const results = p.actions.map((a, i) => ({
      id: a.id,
      address: a.address,
      status: (['ok', 'failed', 'skipped'] as const)[i % 3],
      ...(i % 3 === 1 ? { error: 'boom' } : {}),
      ...(i % 3 === 2 ? { skip: { code: 'deferred', reason: 'deferred: prerequisite failed' } } : {}),
    }))
    const report = { results } as unknown as Report
    const c = convergence(p, report)
    expect(c.toDo).toBe(0)
    expect(c.blocked.filter((b) => b.reason === 'failed' || b.reason === 'not-run')).toHaveLength(
      results.filter((r) => r.status !== 'ok').length,
    )
  })

  it('an action the report does not mention (a cancelled run) is not run', () => {
    const p = {
      cluster: 'c',
      actions: [{ id: 'x', address: 'VM/pve1/1(x)' }],
      skips: [],
      anomalies: [],
      pending: [],
    } as unknown as Plan
    expect(convergence(p, { results: [] } as unknown as Report)).toMatchObject({
      converged: false,
      blocked: [{ address: 'VM/pve1/1(x)', reason: 'not-run' }],
    })
  })

  it('an offline node is not "No changes": the plan has no actions and one object blocked', () => {
    const p = plan(
      desired(vm('web', 120, { node: 'pve2' })),
      inventory([], {
        nodes: [
          { node: 'pve1', online: true },
          { node: 'pve2', online: false },
        ],
      }),
      policy({ nodes: ['pve1', 'pve2'] }),
    )
    const c = convergence(p)
    expect(p.actions).toEqual([])
    expect(c.converged).toBe(false)
    expect(c.byReason).toEqual({ 'node-offline': 1 })
    expect(describeBlocked(c)).toBe('node-offline 1')
  })

  it('a converged guest is converged; a live guest without the ownership tag blocks nothing', () => {
    const p = plan(desired(), inventory([guest(500, { name: 'hand-made', tags: 'ops' })]), policy())
    expect(convergence(p)).toEqual({ converged: true, toDo: 0, blocked: [], byReason: {} })
  })
})
