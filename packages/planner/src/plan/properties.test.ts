/** Properties of the pure core (fast-check). E2 runs the same properties end to end against the simulator. */
import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { desiredArb, drift2Arb, lxcCloneArb } from '../arbitraries.test.helpers.js'
import { applyPlan, guest, inventory, lookup, policy } from '../fixtures.test.helpers.js'
import type { LiveGuest, LiveInventory } from '../inventory.js'
import { mergedView } from './guest-plan.js'
import { plan } from './plan.js'
import type { Plan, Policy } from '../plan-types.js'
import { serializePlan } from '../serialize.js'

const RUNS = { numRuns: 150 }
const pol = policy({ pruneRatioLimit: 1 })

function converge(d: Parameters<typeof plan>[0], inv: LiveInventory, p: Policy = pol): LiveInventory {
  return applyPlan(plan(d, inv, p, { secrets: lookup }), inv)
}

/** A live estate: the converged desired set plus extra guests, some tagged, some not, some running. */
const estateArb = fc.record({
  extras: fc.uniqueArray(fc.integer({ min: 300, max: 340 }), { maxLength: 8 }),
  tagged: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
  running: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
  tagSpelling: fc.constantFrom('proxops', 'web;proxops', 'proxops,db', 'db proxops', 'pveconform'),
})

function extraGuests(e: { extras: number[]; tagged: boolean[]; running: boolean[]; tagSpelling: string }): LiveGuest[] {
  return e.extras.map((vmid, i) =>
    guest(
      vmid,
      { name: `x${vmid}`, ...(e.tagged[i] ? { tags: e.tagSpelling } : {}) },
      { node: i % 2 ? 'pve2' : 'pve1', status: e.running[i] ? 'running' : 'stopped' },
    ),
  )
}

const VOLUME_KEY = /^(scsi|virtio|sata|ide)\d+$|^efidisk0$|^tpmstate0$|^rootfs$|^mp\d+$/
const volumeHead = (v: string) => v.split(',')[0] ?? ''

