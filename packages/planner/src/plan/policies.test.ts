/** Per-object policies: `prune: never` in the one prune stage, `ignore-fields` in the guest compare. */
import { describe, expect, it } from 'vitest'
import { desired, inventory, liveVm, lookup, orphan, policy, vm } from '../fixtures.test.helpers.js'
import { plan } from './plan.js'
import { convergence } from '../convergence.js'

describe('prune: never', () => {
  const live = inventory([liveVm(100, 'web'), orphan(101, 'proxops'), orphan(102, 'proxops')])
  const d = desired(vm('web', 100))

  it('an object kept by name is reported, never deleted, spends no budget and blocks nothing', () => {
    const p = plan(
      d,
      live,
      policy({ pruneBudget: 1, pruneRatioLimit: 1, pruneNever: { objects: [{ kind: 'VM', name: 'orphan-101' }] } }),
      {
        secrets: lookup,
      },
    )
    expect(p.actions.filter((a) => a.type === 'delete').map((a) => a.vmid)).toEqual([102])
    expect(p.skips.find((s) => s.vmid === 101)).toMatchObject({ code: 'prune-never' })
    expect(p.skips.find((s) => s.vmid === 101)?.message).toMatch(/kept by its prune: never policy/)
    expect(convergence(p).byReason).toEqual({})
  })

  it('the whole cluster: nothing is deleted, every candidate is reported', () => {
    const p = plan(d, live, policy({ pruneBudget: 'unlimited', pruneRatioLimit: 1, pruneNever: { all: true } }), {
      secrets: lookup,
    })
    expect(p.actions.filter((a) => a.type === 'delete')).toEqual([])
    expect(p.skips.filter((s) => s.code === 'prune-never').map((s) => s.vmid)).toEqual([101, 102])
  })
})

describe('ignore-fields', () => {
  const live = inventory([liveVm(100, 'web', { memory: '4096', cores: '4' })])

  it("an ignored field's live value is never compared; the others still are", () => {
    const m = vm('web', 100)
    const plain = plan(desired(m), live, policy(), { secrets: lookup })
    expect(plain.actions[0]?.diffs.map((x) => x.key).sort()).toEqual(['cores', 'memory'])
    const annotated = { ...m, metadata: { ...m.metadata, annotations: { 'proxops/ignore-fields': 'spec.memory' } } }
    const own = plan(desired(annotated), live, policy(), { secrets: lookup })
    expect(own.actions[0]?.diffs.map((x) => x.key)).toEqual(['cores'])
    // the cluster's default for the kind, and a parent path covering what is below it
    const both = plan(desired(annotated), live, policy({ ignoreFields: { VM: ['spec.cpu'] } }), { secrets: lookup })
    expect(both.actions).toEqual([])
    expect(convergence(both).converged).toBe(true)
    // another kind's default does not apply
    expect(
      plan(desired(m), live, policy({ ignoreFields: { LXC: ['spec.memory'] } }), { secrets: lookup }).actions,
    ).toHaveLength(1)
  })
})
