/**
 * Properties of plan() (fast-check). A plan is applied the only way the planner's tests apply one: executed on
 * the simulator's model, run in this process behind the real client (test-support/sim.ts), then read back;
 * the properties about one plan's shape are checked on the pure plan() over what the simulator showed.
 * test/properties.test.ts runs the same properties over a simulator on a socket.
 */
import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import {
  desiredArb,
  drift2Arb,
  haDrift2Arb,
  lxcCloneArb,
  lxcCloneDriftArb,
  poolDrift2Arb,
  vmCloneArb,
  vmCloneDriftArb,
} from '../arbitraries.test.helpers.js'
import { guest, inventory, lookup, policy } from '../fixtures.test.helpers.js'
import type { DesiredState } from '../desired.js'
import { known, type LiveGuest, type LiveInventory } from '../inventory.js'
import { simApply, simCycle, withSim, type SimPve } from '../test-support/sim.js'
import { mergedView } from '../kinds/guest/guest-plan.js'
import { plan } from './plan.js'
import type { Plan } from '../plan-types.js'
import { serializePlan } from '../serialize.js'

// each run applies at least one plan on a fresh simulator (about 20 ms)
const RUNS = { numRuns: 100 }
const pol = policy({ pruneRatioLimit: 1 })

/** one apply cycle of `d` on the simulator; every action must succeed */
const apply = async (env: SimPve, d: DesiredState): Promise<Plan> => (await simApply(env, d, pol, lookup)).plan
/** a dry cycle of `d`: what PVE shows now (observed for `d`), and the plan for it */
const dry = (env: SimPve, d: DesiredState) => simCycle(env, d, pol, { secrets: lookup })
/** `a` applied on a fresh simulator, then the push `b`: the dry cycle of `b` after it */
const afterPush = (a: DesiredState, b: DesiredState) =>
  withSim(undefined, async (env) => {
    await apply(env, a)
    await apply(env, b)
    return dry(env, b)
  })

