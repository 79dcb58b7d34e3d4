/**
 * Pools through plan(): pve-manager PVE::API2::Pool create_pool / update_pool (vms, allow-move) / delete_pool
 * (refused while a sub-pool or an existing member is left), qemu-server create_vm / clone_vm with `pool`
 * (add_vm_to_pool at the end of the worker) and remove_vm_access (a destroyed guest leaves its pool).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { BackupJobManifest } from '@proxops/schema'
import { plan } from '../../plan/plan.js'
import { describeAction } from '../index.js'
import { known, type LivePool, type Observed } from '../../inventory.js'
import type { Plan, Policy, PveRequest } from '../../plan-types.js'
import { simConverge } from '../../test-support/sim.js'
import type { DesiredState } from '../../desired.js'
import type { LiveInventory } from '../../inventory.js'
import { backupJob, desired, guest, inventory, liveVm, policy, pool, vm } from '../../fixtures.test.helpers.js'
import { privilegeNeeds } from '../../privileges.js'
import { commentOwner, commentText } from '../../kit/ownership.js'

const live = (poolid: string, comment?: string, vmids: number[] = [], storages: string[] = []): LivePool => ({
  poolid,
  ...(comment !== undefined ? { comment } : {}),
  vmids,
  storages,
})
const pools = (...p: LivePool[]): Observed<readonly LivePool[]> => ({ known: p })
const owned = 'managed-by=proxops'
const summary = (p: Plan) => p.actions.map((a) => `${describeAction(a).label} ${a.address}`)
const req = <C extends PveRequest['call']>(p: Plan, call: C) =>
  p.actions.flatMap((a) => a.requests).filter((r): r is Extract<PveRequest, { call: C }> => r.call === call)

/** one apply of `d` on a fresh simulator loaded with `inv`; then what PVE shows and the next plan */
const converge = (d: DesiredState, inv: LiveInventory) => simConverge(d, policy(), { seed: inv })

