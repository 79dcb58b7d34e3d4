import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { HaSpec, LxcManifest, VmManifest } from '@proxops/schema'
import type { LiveGuest, LiveHa, Observed } from '../../inventory.js'
import type { PveRequest } from '../../plan-types.js'
import type { HaItem } from '@proxops/pve-client/wire'
import { desired, inventory, kindContext, policy, vm } from '../../fixtures.test.helpers.js'
import { prune } from '../../plan/prune.js'
import { haMarker, pinnedPower, planHa } from './plan.js'

const TAG = 'proxops'

const guest = (vmid: number, ha: HaSpec | undefined, state: 'started' | 'stopped' = 'started'): VmManifest =>
  vm(`g${vmid}`, vmid, { state, ...(ha ? { ha } : {}) }) as VmManifest
const live = (vmid: number, status: string): LiveGuest => ({
  type: 'qemu',
  vmid,
  node: 'pve1',
  template: false,
  status,
  tags: [TAG],
  digest: 'd',
  config: {},
  pending: {},
  pendingDeletes: [],
})
const base = (vmid: number) => ({
  resource: `VM:g${vmid}`,
  address: `VM/pve1/${vmid}(g${vmid})`,
  kind: 'VM' as const,
  name: `g${vmid}`,
  node: 'pve1',
  vmid,
  tier: 0 as const,
  level: 0,
})
const spec = (over: Partial<HaSpec> = {}): HaSpec => ({ max_restart: 1, max_relocate: 1, strict: false, ...over })

function run(
  ha: LiveHa | { unreadable: string },
  guests: [VmManifest | LxcManifest, LiveGuest | undefined][],
  budget: number | 'unlimited' = 'unlimited',
) {
  const observed: Observed<LiveHa> = 'unreadable' in ha ? ha : { known: ha }
  const ctx = kindContext(
    desired(...guests.map(([m]) => m)),
    inventory([], { ha: observed }),
    policy({ pruneBudget: budget }),
    guests.map(([m, g]) => ({ m, type: 'qemu', base: base(m.spec.vmid), ...(g ? { live: g } : {}) })),
  )
  const r = planHa(ctx)
  const pruned = prune(r.prunes ? [r.prunes] : [], ctx.policy)
  return {
    drafts: [...r.drafts, ...pruned.drafts],
    anomalies: [...r.anomalies, ...pruned.anomalies],
    skips: [...r.skips, ...pruned.skips],
    planner: { pinnedPower: (m: VmManifest, g: LiveGuest | undefined) => pinnedPower(m, g, observed) },
  }
}