/** what PVE shows once `d` has been applied to an empty cluster, observed for `next` */
const converged = (d: DesiredState, next: DesiredState = d): Promise<LiveInventory> =>
  withSim(undefined, async (env) => {
    await apply(env, d)
    return (await dry(env, next)).live
  })

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
  test.prop([desiredArb], RUNS)('idempotence: once applied, the same desired set plans nothing', (d) =>
    withSim(undefined, async (env) => {
      await apply(env, d)
      const again = (await dry(env, d)).plan
      expect(again.actions).toEqual([])
      expect(again.anomalies).toEqual([])
    }),
  )

  test.prop([lxcCloneArb, estateArb], RUNS)(
    'LXC clones: apply then plan is empty; the post-clone write never names a volume or a create-only key; unowned guests untouched',
    (d, e) => {
      // untagged guests beside the desired ones: never touched
      const others = extraGuests({ ...e, tagged: e.tagged.map(() => false) })
      return withSim(inventory(others), async (env) => {
        const first = await apply(env, d)
        const clone = first.actions.find((a) => a.type === 'clone')
        expect(clone?.requests[0]).toMatchObject({ call: 'cloneGuest', guest: 'lxc', vmid: 9100 })
        for (const r of clone?.requests ?? [])
          if (r.call === 'updateConfig')
            for (const k of Object.keys(r.params)) expect(VOLUME_KEY.test(k) || k === 'unprivileged').toBe(false)
        const untagged = new Set(others.map((g) => g.vmid))
        for (const a of first.actions) expect(a.vmid !== undefined && untagged.has(a.vmid)).toBe(false)
        const again = await dry(env, d)
        expect(again.plan.actions).toEqual([])
        expect(again.plan.anomalies).toEqual([])
        for (const g of others) expect(again.live.guests.find((x) => x.vmid === g.vmid)?.config).toMatchObject(g.config)
      })
    },
  )

  test.prop([vmCloneArb], RUNS)(
    'VM clones: apply then plan is empty; the post-clone write never names an inherited disk',
    (d) =>
      withSim(undefined, async (env) => {
        const first = await apply(env, d)
        const clone = first.actions.find((a) => a.type === 'clone')
        expect(clone?.requests[0]).toMatchObject({ call: 'cloneGuest', guest: 'qemu', vmid: 9000 })
        const inherited = new Set(
          (d.manifests[0] as { spec: { disks: { interface?: string }[] } }).spec.disks.map((x) => x.interface),
        )
        for (const r of clone?.requests ?? [])
          if (r.call === 'updateConfig') for (const k of Object.keys(r.params)) expect(inherited.has(k)).toBe(false)
        const again = await dry(env, d)
        expect(again.plan.actions).toEqual([])
        expect(again.plan.anomalies).toEqual([])
      }),
  )

  test.prop([fc.oneof(vmCloneDriftArb, lxcCloneDriftArb)], RUNS)(
    'VM and LXC clones: after any push of the clone, one apply converges',
    async ([a, b]) => {
      expect((await afterPush(a, b)).plan.actions).toEqual([])
    },
  )

  test.prop([drift2Arb], RUNS)(
    'convergence: after any push, one apply reaches a state that plans only anomaly-guarded leftovers',
    async ([a, b]) => {
      expect((await afterPush(a, b)).plan.actions).toEqual([])
    },
  )

  test.prop([poolDrift2Arb], RUNS)(
    'pools: after any push that moves guests between pools, one apply converges and each guest is in its pool',
    async ([a, b]) => {
      const again = await afterPush(a, b)
      expect(again.plan.actions).toEqual([])
      const members = new Map(
        (known(again.live.pools) ?? []).flatMap((p) => p.vmids.map((v) => [v, p.poolid] as const)),
      )
      for (const m of b.manifests)
        if ('pool' in m.spec && m.spec.pool !== undefined && 'vmid' in m.spec)
          expect(members.get(m.spec.vmid)).toBe(m.spec.pool)
    },
  )

  test.prop([drift2Arb, fc.constantFrom('none' as const, 'hotplug' as const)], RUNS)(
    'disruption none/hotplug: after any push, no power-off of a guest desired started (and no hotplug change under none); the next plan is empty',
    ([a, b], disruption) =>
      withSim(undefined, async (env) => {
        const held = policy({ pruneRatioLimit: 1, disruption })
        await simApply(env, a, held, lookup)
        const push = await simApply(env, b, held, lookup)
        const started = new Set(
          b.manifests.flatMap((m) => ('state' in m.spec && m.spec.state === 'started' ? [m.spec.vmid] : [])),
        )
        for (const act of push.plan.actions) {
          if (disruption === 'none') expect(act.disruption).not.toBe('hotplug')
          for (const r of act.requests)
            if (r.call === 'shutdown' || r.call === 'stop' || r.call === 'reboot')
              expect(started.has(r.vmid), `${act.id} ${r.call}`).toBe(false)
        }
        // reboot-class writes wait in PVE's [PENDING]: reported, never written again
        expect((await simCycle(env, b, held, { secrets: lookup })).plan.actions).toEqual([])
      }),
  )

  test.prop([haDrift2Arb], RUNS)(
    'HA: after any push that adds, changes or removes HA resources (with node preferences), one apply converges',
    async ([a, b]) => {
      expect((await afterPush(a, b)).plan.actions).toEqual([])
    },
  )

  test.prop([drift2Arb, fc.boolean()], RUNS)(
    'determinism: same inputs, same bytes, whatever the input order',
    async ([a, b], reverse) => {
      const live = await converged(a, b)
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
    async ([a, b]) => {
      const live = await converged(a, b)
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
    async ([a, b], e, budget, dropSome) => {
      const base = await converged(a, b)
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
        // a guest's delete (an HA resource's removal may concern a guest that stays)
        if (act.type === 'delete' && act.kind !== 'HA') {
          expect(tagged.has(act.vmid)).toBe(true)
          expect(desiredVmids.has(act.vmid)).toBe(false)
        }
      }
      // every delete, an HA removal's too, spends the one budget
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
  )('robustness: odd live values never throw and never get a create form written over them', async (d, edits) => {
    const base = await converged(d)
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

  test.prop([drift2Arb], { numRuns: 60 })('secrets never reach the plan', async ([a, b]) => {
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
    const live = await converged(a)
    const text = serializePlan(plan(withRefs, live, pol, { secrets: lookup }))
    expect(text).not.toContain('CANARY')
  })
})