describe('Pool kind and spec.pool', () => {
  it('a new pool is created before the guests that name it; the guest gets pool= on create; then nothing is left', async () => {
    const d = desired(
      pool('web', { comment: 'web tier' }),
      pool('blue', { id: 'web/blue' }),
      vm('a', 100, { pool: 'web/blue' }),
    )
    const inv = inventory([], { pools: pools() })
    const p = plan(d, inv, policy())
    expect(summary(p)).toEqual(['create Pool/web', 'create Pool/web/blue', 'create VM/pve1/100(a)'])
    expect(req(p, 'createPool').map((r) => r.params)).toEqual([
      { poolid: 'web', comment: 'managed-by=proxops web tier' },
      { poolid: 'web/blue', comment: 'managed-by=proxops' },
    ])
    const create = p.actions[2]!
    expect((create.requests[0] as Extract<PveRequest, { call: 'createGuest' }>).params.pool).toBe('web/blue')
    expect(create.diffs).toContainEqual({ field: 'spec.pool', key: 'pool', after: 'web/blue' })
    expect(create.dependsOn).toEqual(['Pool/web/blue#create'])
    expect(p.actions[1]!.dependsOn).toEqual(['Pool/web#create'])
    const { after, second } = await converge(d, inv)
    expect(after.pools).toEqual(pools(live('web', 'managed-by=proxops web tier'), live('web/blue', owned, [100])))
    expect(second.actions).toEqual([])
  })

  it('a guest never joins a pool marked for another cluster entry: neither on create nor through update_pool', () => {
    const d = desired(vm('a', 100, { pool: 'theirs' }), vm('b', 101, { pool: 'theirs' }))
    const inv = inventory([liveVm(100, 'a')], { pools: pools(live('theirs', 'managed-by=proxops.b team b')) })
    const p = plan(d, inv, policy({ clusterEntry: 'a' }))
    expect(req(p, 'updatePool')).toEqual([])
    expect(p.actions.filter((a) => a.type === 'create')).toEqual([])
    expect(p.anomalies.map((a) => [a.code, a.address, a.field])).toEqual([
      ['owned-elsewhere', 'VM/pve1/100(a)', 'spec.pool'],
      ['owned-elsewhere', 'VM/pve1/101(b)', 'spec.pool'],
    ])
    expect(p.anomalies[0]?.message).toContain("another cluster entry's marker (managed-by=proxops.b)")
  })

  it('an existing guest joins through update_pool, with allow-move only when it is in another pool', async () => {
    const d = desired(vm('a', 100, { pool: 'web' }), vm('b', 101, { pool: 'web' }), vm('c', 102))
    const guests = [liveVm(100, 'a'), liveVm(101, 'b'), liveVm(102, 'c')]
    const inv = inventory(guests, { pools: pools(live('db', undefined, [101, 102]), live('web', owned)) })
    const p = plan(d, inv, policy())
    expect(summary(p)).toEqual(['Pool join VM/pve1/100(a)', 'Pool join VM/pve1/101(b)'])
    expect(req(p, 'updatePool').map((r) => r.params)).toEqual([
      { poolid: 'web', vms: '100' },
      { poolid: 'web', vms: '101', 'allow-move': 1 },
    ])
    expect(p.actions[1]!.diffs).toEqual([{ field: 'spec.pool', key: 'pool', before: 'db', after: 'web' }])
    expect(p.actions.every((a) => a.disruption === 'none')).toBe(true)
    // 102 declares no pool: its membership in db is not ProxOps' to change
    expect((await converge(d, inv)).second.actions).toEqual([])
  })

  it('update_pool with allow-move needs Pool.Allocate on the pool the guest leaves (preflight)', () => {
    const d = desired(vm('a', 100, { pool: 'web' }), vm('b', 101, { pool: 'web' }))
    const inv = inventory([liveVm(100, 'a'), liveVm(101, 'b')], {
      pools: pools(live('db', undefined, [101]), live('web', owned)),
    })
    const needs = privilegeNeeds(plan(d, inv, policy()))
    const of = (vmid: number) =>
      needs
        .filter((n) => n.action.includes(`/${vmid}(`) && 'anyOf' in n)
        .map((n) =>
          'anyOf' in n ? `${n.key ?? '-'} ${n.anyOf.map((g) => `${g.privs.join('|')}@${g.path}`).join(' or ')}` : '',
        )
    expect(of(100)).toEqual(['- Pool.Allocate@/pool/web', 'vms Permissions.Modify@/vms/100 or VM.Allocate@/vms/100'])
    expect(of(101)).toEqual([
      '- Pool.Allocate@/pool/web',
      'vms Permissions.Modify@/vms/101 or VM.Allocate@/vms/101',
      'allow-move Pool.Allocate@/pool/db',
    ])
  })

  it("a declared pool without the marker is claimed (the comment gains it); another entry's pool is not", () => {
    const d = desired(pool('web', { comment: 'web' }), pool('ops'))
    const inv = inventory([], { pools: pools(live('ops', 'managed-by=proxops.other x'), live('web', 'by hand')) })
    const p = plan(d, inv, policy({ clusterEntry: 'lab' }))
    expect(summary(p)).toEqual(['update Pool/web'])
    expect(p.actions[0]!.reason).toMatch(/claimed/)
    expect(p.actions[0]!.diffs).toEqual([
      { field: 'spec.comment', key: 'comment', before: 'by hand', after: 'managed-by=proxops.lab web' },
    ])
    expect(p.anomalies.map((a) => [a.code, a.address])).toEqual([['owned-elsewhere', 'Pool/ops']])
  })

  it('spec.pool naming a pool nobody has is an anomaly and the guest is not created; unknown pools plan nothing', () => {
    const d = desired(vm('a', 100, { pool: 'nope' }), vm('b', 101, { pool: 'web' }), pool('web'))
    const none = plan(d, inventory([liveVm(101, 'b')], { pools: pools() }), policy())
    expect(summary(none)).toEqual(['create Pool/web', 'Pool join VM/pve1/101(b)'])
    expect(none.anomalies.map((a) => [a.code, a.address, a.field])).toEqual([
      ['pool-missing', 'VM/pve1/100(a)', 'spec.pool'],
    ])
    const unknown = plan(d, inventory([liveVm(101, 'b')], { pools: { unreadable: 'HTTP 500' } }), policy())
    // the create still carries pool= (PVE checks it); nothing else of pools is planned
    expect(summary(unknown)).toEqual(['create VM/pve1/100(a)'])
    expect(unknown.skips.map((s) => [s.code, s.address])).toEqual([
      ['unknown', 'Pool/web'],
      ['unknown', 'VM/pve1/101(b)'],
    ])
  })
})