describe('plan() properties', () => {
  test.prop([desiredArb], RUNS)('idempotence: desired rendered as PVE stores it plans nothing', (d) => {
    const live = converge(d, inventory())
    const again = plan(d, live, pol, { secrets: lookup })
    expect(again.actions).toEqual([])
    expect(again.anomalies).toEqual([])
  })

  test.prop([lxcCloneArb, estateArb], RUNS)(
    'LXC clones: apply then plan is empty; the post-clone write never names a volume or a create-only key; unowned guests untouched',
    (d, e) => {
      // untagged guests beside the desired ones: never touched
      const others = extraGuests({ ...e, tagged: e.tagged.map(() => false) })
      const first = plan(d, inventory(others), pol, { secrets: lookup })
      const clone = first.actions.find((a) => a.type === 'clone')
      expect(clone?.requests[0]).toMatchObject({ call: 'cloneGuest', guest: 'lxc', vmid: 9100 })
      for (const r of clone?.requests ?? [])
        if (r.call === 'updateConfig')
          for (const k of Object.keys(r.params)) expect(VOLUME_KEY.test(k) || k === 'unprivileged').toBe(false)
      const untagged = new Set(others.map((g) => g.vmid))
      for (const a of first.actions) expect(a.vmid !== undefined && untagged.has(a.vmid)).toBe(false)
      const live = applyPlan(first, inventory(others))
      const again = plan(d, live, pol, { secrets: lookup })
      expect(again.actions).toEqual([])
      expect(again.anomalies).toEqual([])
    },
  )

  test.prop([drift2Arb], RUNS)(
    'convergence: after any push, one apply reaches a state that plans only anomaly-guarded leftovers',
    ([a, b]) => {
      const live = converge(a, inventory())
      const p = plan(b, live, pol, { secrets: lookup })
      const after = applyPlan(p, live)
      const again = plan(b, after, pol, { secrets: lookup })
      expect(again.actions).toEqual([])
    },
  )

  test.prop([drift2Arb, fc.boolean()], RUNS)(
    'determinism: same inputs, same bytes, whatever the input order',
    ([a, b], reverse) => {
      const live = converge(a, inventory())
      const one = serializePlan(plan(b, live, pol, { secrets: lookup }))
      expect(serializePlan(plan(b, live, pol, { secrets: lookup }))).toBe(one)
      const shuffled = {
        ...b,
        manifests: reverse ? [...b.manifests].reverse() : [...b.manifests.slice(1), ...b.manifests.slice(0, 1)],
      }
      const liveShuffled = { ...live, guests: [...live.guests].reverse() }
      expect(serializePlan(plan(shuffled, liveShuffled, pol, { secrets: lookup }))).toBe(one)
    },
  )

  test.prop([drift2Arb], RUNS)(
    'never a create form over a live volume: writes to occupied volume slots keep the volume id',
    ([a, b]) => {
      const live = converge(a, inventory())
      const byVmid = new Map(live.guests.map((g) => [g.vmid, mergedView(g)]))
      const p = plan(b, live, pol, { secrets: lookup })
      for (const act of p.actions) {
        for (const r of act.requests) {
          if (r.call !== 'updateConfig') continue
          const cfg = byVmid.get(r.vmid)
          if (!cfg) continue // a clone's post-clone write
          for (const [k, v] of Object.entries(r.params)) {
            const before = cfg[k]
            if (!VOLUME_KEY.test(k) || before === undefined || typeof v !== 'string') continue
            const head = volumeHead(before)
            if (head === 'none' || head === '' || before.includes('media=cdrom')) continue
            expect(volumeHead(v)).toBe(head)
          }
        }
      }
    },
  )

  test.prop([drift2Arb, estateArb, fc.constantFrom<number | 'unlimited'>(0, 1, 2, 3, 'unlimited'), fc.boolean()], RUNS)(
    'ownership and budget: untagged guests are never touched; deletes never exceed the budget; prunes are last',
    ([a, b], e, budget, dropSome) => {
      const base = converge(a, inventory())
      const live = { ...base, guests: [...base.guests, ...extraGuests(e)].sort((x, y) => x.vmid - y.vmid) }
      const d = dropSome ? { ...b, manifests: b.manifests.filter((_, i) => i % 2 === 0) } : b
      const pp = policy({
        pruneBudget: budget,
        pruneRatioLimit: 1,
        allowEmpty: ['VM', 'LXC', 'TemplateVM', 'TemplateCT'],
      })
      const p: Plan = plan(d, live, pp, { secrets: lookup })
      const desiredVmids = new Set(d.manifests.flatMap((m) => ('vmid' in m.spec ? [m.spec.vmid] : [])))
      const tagged = new Set(live.guests.filter((g) => g.tags.includes('proxops')).map((g) => g.vmid))
      for (const act of p.actions) {
        if (act.vmid === undefined) continue
        expect(desiredVmids.has(act.vmid) || tagged.has(act.vmid)).toBe(true)
        if (act.type === 'delete') {
          expect(tagged.has(act.vmid)).toBe(true)
          expect(desiredVmids.has(act.vmid)).toBe(false)
        }
      }
      const deletes = p.actions.filter((x) => x.type === 'delete').length
      if (budget !== 'unlimited') expect(deletes).toBeLessThanOrEqual(budget)
      const firstPrune = p.actions.findIndex((x) => x.tier === 9)
      if (firstPrune >= 0) expect(p.actions.slice(firstPrune).every((x) => x.tier === 9)).toBe(true)
      // dependencies always point backwards in the total order
      const seen = new Set<string>()
      for (const act of p.actions) {
        for (const dep of act.dependsOn) expect(seen.has(dep)).toBe(true)
        seen.add(act.id)
      }
    },
  )

  const junk = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom('none', '', ',', '=', 'a=1,a=2', 'local-lvm:', ':x', 'size=', 'x,size=1Q', '__proto__=1'),
  )
  test.prop(
    [
      desiredArb,
      fc.array(
        fc.tuple(
          fc.nat(),
          fc.constantFrom(
            'scsi0',
            'virtio0',
            'sata0',
            'net0',
            'rootfs',
            'mp0',
            'efidisk0',
            'tpmstate0',
            'ide2',
            'memory',
            'cpu',
            'tags',
            'sshkeys',
            'features',
            'agent',
            'hostpci0',
            'ipconfig0',
            'machine',
          ),
          junk,
        ),
        { maxLength: 12 },
      ),
    ],
    RUNS,
  )('robustness: odd live values never throw and never get a create form written over them', (d, edits) => {
    const base = converge(d, inventory())
    if (base.guests.length === 0) return
    const guests = base.guests.map((g) => ({ ...g, config: { ...g.config } }))
    for (const [i, key, value] of edits)
      (guests[i % guests.length] as LiveGuest & { config: Record<string, string> }).config[key] = value
    const live = { ...base, guests }
    const p = plan(d, live, pol, { secrets: lookup })
    const byVmid = new Map(guests.map((g) => [g.vmid, g.config]))
    for (const act of p.actions) {
      for (const r of act.requests) {
        if (r.call !== 'updateConfig') continue
        for (const [k, v] of Object.entries(r.params)) {
          const before = byVmid.get(r.vmid)?.[k]
          if (!VOLUME_KEY.test(k) || before === undefined || typeof v !== 'string') continue
          const head = volumeHead(before)
          if (head === 'none' || head.trim() === '' || before.includes('media=cdrom')) continue
          expect(volumeHead(v)).toBe(head)
        }
      }
    }
  })

  test.prop([drift2Arb], { numRuns: 60 })('secrets never reach the plan', ([a, b]) => {
    const withRefs = {
      ...b,
      manifests: b.manifests.map((m) =>
        m.kind === 'VM'
          ? {
              ...m,
              spec: {
                ...m.spec,
                'cloud-init-data': {
                  'ssh-key-refs': ['cloud-init.ssh-keys.alice'],
                  'ci-password-ref': 'cloud-init.passwords.default',
                },
              },
            }
          : m,
      ),
    }
    const live = converge(a, inventory())
    const text = serializePlan(plan(withRefs, live, pol, { secrets: lookup }))
    expect(text).not.toContain('CANARY')
  })
})