describe('planHa', () => {
  it('pins the guest plan to the live power while the resource lacks the declared state', () => {
    const ha: LiveHa = { form: 'rules', resources: [{ sid: 'vm:100', state: 'stopped' }], preferences: [] }
    const p = run(ha, []).planner
    expect(p.pinnedPower(guest(100, spec()), live(100, 'stopped'))).toBe('stopped')
    expect(p.pinnedPower(guest(100, spec(), 'stopped'), live(100, 'running'))).toBeUndefined()
    expect(p.pinnedPower(guest(100, undefined), live(100, 'stopped'))).toBeUndefined()
    expect(p.pinnedPower(guest(100, spec({ state: 'ignored' })), live(100, 'stopped'))).toBeUndefined()
    // unknown HA: no power change at all
    expect(run({ unreadable: 'x' }, []).planner.pinnedPower(guest(100, spec()), live(100, 'stopped'))).toBe('stopped')
  })

  it('a start requested through HA waits for the guest; a stop of a running guest is stop-class', () => {
    const ha: LiveHa = { form: 'rules', resources: [], preferences: [] }
    const { drafts } = run(ha, [
      [guest(100, spec()), live(100, 'stopped')],
      [guest(101, spec(), 'stopped'), live(101, 'running')],
    ])
    expect(
      drafts.map((d) => [
        d.type,
        d.disruption,
        (d.requests[0] as Extract<PveRequest, { call: 'haWrite' }>).guest?.power,
      ]),
    ).toEqual([
      ['create', 'none', 'running'],
      ['create', 'stop', 'stopped'],
    ])
  })

  it('next_state_error: a service in error is blocked with the recovery, and only a disabled request is written', () => {
    const owned = { sid: 'vm:100', state: 'started', comment: haMarker(TAG, 'VM', 'g100') }
    const ha: LiveHa = { form: 'rules', resources: [owned], preferences: [] }
    const inError = { ...live(100, 'stopped'), haError: true as const }
    const blocked = run(ha, [[guest(100, spec({ max_restart: 3 })), inError]])
    // nothing HA does moves it: no write (not even the max_restart drift), no start of the guest's own
    expect(blocked.drafts).toEqual([])
    expect(blocked.anomalies.map((a) => [a.code, a.field])).toEqual([['ha-error', 'spec.ha.state']])
    expect(blocked.anomalies[0]!.message).toMatch(
      /in state error .*set spec\.ha\.state: disabled \(with spec\.state: stopped\) and apply/,
    )
    expect(blocked.planner.pinnedPower(guest(100, spec()), inError)).toBe('stopped')
    // PVE's ERROR RECOVERY from git: disabled is written, and its wait is for the stopped guest it already is
    const disabled = run(ha, [[guest(100, spec({ state: 'disabled' })), inError]])
    expect(disabled.anomalies).toEqual([])
    expect(disabled.drafts.map((d) => d.requests)).toEqual([
      [
        {
          call: 'haWrite',
          object: 'resources',
          method: 'PUT',
          id: 'vm:100',
          params: { state: 'disabled' },
          guest: { node: 'pve1', guest: 'qemu', vmid: 100, power: 'stopped' },
        },
      ],
    ])
  })

  it('9.x: a node-affinity rule ProxOps does not own naming the resource is an anomaly, not a failing write', () => {
    const ha: LiveHa = {
      form: 'rules',
      resources: [{ sid: 'vm:100', state: 'started', comment: haMarker(TAG, 'VM', 'g100') }],
      preferences: [{ rule: 'ops', type: 'node-affinity', resources: 'vm:100,vm:200', nodes: 'pve2' }],
    }
    const r = run(ha, [[guest(100, spec({ nodes: { pve1: 1 } })), live(100, 'running')]])
    expect(r.drafts).toEqual([])
    expect(r.anomalies.map((a) => a.code)).toEqual(['ha-conflict'])
  })

  it('unknown HA skips the guest with a reason; an unowned resource is never removed', () => {
    expect(run({ unreadable: 'HTTP 500' }, [[guest(100, spec()), live(100, 'running')]]).skips[0]?.message).toMatch(
      /HA configuration could not be read this cycle \(HTTP 500\)/,
    )
    const ha: LiveHa = { form: 'groups', resources: [{ sid: 'vm:100', comment: 'ops' }], preferences: [] }
    expect(run(ha, [[guest(100, undefined), live(100, 'running')]]).drafts).toEqual([])
  })
})

// ------------------------------------------------------------- properties: apply, then plan is empty

interface Model {
  form: 'groups' | 'rules'
  resources: Map<string, Record<string, string>>
  prefs: Map<string, Record<string, string>>
  power: Map<number, string>
}
const snapshot = (m: Model): LiveHa => ({
  form: m.form,
  resources: [...m.resources.values()].map((r) => ({ ...r })),
  preferences: [...m.prefs.values()].map((r) => ({ ...r })),
})

/** what PVE does with each write (section-config create / merge+delete / delete with purge) */
function apply(m: Model, r: Extract<PveRequest, { call: 'haWrite' }>, deleted: HaItem[]): void {
  const map = r.object === 'resources' ? m.resources : m.prefs
  const key = r.object === 'resources' ? 'sid' : r.object === 'groups' ? 'group' : 'rule'
  if (r.method === 'DELETE') {
    const item = map.get(r.id)
    if (item) deleted.push(item)
    map.delete(r.id)
    if (r.object === 'resources' && m.form === 'rules')
      for (const [id, p] of m.prefs) if (p.resources === r.id) m.prefs.delete(id)
    return
  }
  const item = r.method === 'POST' ? { [key]: r.id } : { ...(map.get(r.id) ?? { [key]: r.id }) }
  for (const [k, v] of Object.entries(r.params)) if (k !== 'delete') item[k] = String(v)
  for (const k of String(r.params.delete ?? '')
    .split(',')
    .filter(Boolean))
    delete item[k]
  map.set(r.id, item)
  if (r.guest) m.power.set(r.guest.vmid, r.guest.power)
}

