/**
 * What a prune's destroy (purge) takes with it (kinds/guest/destroy-effects.ts), pure: which backup jobs it edits
 * or deletes (pve-guest-common PVE::VZDump::Plugin::remove_vmid_from_backup_jobs), which HA resource and rules go
 * (pve-ha-manager's purge), which pool it leaves (pve-access-control remove_vm_access), and when the prune is held
 * back because the purge would delete what this entry does not own. destroy-effects.test.ts plays the same on the
 * simulator; this file is part of the tests `pnpm mutate` runs (docs/mutation-testing.md).
 */
import { describe, expect, test } from 'vitest'
import type { LiveGuest, LiveInventory } from '../../inventory.js'
import { DEFAULT_POLICY, type Policy } from '../../plan-types.js'
import { destroyEffects } from './destroy-effects.js'

const policy: Policy = { ...DEFAULT_POLICY, clusterEntry: 'home' }
const g = (vmid: number, type: LiveGuest['type'] = 'qemu') => ({ type, vmid }) as LiveGuest

type Live = Pick<LiveInventory, 'backupJobs' | 'ha' | 'pools'>
const live = (over: Partial<Live> = {}): Live => ({
  backupJobs: { known: [] },
  ha: { known: { form: 'rules', resources: [], preferences: [] } },
  pools: { known: [] },
  ...over,
})
const jobs = (...list: [string, Record<string, string>][]): Live =>
  live({ backupJobs: { known: list.map(([id, values]) => ({ id, values })) } })
const ours = 'managed-by=proxops.home nightly'

describe('backup jobs (remove_vmid_from_backup_jobs)', () => {
  test('a job naming other guests too is edited, one that names only this one is deleted when this entry owns it', () => {
    const fx = destroyEffects(
      g(101),
      jobs(
        ['both', { vmid: '101,102', comment: ours }],
        ['solo', { vmid: '101', comment: ours }],
        ['ex', { all: '1', exclude: '101' }],
        ['none', { vmid: '102' }],
        ['pools', { pool: 'p' }],
        ['prefix', { vmid: '1010' }],
      ),
      policy,
      new Set(),
    )
    expect(fx).toEqual({
      notes: ['deletes backup job solo (it names no other guest)', 'removes it from backup jobs both, ex'],
      ownedJobDeletes: ['BackupJob/solo#delete'],
      refusals: [],
    })
  })

  test('one edited job is named in the singular', () => {
    expect(destroyEffects(g(101), jobs(['both', { vmid: '101, 102' }]), policy, new Set()).notes).toEqual([
      'removes it from backup job both',
    ])
  })

  test('a job named "vmid" takes precedence over its exclude list', () => {
    // PVE reads `vmid` first: a job with both lists and this guest only in `exclude` is untouched by the purge
    expect(destroyEffects(g(101), jobs(['j', { vmid: '102', exclude: '101' }]), policy, new Set()).notes).toEqual([])
  })

  test('deleting a job this entry does not own, or one git declares, holds the prune back with the reason', () => {
    const fx = destroyEffects(
      g(101),
      jobs(
        ['foreign', { vmid: '101', comment: 'managed-by=proxops.work' }],
        ['manual', { vmid: '101', comment: 'made by hand' }],
        ['kept', { vmid: '101', comment: ours }],
      ),
      policy,
      new Set(['kept']),
    )
    expect(fx.ownedJobDeletes).toEqual([])
    expect(fx.refusals).toEqual([
      'destroying it would delete backup job foreign, which another cluster entry owns (remove_vmid_from_backup_jobs: the job names no other guest); add a guest to the job or delete it by hand',
      'destroying it would delete backup job manual, which ProxOps does not own (remove_vmid_from_backup_jobs: the job names no other guest); add a guest to the job or delete it by hand',
      'destroying it would delete backup job kept, which git declares (it names no other guest)',
    ])
    // an unmarked job (the bare marker) is not this entry's either
    expect(
      destroyEffects(g(101), jobs(['bare', { vmid: '101', comment: 'managed-by=proxops' }]), policy, new Set())
        .refusals,
    ).toHaveLength(1)
  })

  test('unreadable jobs, HA and pools say nothing', () => {
    const fx = destroyEffects(
      g(101),
      { backupJobs: { unreadable: 'x' }, ha: { unreadable: 'x' }, pools: { unreadable: 'x' } },
      policy,
      new Set(),
    )
    expect(fx).toEqual({ notes: [], ownedJobDeletes: [], refusals: [] })
  })
})

describe('HA (the purge removes the resource and empties its rules)', () => {
  const ha = (resources: Record<string, string>[], preferences: Record<string, string>[]): Live =>
    live({ ha: { known: { form: 'rules', resources, preferences } } })

  test('the resource goes, a rule naming only it is deleted; an owned rule is fine, a foreign one holds the prune', () => {
    const fx = destroyEffects(
      g(101),
      ha(
        [{ sid: 'vm:101' }, { sid: 'vm:102' }],
        [
          { rule: 'mine', resources: 'vm:101', comment: 'proxops: VM/web' },
          { rule: 'theirs', resources: 'vm:101' },
          { rule: 'shared', resources: 'vm:101,vm:102' },
          { rule: 'other', resources: 'vm:102' },
          { rule: 'empty', resources: '' },
          { group: 'g8', nodes: 'pve1' },
        ],
      ),
      policy,
      new Set(),
    )
    expect(fx.notes).toEqual([
      'removes HA resource vm:101',
      'deletes HA rule mine (it names no other resource)',
      'deletes HA rule theirs (it names no other resource)',
    ])
    expect(fx.refusals).toEqual([
      'destroying it would delete HA rule theirs, which ProxOps does not own (it names no other resource); remove vm:101 from it or delete it by hand',
    ])
  })

  test('a container is ct:<vmid>, and a guest without an HA resource has no note', () => {
    expect(destroyEffects(g(101, 'lxc'), ha([{ sid: 'ct:101' }], []), policy, new Set()).notes).toEqual([
      'removes HA resource ct:101',
    ])
    expect(destroyEffects(g(101), ha([{ sid: 'ct:101' }], []), policy, new Set()).notes).toEqual([])
  })
})

test('the pool the guest is a member of (remove_vm_access)', () => {
  const pools = live({
    pools: {
      known: [
        { poolid: 'a', vmids: [100], storages: [] },
        { poolid: 'b', vmids: [101], storages: [] },
      ],
    },
  })
  expect(destroyEffects(g(101), pools, policy, new Set()).notes).toEqual(['removes it from pool b'])
  expect(destroyEffects(g(102), pools, policy, new Set()).notes).toEqual([])
})