describe('pools and backup jobs', () => {
  const job = (pool: string): BackupJobManifest => backupJob('nightly', { selection: { pool } })

  it('a job selecting a declared pool is created after it; a pool a job still selects is not pruned', () => {
    const p = plan(
      desired(pool('web'), job('web')),
      inventory([], { pools: pools(), backupJobs: { known: [] } }),
      policy(),
    )
    expect(summary(p)).toEqual(['create Pool/web', 'create BackupJob/nightly'])
    expect(p.actions[1]!.dependsOn).toEqual(['Pool/web#create'])
    const kept = plan(
      desired(pool('other'), job('web')),
      inventory([], { pools: pools(live('other', owned), live('web', owned)), backupJobs: { known: [] } }),
      policy({ pruneBudget: 'unlimited', pruneRatioLimit: 1 }),
    )
    expect(kept.actions.filter((a) => a.kind === 'Pool')).toEqual([])
    expect(kept.skips.map((s) => [s.code, s.address, s.message])).toContainEqual([
      'prune-guard',
      'Pool/web',
      expect.stringContaining('a declared guest, backup job or pool needs it'),
    ])
  })
})

describe('pool prunes (docs/safety.md#pools)', () => {
  const prune: Partial<Policy> = { pruneBudget: 'unlimited', pruneRatioLimit: 1 }

  it('an owned pool git no longer declares is deleted after its pruned members; never one holding anything else', () => {
    const orphan = guest(200, { name: 'old', tags: 'proxops' })
    const foreign = guest(201, { name: 'foreign' })
    const inv = inventory([liveVm(100, 'a'), orphan, foreign], {
      pools: pools(
        live('empty', owned),
        live('gone', owned, [200]),
        live('kept', owned, [201]),
        live('stor', owned, [], ['local']),
        live('mine', 'managed-by=proxops', [100]),
        live('parent', owned),
        live('parent/child', owned),
        live('other', 'manual'),
      ),
    })
    const d = desired(vm('a', 100, { pool: 'web' }), pool('web'), pool('keep'))
    const p = plan(d, { ...inv, pools: pools(...(known(inv.pools) ?? []), live('keep'), live('web')) }, policy(prune))
    const deletes = p.actions.filter((a) => a.kind === 'Pool' && a.type === 'delete')
    expect(deletes.map((a) => [a.address, a.dependsOn])).toEqual([
      ['Pool/parent/child', []],
      ['Pool/empty', []],
      ['Pool/gone', ['VM/pve1/200(old)#delete']],
      ['Pool/mine', ['VM/pve1/100(a)#pool']],
      ['Pool/parent', ['Pool/parent/child#delete']],
    ])
    expect(p.skips.filter((s) => s.kind === 'Pool').map((s) => [s.code, s.address, s.message])).toEqual([
      [
        'prune-guard',
        'Pool/kept',
        expect.stringContaining('it contains guest 201, which this plan does not prune or move'),
      ],
      ['untagged', 'Pool/other', expect.stringContaining('never touched')],
      ['prune-guard', 'Pool/stor', expect.stringContaining('it contains storage local')],
    ])
    // the guest pruned before its pool: deletes run in the plan's order, dependencies first
    const order = p.actions.map((a) => a.id)
    expect(order.indexOf('VM/pve1/200(old)#delete')).toBeLessThan(order.indexOf('Pool/gone#delete'))
  })

  it('guards: empty desired, budget after the guests, ratio; an unmarked pool of another entry is never pruned', () => {
    const inv = inventory([], { pools: pools(live('a', owned), live('b', owned), live('c', 'managed-by=proxops')) })
    const empty = plan(desired(), inv, policy({ ...prune, clusterEntry: undefined }))
    expect(empty.actions).toEqual([])
    expect(empty.anomalies.map((a) => a.code)).toEqual(['empty-desired'])
    const allowed = plan(desired(), inv, policy({ ...prune, allowEmpty: ['Pool'] }))
    expect(summary(allowed)).toEqual(['delete Pool/a', 'delete Pool/b', 'delete Pool/c'])
    const budget = plan(
      desired(pool('keep')),
      { ...inv, pools: pools(live('a', owned), live('b', owned), live('keep', owned)) },
      policy({ pruneBudget: 1, pruneRatioLimit: 1 }),
    )
    expect(summary(budget)).toEqual(['delete Pool/a'])
    expect(budget.skips.map((s) => [s.code, s.address])).toEqual([['prune-budget', 'Pool/b']])
    const ratio = plan(
      desired(pool('keep')),
      { ...inv, pools: pools(live('a', owned), live('b', owned), live('keep', owned)) },
      policy({ pruneBudget: 'unlimited' }),
    )
    expect(ratio.anomalies.map((a) => a.code)).toEqual(['prune-ratio'])
    const entry = plan(desired(pool('a')), inv, policy({ ...prune, clusterEntry: 'lab' }))
    expect(entry.actions.filter((a) => a.type === 'delete')).toEqual([])
    expect(entry.skips.filter((s) => s.address === 'Pool/c').map((s) => s.code)).toEqual(['unmarked'])
  })

  it('property: no pool is deleted unless this entry marked it and everything in it leaves in the same plan', () => {
    const markers = [undefined, 'manual', 'managed-by=proxops', 'managed-by=proxops.lab', 'managed-by=proxops.other']
    const poolArb = fc.record({
      id: fc.constantFrom('a', 'b', 'c', 'a/x'),
      marker: fc.constantFrom(...markers),
      vmids: fc.subarray([100, 101, 102, 103]),
      storage: fc.boolean(),
    })
    fc.assert(
      fc.property(
        fc.uniqueArray(poolArb, { selector: (p) => p.id, maxLength: 4 }),
        fc.subarray([100, 101, 102, 103]),
        fc.subarray(['a', 'b', 'c']),
        fc.constantFrom<'lab' | undefined>('lab', undefined),
        (livePools, ownedGuests, declared, clusterEntry) => {
          const members = new Set<number>()
          const lp = livePools.map((p) => {
            const vmids = p.vmids.filter((v) => !members.has(v))
            for (const v of vmids) members.add(v)
            return live(p.id, p.marker, vmids, p.storage ? ['local'] : [])
          })
          const guests = [100, 101, 102, 103].map((v) =>
            guest(v, {
              name: `g${v}`,
              ...(ownedGuests.includes(v)
                ? { tags: clusterEntry ? `proxops;proxops.${clusterEntry}` : 'proxops' }
                : {}),
            }),
          )
          const pol = policy({
            pruneBudget: 'unlimited',
            pruneRatioLimit: 1,
            allowEmpty: ['Pool', 'VM'],
            ...(clusterEntry ? { clusterEntry } : {}),
          })
          const p = plan(desired(...declared.map((id) => pool(id))), inventory(guests, { pools: pools(...lp) }), pol)
          const deletedGuests = new Set(
            p.actions.filter((a) => a.type === 'delete' && a.vmid !== undefined).map((a) => a.vmid),
          )
          for (const r of req(p, 'deletePool')) {
            const lpool = lp.find((x) => x.poolid === r.poolid)!
            expect(commentOwner(lpool.comment, pol)).toBe('self')
            expect(declared).not.toContain(r.poolid)
            expect(lpool.storages).toEqual([])
            for (const v of lpool.vmids) expect(deletedGuests.has(v)).toBe(true)
            for (const child of lp.filter((x) => x.poolid.startsWith(`${r.poolid}/`)))
              expect(req(p, 'deletePool').map((x) => x.poolid)).toContain(child.poolid)
          }
        },
      ),
    )
  })

  it('commentOwner and commentText read the first word of the comment', () => {
    expect(commentOwner('managed-by=proxops web', { ownershipTag: 'proxops' })).toBe('self')
    expect(commentOwner('managed-by=proxopsx', { ownershipTag: 'proxops' })).toBe('none')
    expect(commentOwner('web managed-by=proxops', { ownershipTag: 'proxops' })).toBe('none')
    expect(commentOwner('managed-by=proxops.b', { ownershipTag: 'proxops', clusterEntry: 'a' })).toBe('other')
    expect(commentText('managed-by=proxops.a  web tier', 'proxops')).toBe('web tier')
    expect(commentText('managed-by=proxops', 'proxops')).toBeUndefined()
    expect(commentText('by hand', 'proxops')).toBe('by hand')
    // another tool's marker is the user's text
    expect(commentText('managed-by=terraform web', 'proxops')).toBe('managed-by=terraform web')
  })
})