const haSpecArb = fc.record({
  state: fc.option(fc.constantFrom('started', 'stopped', 'disabled', 'ignored' as const), { nil: undefined }),
  max_restart: fc.integer({ min: 0, max: 3 }),
  max_relocate: fc.integer({ min: 0, max: 3 }),
  nodes: fc.option(fc.constantFrom({ pve1: 2 }, { pve1: 2, pve2: 1 }, { pve1: 1, pve3: 1 }), { nil: undefined }),
  strict: fc.boolean(),
})
const liveItemArb = (vmid: number) =>
  fc.option(
    fc
      .record({
        state: fc.constantFrom('started', 'stopped', 'disabled', 'ignored', 'enabled'),
        max_restart: fc.constantFrom('1', '2', '5'),
        owned: fc.boolean(),
        pref: fc.option(fc.record({ nodes: fc.constantFrom('pve1', 'pve1:2,pve2:1', 'pve2:3'), owned: fc.boolean() }), {
          nil: undefined,
        }),
      })
      .map((x) => ({ vmid, ...x })),
    { nil: undefined },
  )

describe('planHa properties', () => {
  it('apply then plan is empty, and only marked resources, groups and rules are deleted', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('groups', 'rules' as const),
        fc.array(fc.tuple(fc.option(haSpecArb, { nil: undefined }), fc.boolean(), fc.boolean()), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.tuple(liveItemArb(100), liveItemArb(101), liveItemArb(102), liveItemArb(103)),
        (form, wanted, lives) => {
          const m: Model = { form, resources: new Map(), prefs: new Map(), power: new Map() }
          lives.forEach((l, i) => {
            const vmid = 100 + i
            if (!l) return
            const sid = `vm:${vmid}`
            const id = `proxops-vm-${vmid}`
            const comment = l.owned ? haMarker(TAG, 'VM', `g${vmid}`) : 'ops'
            m.resources.set(sid, {
              sid,
              state: l.state,
              max_restart: l.max_restart,
              comment,
              ...(form === 'groups' && l.pref ? { group: id } : {}),
            })
            if (l.pref) {
              const pc = l.pref.owned ? haMarker(TAG, 'VM', `g${vmid}`) : 'ops'
              m.prefs.set(
                id,
                form === 'groups'
                  ? { group: id, nodes: l.pref.nodes, comment: pc }
                  : { rule: id, type: 'node-affinity', resources: sid, nodes: l.pref.nodes, comment: pc },
              )
            }
          })
          const guests = wanted.map(([ha, started, running], i) => {
            const vmid = 100 + i
            // spec.state agrees with ha.state, as validate requires
            const state: 'started' | 'stopped' =
              ha?.state === 'started'
                ? 'started'
                : ha?.state === 'stopped' || ha?.state === 'disabled'
                  ? 'stopped'
                  : started
                    ? 'started'
                    : 'stopped'
            m.power.set(vmid, running ? 'running' : 'stopped')
            return guest(vmid, ha as HaSpec | undefined, state)
          })
          const owned = (item: HaItem) => item.comment?.startsWith(`${TAG}:`) === true
          const deleted: HaItem[] = []
          const once = () => {
            const r = run(
              snapshot(m),
              guests.map((g) => [g, live(g.spec.vmid, m.power.get(g.spec.vmid) as string)]),
            )
            return r.drafts
          }
          for (const d of once()) for (const r of d.requests) if (r.call === 'haWrite') apply(m, r, deleted)
          expect(deleted.filter((d) => !owned(d))).toEqual([])
          // and PVE then holds what git declares
          for (const g of guests) {
            const ha = g.spec.ha
            const r = m.resources.get(`vm:${g.spec.vmid}`)
            if (!ha) continue
            const want = ha.state ?? (g.spec.state === 'started' ? 'started' : 'stopped')
            expect([
              r?.state === 'enabled' ? 'started' : r?.state,
              r?.max_restart ?? '1',
              r?.max_relocate ?? '1',
              r?.comment,
            ]).toEqual([want, String(ha.max_restart), String(ha.max_relocate), haMarker(TAG, 'VM', g.metadata.name)])
            const pref = m.prefs.get(`proxops-vm-${g.spec.vmid}`)
            if (ha.nodes === undefined) expect(pref === undefined || !owned(pref)).toBe(true)
            else if (form === 'groups')
              expect(pref?.nodes?.split(',').sort()).toEqual(
                Object.entries(ha.nodes)
                  .map(([n, p]) => `${n}:${p}`)
                  .sort(),
              )
            else
              expect(pref?.nodes).toBe(
                Object.keys(ha.nodes)
                  .sort()
                  .map((n) => `${n}:${ha.nodes?.[n]}`)
                  .join(','),
              )
          }
          // a rule ProxOps does not own that names the guest blocks its own rule (an anomaly): nothing to apply
          expect(once().map((d) => `${d.type} ${d.address}`)).toEqual([])
        },
      ),
      { numRuns: 300 },
    )
  })
})
