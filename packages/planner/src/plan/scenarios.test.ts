/**
 * Reference scenarios at the planning level, named after the behaviour. The same scenarios
 * run end to end against the simulator in packages/planner/test (E2).
 */
import { DISRUPTION_OVERRIDE } from '../kit/guard-overrides.js'
import { describe, expect, it } from 'vitest'
import { PlanInputError } from '../errors.js'
import {
  artifact,
  desired,
  GiB,
  MiB,
  guest,
  inventory,
  liveCt,
  liveVm,
  lookup,
  lxc,
  orphan,
  policy,
  vm,
} from '../fixtures.test.helpers.js'
import { manifest } from '../testing/manifest.js'
import { plan } from './plan.js'
import type { DesiredState } from '../desired.js'
import type { LiveInventory } from '../inventory.js'
import { simConverge } from '../test-support/sim.js'
import type { Plan, Policy } from '../plan-types.js'

const types = (p: Plan) => p.actions.map((a) => `${a.type} ${a.address}`)
/** one apply of `d` on a fresh simulator loaded with `inv`: the plan it ran, what PVE shows after, the next plan */
const converge = (d: DesiredState, inv?: LiveInventory, pol: Policy = policy()) =>
  simConverge(d, pol, { ...(inv ? { seed: inv } : {}), secrets: lookup })

describe('prunes', () => {
  it('PruneTaggedOrphan: a tagged live VM absent in git is deleted (last, tier 9)', () => {
    const p = plan(
      desired(vm('web', 100)),
      inventory([liveVm(100, 'web'), orphan(101), orphan(102), orphan(103)]),
      policy({ pruneRatioLimit: 1 }),
    )
    expect(types(p)).toEqual([
      'delete VM/pve1/101(orphan-101)',
      'delete VM/pve1/102(orphan-102)',
      'delete VM/pve1/103(orphan-103)',
    ])
    expect(p.actions.every((a) => a.tier === 9)).toBe(true)
  })

  it('PruneRespectsBudget: 1 desired + 3 tagged orphans, budget 2 -> exactly 2 deletes, 1 deferred, the desired VM kept', () => {
    const p = plan(
      desired(vm('web', 100)),
      inventory([liveVm(100, 'web'), orphan(101), orphan(102), orphan(103)]),
      policy({ pruneBudget: 2 }),
    )
    expect(types(p)).toEqual(['delete VM/pve1/101(orphan-101)', 'delete VM/pve1/102(orphan-102)'])
    expect(p.skips.map((s) => [s.code, s.vmid])).toEqual([['prune-budget', 103]])
  })

  it('PruneUntaggedIgnored: an untagged live VM is one skip record, never an action', () => {
    const p = plan(desired(vm('web', 100)), inventory([liveVm(100, 'web'), orphan(101, '')]), policy())
    expect(p.actions).toEqual([])
    expect(p.skips.map((s) => [s.code, s.vmid])).toEqual([['untagged', 101]])
  })

  it('OwnershipTagIsReadFromSemicolonCommaOrSpaceLists', () => {
    for (const tags of ['web;proxops', 'web,proxops', 'web proxops', 'PROXOPS']) {
      const p = plan(desired(vm('web', 100)), inventory([liveVm(100, 'web'), orphan(101, tags)]), policy())
      expect(types(p)).toEqual(['delete VM/pve1/101(orphan-101)'])
    }
  })

  describe('the ownership marker names the cluster entry (two entries of one PVE cluster)', () => {
    const a = policy({ clusterEntry: 'a', pruneRatioLimit: 1 })
    const b = policy({ clusterEntry: 'b', pruneRatioLimit: 1 })

    it('OwnedGuestsCarryTheEntryMarker: create and converged tags are proxops;proxops.a', async () => {
      const { first, second } = await converge(desired(vm('web', 100, { tags: ['web'] })), inventory(), a)
      const request = first.actions[0]?.requests[0]
      expect(request?.call === 'createGuest' ? request.params.tags : undefined).toBe('proxops;proxops.a;web')
      expect(second.actions).toEqual([])
    })

    it("AnEntryNeverPrunesAnotherEntrysGuest: b declares nothing of a's and deletes none of it", () => {
      const live = inventory([liveVm(100, 'web', { tags: 'proxops;proxops.a' }), orphan(101, 'proxops;proxops.a')])
      const p = plan(desired(vm('db', 200)), live, b)
      expect(p.actions.map((x) => x.type)).toEqual(['create'])
      expect(p.skips.map((s) => [s.code, s.vmid])).toEqual([
        ['owned-elsewhere', 100],
        ['owned-elsewhere', 101],
      ])
      // the same orphan is a's to prune
      expect(types(plan(desired(vm('web', 100)), live, a))).toEqual(['delete VM/pve1/101(orphan-101)'])
    })

    it('AnEntryNeverTakesOverAnotherEntrysVmid: the guest at the vmid is an owned-elsewhere anomaly', () => {
      const live = inventory([liveVm(100, 'web', { tags: 'proxops;proxops.a', memory: '1024' })])
      const p = plan(desired(vm('web', 100)), live, b)
      expect(p.actions).toEqual([])
      expect(p.anomalies.map((x) => x.code)).toEqual(['owned-elsewhere'])
      expect(p.anomalies[0]?.message).toContain('cluster entry a (tag proxops.a)')
    })

    it('UnmarkedGuestsMigrate: the claiming entry writes its marker; an unclaimed one is never pruned', () => {
      const live = inventory([liveVm(100, 'web'), orphan(101)])
      const p = plan(desired(vm('web', 100)), live, a)
      expect(p.actions.map((x) => [x.type, x.vmid])).toEqual([['update', 100]])
      expect(p.actions[0]?.diffs).toContainEqual(
        expect.objectContaining({ key: 'tags', before: 'proxops', after: 'proxops;proxops.a' }),
      )
      expect(p.skips.map((s) => [s.code, s.vmid])).toEqual([['unmarked', 101]])
      expect(p.skips[0]?.message).toContain('add the tag proxops.a')
      // marked by hand, the orphan is a's to prune
      expect(
        types(plan(desired(vm('web', 100)), inventory([liveVm(100, 'web'), orphan(101, 'proxops;proxops.a')]), a)),
      ).toContain('delete VM/pve1/101(orphan-101)')
    })

    it('WithoutAnEntryTheTagAloneOwns: embedders that name no entry keep the plain tag', () => {
      const p = plan(
        desired(vm('web', 100)),
        inventory([liveVm(100, 'web'), orphan(101, 'proxops;proxops.a')]),
        policy(),
      )
      expect(types(p)).toEqual(['delete VM/pve1/101(orphan-101)'])
    })
  })

  it('LegacyTagIsNotOwnership: pveconform does not count', () => {
    const p = plan(desired(vm('web', 100)), inventory([liveVm(100, 'web'), orphan(101, 'pveconform')]), policy())
    expect(p.actions).toEqual([])
    expect(p.skips[0]?.code).toBe('untagged')
  })

  it('AnomalySuppressesPrune: 0 desired VMs + 4 tagged orphans, budget 3 -> anomaly, 0 actions', () => {
    const p = plan(
      desired(),
      inventory([orphan(101), orphan(102), orphan(103), orphan(104)]),
      policy({ pruneBudget: 3 }),
    )
    expect(p.actions).toEqual([])
    expect(p.anomalies.map((a) => a.code)).toEqual(['empty-desired'])
    expect(p.skips.filter((s) => s.code === 'prune-guard')).toHaveLength(4)
  })

  it('EmptyDesiredGuardHoldsEvenWithinBudget: 0 desired + 1 owned -> nothing pruned (unlike the reference)', () => {
    const p = plan(desired(), inventory([orphan(101)]), policy({ pruneBudget: 3 }))
    expect(p.actions).toEqual([])
    expect(p.anomalies[0]?.message).toContain('0 desired VM')
  })

  it('AllowEmptyKindLetsTheEmptyDesiredPrunesRun', () => {
    const p = plan(desired(), inventory([orphan(101)]), policy({ allowEmpty: ['VM'] }))
    expect(types(p)).toEqual(['delete VM/pve1/101(orphan-101)'])
  })

  it('BudgetZeroMeansNoPrunes; unlimited must be written out', () => {
    const live = inventory([liveVm(100, 'web'), liveVm(102, 'db'), orphan(101)])
    const d = desired(vm('web', 100), vm('db', 102))
    expect(plan(d, live, policy({ pruneBudget: 0 })).actions).toEqual([])
    expect(plan(d, live, policy({ pruneBudget: 0 })).skips.map((s) => s.code)).toEqual(['prune-budget'])
    expect(types(plan(d, live, policy({ pruneBudget: 'unlimited' })))).toEqual(['delete VM/pve1/101(orphan-101)'])
    expect(() => plan(d, live, policy({ pruneBudget: -1 }))).toThrow(PlanInputError)
  })

  it('RatioGuard: pruning more than half of the owned objects of a kind is an anomaly', () => {
    const p = plan(
      desired(vm('web', 100)),
      inventory([liveVm(100, 'web'), orphan(101), orphan(102)]),
      policy({ pruneBudget: 'unlimited' }),
    )
    expect(p.actions).toEqual([])
    expect(p.anomalies.map((a) => a.code)).toEqual(['prune-ratio'])
  })

  it('GuardsNameTheirOverride: each prune guard says what lifts it, and lifting it lets the prunes run', () => {
    const live = inventory([liveVm(100, 'web'), orphan(101), orphan(102)])
    const ratio = plan(desired(vm('web', 100)), live, policy({ pruneBudget: 'unlimited' }))
    expect(ratio.anomalies.map((a) => a.message)).toEqual([
      expect.stringContaining('(pass --allow-empty VM to accept)'),
    ])
    expect(ratio.skips.map((s) => s.message)).toEqual([
      expect.stringContaining('--allow-empty VM'),
      expect.stringContaining('--allow-empty VM'),
    ])
    const lifted = plan(desired(vm('web', 100)), live, policy({ pruneBudget: 'unlimited', allowEmpty: ['VM'] }))
    expect(types(lifted)).toEqual(['delete VM/pve1/101(orphan-101)', 'delete VM/pve1/102(orphan-102)'])
    const empty = plan(desired(), inventory([orphan(101)]), policy())
    expect(empty.anomalies[0]?.message).toContain('(pass --allow-empty VM to accept)')
    const budget = plan(desired(vm('web', 100)), live, policy({ pruneBudget: 0, allowEmpty: ['VM'] }))
    expect(budget.skips.map((s) => s.message)).toEqual([
      expect.stringContaining('raise it with --prune-budget or reconcile.prune-budget'),
      expect.stringContaining('raise it with --prune-budget or reconcile.prune-budget'),
    ])
  })

  it('AbsentPruneNeverTouchesArtifacts: empty desired and files on storage -> 0 actions', () => {
    const inv = inventory([], {
      volumes: [
        { node: 'pve1', storage: 'local', volid: 'local:iso/x.iso', content: 'iso' },
        { node: 'pve1', storage: 'local', volid: 'local:vztmpl/d.tar.zst', content: 'vztmpl' },
      ],
    })
    const p = plan(desired(), inv, policy({ pruneBudget: 'unlimited', allowEmpty: ['VM', 'LXC'] }))
    expect(p.actions).toEqual([])
  })

  it('PruneShutsARunningGuestDownGracefullyFirst', () => {
    const p = plan(
      desired(vm('web', 100)),
      inventory([liveVm(100, 'web'), orphan(101, 'proxops', { status: 'running' })]),
      policy(),
    )
    expect(p.actions[0]?.requests.map((r) => r.call)).toEqual(['shutdown', 'deleteGuest'])
    expect(p.actions[0]?.requests[0]).toMatchObject({ timeoutSeconds: 120, forceStop: false })
    expect(p.actions[0]?.disruption).toBe('stop')
  })

  it('PruneRespectsPVEProtection: a protected orphan is an anomaly, not a delete', () => {
    const p = plan(
      desired(vm('web', 100)),
      inventory([liveVm(100, 'web'), guest(101, { name: 'x', tags: 'proxops', protection: '1' })]),
      policy(),
    )
    expect(p.actions).toEqual([])
    expect(p.anomalies.map((a) => a.code)).toEqual(['protected'])
  })

  it('PruneSkipsLockedGuests', () => {
    const p = plan(
      desired(vm('web', 100)),
      inventory([liveVm(100, 'web'), orphan(101, 'proxops', { lock: 'backup' })]),
      policy(),
    )
    expect(p.actions).toEqual([])
    expect(p.skips.map((s) => s.code)).toEqual(['locked'])
  })

  it('ClusterAllowlistExcludesLiveObjectsFromPlan: an orphan on a non-allowed node is neither action nor skip', () => {
    const p = plan(
      desired(vm('web', 100)),
      inventory([liveVm(100, 'web'), orphan(101, 'proxops', { node: 'pve3' }), orphan(102, '', { node: 'pve3' })]),
      policy({ nodes: ['pve1', 'pve2'] }),
    )
    expect(p.actions).toEqual([])
    expect(p.skips).toEqual([])
  })

  it("ClusterEmptyDesiredNoPruneFromOtherCluster: dev (allowlist pve2) never sees prod's VM on pve1", () => {
    const p = plan(
      { cluster: 'dev', manifests: [] },
      inventory([liveVm(100, 'web')]),
      policy({ nodes: ['pve2'], allowEmpty: ['VM'] }),
    )
    expect(p.actions).toEqual([])
    expect(p.anomalies).toEqual([])
  })

  it('ClonePruneRespectsOwnership: removing the VM manifest prunes the clone, never the still-desired template', () => {
    const tmpl = vm('golden', 9000, {}, 'TemplateVM')
    const live = inventory([liveVm(9000, 'golden', { template: '1' }), liveVm(100, 'web'), liveVm(101, 'app')])
    const p = plan(desired(tmpl, vm('web', 100)), live, policy())
    expect(types(p)).toEqual(['delete VM/pve1/101(app)'])
  })

  it('ANameMatchKeepsAGuestOutOfThePrunes', () => {
    const p = plan(
      desired(vm('web', 100)),
      inventory([liveVm(100, 'web'), guest(150, { name: 'web', tags: 'proxops' })]),
      policy(),
    )
    expect(p.actions).toEqual([])
  })
})

describe('failed reads, locks, nodes', () => {
  it('UnknownGuestIsNeitherCreatedNorPruned: a failed config read makes the object unknown', () => {
    const inv = inventory([], {
      unknownGuests: [
        { type: 'qemu', vmid: 100, node: 'pve1', tags: ['proxops'], unreadable: '500 timeout' },
        { type: 'qemu', vmid: 101, node: 'pve1', tags: ['proxops'], unreadable: '500 timeout' },
      ],
    })
    const p = plan(desired(vm('web', 100)), inv, policy({ allowEmpty: ['VM'] }))
    expect(p.actions).toEqual([])
    expect(p.skips.map((s) => [s.code, s.vmid])).toEqual([
      ['unknown', 100],
      ['unknown', 101],
    ])
  })

  it('LockedGuestIsSkippedWithTheLockName', () => {
    const p = plan(
      desired(vm('web', 100, { memory: 4096 })),
      inventory([liveVm(100, 'web', {}, { lock: 'clone' })]),
      policy(),
    )
    expect(p.actions).toEqual([])
    expect(p.skips[0]).toMatchObject({ code: 'locked', message: expect.stringContaining('locked: clone') })
  })

  it('AllowlistRejectsUnknownNodeBeforeAnyAction', () => {
    expect(() => plan(desired(vm('web', 100, { node: 'pve9' })), inventory(), policy())).toThrow(
      /node "pve9".*allowlist/,
    )
    try {
      plan(desired(vm('web', 100, { node: 'pve9' })), inventory(), policy())
    } catch (e) {
      expect((e as PlanInputError).code).toBe('PLAN_UNKNOWN_NODE')
      expect((e as PlanInputError).subject).toBe('VM/web')
    }
  })

  it('AllowlistEmptyAcceptsAnyNode', () => {
    expect(types(plan(desired(vm('web', 100, { node: 'pve3' })), inventory(), policy({ nodes: [] })))).toEqual([
      'create VM/pve3/100(web)',
    ])
  })

  it('OfflineNodeIsSkippedNotCreatedOn', () => {
    const inv = inventory([], { nodes: [{ node: 'pve1', online: false }] })
    const p = plan(desired(vm('web', 100)), inv, policy())
    expect(p.actions).toEqual([])
    expect(p.skips[0]?.code).toBe('node-offline')
  })

  it('VmidOutsideTheAllowlistBlocksACreateWithoutBeingTouched', () => {
    const p = plan(
      desired(vm('web', 100)),
      inventory([liveVm(100, 'other', {}, { node: 'pve3' })]),
      policy({ nodes: ['pve1', 'pve2'] }),
    )
    expect(p.actions).toEqual([])
    expect(p.anomalies.map((a) => a.code)).toEqual(['node-mismatch'])
    expect(p.skips).toEqual([])
  })

  it('VmidOnAnotherAllowlistedNodeIsMovedBackNotCreated', () => {
    const live = [liveVm(100, 'web', {}, { node: 'pve2' })]
    // without PVE's migration check (GET .../migrate) nothing is decided: not created, not moved
    const unread = plan(desired(vm('web', 100)), inventory(live), policy())
    expect(unread.actions).toEqual([])
    expect(unread.skips.map((s) => s.code)).toEqual(['unknown'])
    const check = {
      running: false,
      allowedNodes: ['pve1'],
      notAllowed: {},
      localDisks: [],
      localResources: [],
      mappedResources: [],
    }
    const p = plan(
      desired(vm('web', 100)),
      inventory(live, { migrationChecks: [{ vmid: 100, node: 'pve2', check: { known: check } }] }),
      policy(),
    )
    expect(p.actions.map((a) => [a.type, a.requests[0]])).toEqual([
      [
        'migrate',
        {
          call: 'migrate',
          node: 'pve2',
          guest: 'qemu',
          vmid: 100,
          target: 'pve1',
          params: { target: 'pve1', online: 1 },
        },
      ],
    ])
    expect(p.anomalies).toEqual([])
  })
})

describe('vmids are cluster-wide (issue 14 item 7)', () => {
  it('VmidHeldByAnUntaggedGuestOfAnotherNameIsAnAnomalyNotATakeover', () => {
    const live = inventory([liveVm(100, 'someone-else', { tags: '' })])
    const p = plan(desired(vm('web', 100)), live, policy())
    expect(p.actions).toEqual([])
    expect(p.anomalies).toMatchObject([
      { code: 'vmid-taken', message: expect.stringContaining('untagged qemu guest "someone-else" on pve1') },
    ])
  })

  it('AnUntaggedGuestWhosePveNameIsDeclaredIsClaimed (what proxops adopt writes)', () => {
    const p = plan(
      desired(vm('web', 100)),
      inventory([liveVm(100, 'web', { tags: '' }, { status: 'stopped' })]),
      policy(),
    )
    expect(p.anomalies).toEqual([])
    expect(types(p)[0]).toBe('update VM/pve1/100(web)')
  })

  it('AnUnnamedUntaggedGuestIsClaimedByTheNameAdoptGivesIt', () => {
    const live = inventory([
      liveVm(100, 'VM 100', { tags: '', name: undefined as unknown as string }, { status: 'stopped' }),
    ])
    expect(plan(desired(vm('vm-100', 100)), live, policy()).anomalies).toEqual([])
    expect(plan(desired(vm('web', 100)), live, policy()).anomalies.map((a) => a.code)).toEqual(['vmid-taken'])
  })

  it('RenumberingReportsTheOldVmid: same name, new vmid -> create, and the old guest is named', () => {
    const p = plan(desired(vm('web', 101)), inventory([liveVm(100, 'web', {}, { status: 'stopped' })]), policy())
    expect(types(p)).toEqual(['create VM/pve1/101(web)'])
    expect(p.anomalies).toMatchObject([
      { code: 'renumbered', message: expect.stringContaining('was vmid 100 on pve1') },
    ])
  })

  it('AVmidHeldOutsideTheAllowlistBlocksTheCreate', () => {
    const live = inventory([liveVm(100, 'other', {}, { node: 'edge9' })])
    const p = plan(desired(vm('web', 100)), live, policy({ nodes: ['pve1'] }))
    expect(p.actions).toEqual([])
    expect(p.anomalies).toMatchObject([{ code: 'node-mismatch', message: expect.stringContaining('edge9') }])
  })

  it('AVmidHeldByAGuestTheTokenCannotSeeBlocksTheCreate (PVE::API2::Cluster nextid sees the full vmlist)', () => {
    const d = desired(vm('web', 100), vm('db', 101))
    const p = plan(
      d,
      inventory([], { heldVmids: [{ vmid: 100 }, { vmid: 101, node: 'edge9', type: 'qemu' }] }),
      policy(),
    )
    expect(p.actions).toEqual([])
    expect(p.anomalies).toMatchObject([
      {
        code: 'vmid-taken',
        address: 'VM/pve1/100(web)',
        message: expect.stringContaining('vmid 100 is held by a guest this token cannot see'),
      },
      { code: 'node-mismatch', message: expect.stringContaining('vmid 101 exists on node edge9') },
    ])
    expect(types(plan(d, inventory(), policy()))).toEqual(['create VM/pve1/100(web)', 'create VM/pve1/101(db)'])
  })
})

describe('templates and clones', () => {
  it('TemplateVMCreateMarksAndIsIdempotent: create stopped + mark in one action; then nothing, no power verbs', async () => {
    const { first, second } = await converge(desired(vm('golden', 9000, {}, 'TemplateVM')))
    expect(first.actions.map((a) => a.requests.map((r) => r.call))).toEqual([['createGuest', 'markTemplate']])
    expect((first.actions[0]?.requests[0] as { params: Record<string, unknown> }).params.start).toBeUndefined()
    expect(second.actions).toEqual([])
  })

  it('VMDesiredButPVEIsTemplateSurfacesAnomaly: no update, start or stop', () => {
    const p = plan(
      desired(vm('web', 100, { memory: 4096 })),
      inventory([liveVm(100, 'web', { template: '1' })]),
      policy(),
    )
    expect(p.actions).toEqual([])
    expect(p.anomalies[0]).toMatchObject({ code: 'kind-mismatch', message: expect.stringContaining('template') })
  })

  it('VMDesiredAgainstLiveNonTemplateMarksIt: TemplateVM over a plain tagged VM -> mark-template, not create', () => {
    const p = plan(desired(vm('golden', 100, {}, 'TemplateVM')), inventory([liveVm(100, 'golden')]), policy())
    expect(types(p)).toEqual(['mark-template TemplateVM/pve1/100(golden)'])
  })

  it('MarkTemplateOfARunningGuestShutsItDownFirst', () => {
    const p = plan(
      desired(vm('golden', 100, {}, 'TemplateVM')),
      inventory([liveVm(100, 'golden', {}, { status: 'running' })]),
      policy(),
    )
    expect(p.actions[0]?.requests.map((r) => r.call)).toEqual(['shutdown', 'markTemplate'])
  })

  it('LXC mirrors: TemplateCT create + mark; LXC against a template CT is an anomaly; TemplateCT over a CT marks it', async () => {
    const d = desired(artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'), lxc('base', 8000, {}, 'TemplateCT'))
    const { first, second } = await converge(d)
    expect(first.actions.map((a) => a.type)).toEqual(['download', 'create'])
    expect(first.actions[1]?.requests.map((r) => r.call)).toEqual(['createGuest', 'markTemplate'])
    expect(second.actions).toEqual([])
    const tmplLive = inventory([liveCt(200, 'ct', { template: '1' })], {
      volumes: [{ node: 'pve1', storage: 'local', volid: 'local:vztmpl/debian-12.tar.zst', content: 'vztmpl' }],
    })
    const a = plan(
      desired(artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'), lxc('ct', 200)),
      tmplLive,
      policy(),
    )
    expect(a.anomalies.map((x) => x.code)).toEqual(['kind-mismatch'])
    const b = plan(
      desired(artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'), lxc('ct', 200, {}, 'TemplateCT')),
      inventory([liveCt(200, 'ct')], { volumes: tmplLive.volumes }),
      policy(),
    )
    expect(types(b)).toEqual(['mark-template TemplateCT/pve1/200(ct)'])
  })

  it('CloneProvisionLifecycle: template level 0, clone level 1 from its vmid; identity keys cleared; started; then converged', async () => {
    const tmpl = vm(
      'golden',
      9000,
      {
        hardware: { 'cloud-init': { enabled: true, storage: 'local-lvm', size: '4M' } },
        'cloud-init-data': {
          'ci-user': 'root',
          'ssh-keys': ['ssh-ed25519 AAAAtemplate t@x'],
          nameservers: ['1.1.1.1'],
        },
      },
      'TemplateVM',
    )
    const clone = vm('web', 100, {
      disks: [],
      clone: 'golden',
      memory: 4096,
      hardware: { 'cloud-init': { enabled: true, storage: 'local-lvm', size: '4M' } },
      'cloud-init-data': { 'ci-user': 'ops', ipconfigs: [{ nic: 0, ip: '10.0.0.5/24', gateway: '10.0.0.1' }] },
    })
    const { first, second, after } = await converge(desired(tmpl, clone))
    expect(first.actions.map((a) => `${a.level} ${a.type} ${a.kind}`)).toEqual(['0 create TemplateVM', '1 clone VM'])
    const c = first.actions[1]
    expect(c?.dependsOn).toEqual([first.actions[0]?.id])
    expect(c?.requests.map((r) => r.call)).toEqual(['cloneGuest', 'updateConfig', 'start'])
    expect(c?.requests[0]).toMatchObject({ vmid: 9000, params: { newid: 100, full: 1, name: 'web' } })
    const upd = c?.requests[1] as { params: Record<string, unknown>; onlyIfAbsent?: string[] }
    expect(upd.params.delete).toBe('sshkeys,cipassword,cicustom,nameserver,searchdomain')
    expect(upd.params.ciuser).toBe('ops')
    expect(upd.params.scsi0).toBeUndefined()
    expect(upd.onlyIfAbsent).toEqual(['ide2'])
    const set = Object.keys(upd.params).filter((k) => k !== 'delete')
    for (const k of String(upd.params.delete).split(',')) expect(set).not.toContain(k)
    const cl = after.guests.find((g) => g.vmid === 100)
    expect(cl?.template).toBe(false)
    expect(cl?.config.sshkeys).toBeUndefined()
    expect(cl?.tags).toEqual(['proxops'])
    expect(second.actions).toEqual([])
  })

  it('CloneDriftCorrectsWithoutReclone: an out-of-band memory change is one update, never a create', async () => {
    const tmpl = vm('golden', 9000, {}, 'TemplateVM')
    const clone = vm('web', 100, { disks: [], clone: 'golden', state: 'stopped' })
    const { after } = await converge(desired(tmpl, clone))
    const drifted = {
      ...after,
      guests: after.guests.map((g) => (g.vmid === 100 ? { ...g, config: { ...g.config, memory: '1024' } } : g)),
    }
    const p = plan(desired(tmpl, clone), drifted, policy())
    expect(types(p)).toEqual(['update VM/pve1/100(web)'])
    expect(p.actions[0]?.diffs).toEqual([{ field: 'spec.memory', key: 'memory', before: '1024', after: '2048' }])
  })

  it('CloneKeepsInheritedSshKeysWhenTheManifestLeavesThemToPVE (ssh-keys: ["*"])', async () => {
    const tmpl = vm(
      'golden',
      9000,
      { 'cloud-init-data': { 'ssh-keys': ['ssh-ed25519 AAAAtemplate t@x'] } },
      'TemplateVM',
    )
    const clone = vm('web', 100, {
      disks: [],
      clone: 'golden',
      state: 'stopped',
      'cloud-init-data': { 'ssh-keys': ['*'] },
    })
    const { first, after, second } = await converge(desired(tmpl, clone))
    const upd = first.actions[1]?.requests[1] as { params: Record<string, unknown> }
    expect(String(upd.params.delete)).not.toContain('sshkeys')
    expect(after.guests.find((g) => g.vmid === 100)?.config.sshkeys).toBeDefined()
    expect(second.actions).toEqual([])
  })

  it('CloneAddsTheEfiDiskAndTpmItsTemplateLacks in the post-clone write (only where the clone has none), then converged without a restart', async () => {
    const efi = { storage: 'local-lvm', size: 4 * MiB, template: '4m' as const, 'secure-boot': 'enabled' as const }
    const clone = vm('web', 100, {
      disks: [],
      clone: 'golden',
      hardware: { bios: 'ovmf', 'efi-disk': efi, tpm: { version: 'v2.0' } },
    })
    const { first, after, second } = await converge(desired(vm('golden', 9000, {}, 'TemplateVM'), clone))
    const upd = first.actions[1]?.requests[1] as { params: Record<string, unknown>; onlyIfAbsent?: string[] }
    expect([upd.params.efidisk0, upd.params.tpmstate0]).toEqual([
      'local-lvm:1,efitype=4m,pre-enrolled-keys=1',
      'local-lvm:1,version=v2.0',
    ])
    expect(upd.onlyIfAbsent).toEqual(['efidisk0', 'tpmstate0'])
    const cfg = after.guests.find((g) => g.vmid === 100)?.config
    expect([cfg?.efidisk0, cfg?.tpmstate0]).toEqual([
      'local-lvm:vm-100-disk-1,efitype=4m,pre-enrolled-keys=1,size=4M',
      'local-lvm:vm-100-disk-2,size=4M,version=v2.0',
    ])
    expect(second.actions).toEqual([])
    expect(second.anomalies).toEqual([])
  })

  it("CloneInheritsItsTemplate'sNicsAndReplacesAnEmptyCdWithItsCloudInitDrive: one apply, no live-only slot", async () => {
    const tmpl = vm('golden', 9000, { hardware: { cdrom: { iso: 'none', media: 'cdrom' } } }, 'TemplateVM')
    const clone = vm('web', 100, {
      disks: [],
      networks: [],
      clone: 'golden',
      hardware: { 'cloud-init': { enabled: true, storage: 'local-lvm', size: '4M' } },
    })
    const { after, second } = await converge(desired(tmpl, clone))
    const cfg = after.guests.find((g) => g.vmid === 100)?.config
    // qemu-server's clone_vm copies net0 and the empty CD drive; the post-clone write puts the cloud-init drive
    // on the empty ide2, as the next plan would
    expect(cfg?.net0).toMatch(/^virtio=/)
    expect(cfg?.ide2).toBe('local-lvm:vm-100-cloudinit,media=cdrom')
    expect(second.actions).toEqual([])
    expect(second.anomalies).toEqual([])
  })

  it('CloneFromItselfIsRefused', () => {
    const p = plan(
      desired(vm('golden', 100, {}, 'TemplateVM'), vm('web', 101, { disks: [], clone: 'golden' })),
      inventory([liveVm(100, 'golden', { template: '1' })]),
      policy(),
    )
    expect(types(p)).toEqual(['clone VM/pve1/101(web)'])
    // a clone of its own vmid is one PVE guest declared twice: refused before planning, as validate refuses it
    // (duplicate-vmid), by the schema's identity index
    const q = () =>
      plan(
        {
          cluster: 'c',
          manifests: [vm('golden', 100, {}, 'TemplateVM'), vm('web', 100, { disks: [], clone: 'golden' })],
        },
        inventory(),
        policy(),
      )
    expect(q).toThrow(PlanInputError)
    expect(q).toThrow('declares PVE id 100, as TemplateVM/golden does')
  })
})

describe('LXC clones from a TemplateCT (pve-container clone_vm)', () => {
  const deb = artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst', ['pve1'])
  const tmpl = lxc(
    'ct-golden',
    9100,
    { root: { storage: 'local-lvm', size: 4 * GiB }, options: { unprivileged: true } },
    'TemplateCT',
  )
  const { template: _t, ...noTemplate } = lxc('app', 120).spec
  const app = (over: Partial<ReturnType<typeof lxc>['spec']> = {}) =>
    lxc('app', 120, { ...noTemplate, clone: 'ct-golden', memory: 1024, options: { unprivileged: true }, ...over })

  it('LxcCloneProvisionLifecycle: full clone onto root.storage with the hostname, grown to root.size, configured, started; then converged', async () => {
    const d = desired(deb, tmpl, app({ root: { storage: 'local-zfs', size: 16 * GiB } }))
    const { first, after, second } = await converge(d)
    expect(first.actions.map((a) => `${a.level} ${a.type} ${a.kind}`)).toEqual([
      '0 download CTTemplate',
      '1 create TemplateCT',
      '2 clone LXC',
    ])
    const c = first.actions[2]
    expect(c?.reason).toBe('LXC/app: not on PVE; will full-clone from TemplateCT ct-golden (vmid 9100)')
    expect(c?.requests.map((r) => r.call)).toEqual(['cloneGuest', 'resizeDisk', 'updateConfig', 'start'])
    expect(c?.requests[0]).toEqual({
      call: 'cloneGuest',
      node: 'pve1',
      guest: 'lxc',
      vmid: 9100,
      params: { newid: 120, full: 1, hostname: 'app', storage: 'local-zfs' },
    })
    expect(c?.requests[1]).toMatchObject({ disk: 'rootfs', size: '16G' })
    const upd = c?.requests[2] as { params: Record<string, unknown> }
    // neither the inherited volume nor the create-only unprivileged flag is written after the clone
    expect([upd.params.rootfs, upd.params.unprivileged, upd.params.ostemplate]).toEqual([
      undefined,
      undefined,
      undefined,
    ])
    expect(upd.params.memory).toBe(1024)
    expect(c?.diffs.find((x) => x.key === 'rootfs')).toEqual({
      field: 'spec.root',
      key: 'rootfs',
      before: '4G',
      after: '16G',
    })
    const ct = after.guests.find((g) => g.vmid === 120)
    // zfspool names a container's volume subvol-<vmid>-disk-N (PVE::Storage::ZFSPoolPlugin alloc_image)
    expect(ct?.config.rootfs).toBe('local-zfs:subvol-120-disk-0,size=16G')
    expect(second.actions).toEqual([])
    expect(second.anomalies).toEqual([])
  })

  it("LxcCloneOfTheSameSize: no resize; the template's mount points are inherited, not reported as live-only", async () => {
    const withMp = lxc(
      'ct-golden',
      9100,
      {
        root: { storage: 'local-lvm', size: 4 * GiB },
        'mount-points': [{ storage: 'local-lvm', size: GiB, 'mount-point': '/data', slot: 'mp0' }],
      },
      'TemplateCT',
    )
    const d = desired(deb, withMp, app({ root: { storage: 'local-lvm', size: 4 * GiB }, options: {} }))
    const { first, after, second } = await converge(d)
    expect(first.actions[2]?.requests.map((r) => r.call)).toEqual(['cloneGuest', 'updateConfig', 'start'])
    expect(after.guests.find((g) => g.vmid === 120)?.config.mp0).toMatch(/^local-lvm:vm-120-disk-\d,/)
    expect(second.actions).toEqual([])
    expect(second.anomalies).toEqual([])
  })

  it('LxcCloneDriftCorrectsWithoutReclone; a clone whose TemplateCT is not declared is refused as input', async () => {
    const d = desired(deb, tmpl, app())
    const { after } = await converge(d)
    const drifted = {
      ...after,
      guests: after.guests.map((g) => (g.vmid === 120 ? { ...g, config: { ...g.config, memory: '256' } } : g)),
    }
    const p = plan(d, drifted, policy())
    expect(types(p)).toEqual(['update LXC/pve1/120(app)'])
    expect(() => plan(desired(deb, app()), inventory(), policy())).toThrow(PlanInputError)
  })
})

describe('artifacts', () => {
  const iso = artifact('ISO', 'debian', 'debian-13.iso', ['pve1', 'pve2'])

  it('CTTMultiNodePlacesPerNode / ISOAbsentDownloads: one download per missing node', () => {
    const p = plan(desired(iso), inventory(), policy())
    expect(types(p)).toEqual(['download ISO/pve1/local/debian-13.iso', 'download ISO/pve2/local/debian-13.iso'])
    expect(p.actions[0]?.requests[0]).toEqual({
      call: 'downloadUrl',
      node: 'pve1',
      storage: 'local',
      params: { url: 'https://example.org/debian-13.iso', filename: 'debian-13.iso', content: 'iso' },
    })
  })

  it('PlanArtifactMissingOnSomeNodes / ISOAlreadyPresentNoop', () => {
    const inv = inventory([], {
      volumes: [{ node: 'pve1', storage: 'local', volid: 'local:iso/debian-13.iso', content: 'iso' }],
    })
    expect(types(plan(desired(iso), inv, policy()))).toEqual(['download ISO/pve2/local/debian-13.iso'])
  })

  it('PlanArtifactUnreadableFailClosed: an unreadable listing is a skip, never a download', () => {
    const inv = inventory([], {
      unreadableStorages: [
        { node: 'pve1', storage: 'local', unreadable: '500' },
        { node: 'pve2', storage: 'local', unreadable: '500' },
      ],
    })
    const p = plan(desired(iso), inv, policy())
    expect(p.actions).toEqual([])
    expect(p.skips.map((s) => s.code)).toEqual(['storage-unreadable', 'storage-unreadable'])
  })

  it('ChecksumAndAlgorithmAreSent', () => {
    const a = artifact('DiskImage', 'img', 'debian.qcow2')
    const withSum = { ...a, spec: { ...a.spec, checksum: { algorithm: 'sha256' as const, value: 'abc123' } } }
    const p = plan(desired(withSum), inventory(), policy())
    expect(p.actions[0]?.requests[0]).toMatchObject({
      params: { checksum: 'abc123', 'checksum-algorithm': 'sha256', content: 'import' },
    })
  })

  it('VMRequiresDepsPlannerOrdersISOFirst: the ISO download precedes the VM create, which depends on it', () => {
    const d = desired(vm('web', 100, { hardware: { cdrom: { iso: 'debian', media: 'cdrom' } } }), iso)
    const p = plan(d, inventory(), policy())
    expect(types(p)).toEqual([
      'download ISO/pve1/local/debian-13.iso',
      'download ISO/pve2/local/debian-13.iso',
      'create VM/pve1/100(web)',
    ])
    expect(p.actions[2]?.dependsOn).toEqual(['ISO/pve1/local/debian-13.iso#download'])
    expect(p.actions[2]?.requires).toEqual(['ISO/pve1/local/debian-13.iso'])
    expect((p.actions[2]?.requests[0] as { params: Record<string, unknown> }).params.ide2).toBe(
      'local:iso/debian-13.iso,media=cdrom',
    )
  })

  it('DeferralWhenPrerequisiteFails: the dependant lists the prerequisite even when it needs no action', () => {
    const inv = inventory([], {
      volumes: [{ node: 'pve1', storage: 'local', volid: 'local:vztmpl/debian-12.tar.zst', content: 'vztmpl' }],
    })
    const p = plan(desired(artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'), lxc('ct', 200)), inv, policy())
    expect(types(p)).toEqual(['create LXC/pve1/200(ct)'])
    expect(p.actions[0]?.dependsOn).toEqual([])
    expect(p.actions[0]?.requires).toEqual(['CTTemplate/pve1/local/debian-12.tar.zst'])
  })

  it('ImageSeededDiskUsesImportFromWithSizeZero', async () => {
    const d = desired(
      artifact('DiskImage', 'img', 'debian.qcow2'),
      vm('web', 100, { disks: [{ storage: 'local-lvm', image: 'img', interface: 'scsi0', iothread: true }] }),
    )
    const { first, second } = await converge(d)
    expect((first.actions[1]?.requests[0] as { params: Record<string, unknown> }).params.scsi0).toBe(
      'local-lvm:0,import-from=local:import/debian.qcow2,iothread=1',
    )
    expect(second.actions).toEqual([])
  })
})

describe('power and disruption', () => {
  it('StartsAStoppedGuestDesiredStarted and stops (gracefully) a running one desired stopped', () => {
    expect(
      types(plan(desired(vm('web', 100)), inventory([liveVm(100, 'web', {}, { status: 'stopped' })]), policy())),
    ).toEqual(['start VM/pve1/100(web)'])
    const p = plan(
      desired(vm('web', 100, { state: 'stopped' })),
      inventory([liveVm(100, 'web', {}, { status: 'running' })]),
      policy(),
    )
    expect(types(p)).toEqual(['stop VM/pve1/100(web)'])
    expect(p.actions[0]?.requests).toEqual([
      { call: 'shutdown', node: 'pve1', guest: 'qemu', vmid: 100, timeoutSeconds: 120, forceStop: false },
    ])
  })

  it('ARunningGuestDesiredStoppedIsWrittenThenShutDownUnderEveryPolicy (nothing held back, no separate stop)', () => {
    const m = vm('web', 100, {
      state: 'stopped',
      memory: 4096,
      networks: [{ model: 'virtio', bridge: 'vmbr1', firewall: false, slot: 'net0' }],
    })
    for (const disruption of ['allow', 'none'] as const) {
      const p = plan(desired(m), inventory([liveVm(100, 'web', {}, { status: 'running' })]), policy({ disruption }))
      expect(types(p)).toEqual(['shutdown-then-update VM/pve1/100(web)'])
      // the write first (held pending on the running guest): PVE's shutdown applies it (vm_stop_cleanup)
      expect(p.actions[0]?.requests.map((r) => r.call)).toEqual(['updateConfig', 'shutdown'])
      expect(p.skips).toEqual([])
      expect(p.pending).toEqual([])
    }
  })

  it('APowerActionNeverDependsOnTheGuestsWrite: a failed write or resize does not defer the start or the stop', () => {
    const started = plan(
      desired(vm('web', 100, { memory: 4096 })),
      inventory([liveVm(100, 'web', {}, { status: 'stopped' })]),
      policy(),
    )
    expect(started.actions.map((a) => [a.type, a.dependsOn])).toEqual([
      ['update', []],
      ['start', []],
    ])
    const stopped = plan(
      desired(
        vm('web', 100, {
          state: 'stopped',
          disks: [{ storage: 'local-lvm', size: 64 * GiB, interface: 'scsi0', iothread: false }],
        }),
      ),
      inventory([liveVm(100, 'web', {}, { status: 'running' })]),
      policy(),
    )
    expect(stopped.actions.map((a) => [a.type, a.dependsOn])).toEqual([
      ['resize', []],
      ['stop', []],
    ])
  })

  it('APausedGuestIsSkipped (PVE can neither start nor shut it down)', () => {
    const p = plan(
      desired(vm('web', 100, { memory: 4096 })),
      inventory([liveVm(100, 'web', {}, { status: 'paused' })]),
      policy(),
    )
    expect(p.actions).toEqual([])
    expect(p.skips.map((s) => s.code)).toEqual(['paused'])
  })

  it('a guest in another QMP state is skipped with that state named (14.10)', () => {
    const p = plan(
      desired(vm('web', 100, { memory: 4096 })),
      inventory([liveVm(100, 'web', {}, { status: 'paused', qmpstatus: 'io-error' })]),
      policy(),
    )
    expect(p.actions).toEqual([])
    expect(p.skips.map((s) => [s.code, s.message])).toEqual([
      ['paused', 'QMP status io-error on PVE; resume or stop it by hand; not planned this cycle'],
    ])
  })

  it('UnknownPowerDoesNothing', () => {
    expect(
      plan(desired(vm('web', 100)), inventory([liveVm(100, 'web', {}, { status: 'unknown' })]), policy()).actions,
    ).toEqual([])
  })

  it('RebootClassChangeOnARunningGuestIsWriteShutdownStart with the planned digest (the write is refused before any shutdown)', () => {
    const p = plan(
      desired(vm('web', 100, { memory: 4096 })),
      inventory([liveVm(100, 'web', {}, { status: 'running' })]),
      policy(),
    )
    expect(types(p)).toEqual(['shutdown-then-update VM/pve1/100(web)'])
    const a = p.actions[0]
    expect(a?.disruption).toBe('reboot')
    expect(a?.requests.map((r) => r.call)).toEqual(['updateConfig', 'shutdown', 'start'])
    expect(a?.requests[0]).toMatchObject({ digest: 'd100', params: { memory: 4096 } })
  })

  it('DisruptionNoneLeavesRebootClassChangesPendingAndReportsThem', () => {
    const p = plan(
      desired(vm('web', 100, { memory: 4096 })),
      inventory([liveVm(100, 'web', {}, { status: 'running' })]),
      policy({ disruption: 'none' }),
    )
    expect(types(p)).toEqual(['update VM/pve1/100(web)'])
    expect(p.actions[0]?.requests.map((r) => r.call)).toEqual(['updateConfig'])
    expect(p.pending.map((x) => x.keys)).toEqual([['memory']])
  })

  it('DisruptionAnnotationOverridesTheClusterPolicy', () => {
    const m = vm('web', 100, { memory: 4096 })
    const annotated = { ...m, metadata: { ...m.metadata, annotations: { 'proxops/disruption': 'none' } } }
    const p = plan(
      desired(annotated),
      inventory([liveVm(100, 'web', {}, { status: 'running' })]),
      policy({ disruption: 'allow' }),
    )
    expect(types(p)).toEqual(['update VM/pve1/100(web)'])
  })

  it('HotplugChangesAreWrittenLiveAndHeldBackUnderNone', () => {
    const m = vm('web', 100, { networks: [{ model: 'virtio', bridge: 'vmbr1', firewall: false, slot: 'net0' }] })
    const live = inventory([liveVm(100, 'web', {}, { status: 'running' })])
    const p = plan(desired(m), live, policy())
    expect(p.actions[0]).toMatchObject({ type: 'update', disruption: 'hotplug' })
    expect((p.actions[0]?.requests[0] as { params: Record<string, unknown> }).params.net0).toBe(
      'virtio=BC:24:11:00:00:01,bridge=vmbr1',
    )
    const q = plan(desired(m), live, policy({ disruption: 'none' }))
    expect(q.actions).toEqual([])
    expect(q.skips[0]?.code).toBe('disruption')
  })

  it('vmconfig_update_net: a bridge, VLAN, firewall or rate change is live without network hotplug; a model change is not', () => {
    const live = inventory([liveVm(100, 'web', { hotplug: 'disk' }, { status: 'running' })])
    const relink = vm('web', 100, {
      networks: [{ model: 'virtio', bridge: 'vmbr1', vlan: 5, 'rate-limit': 10, firewall: true, slot: 'net0' }],
    })
    const p = plan(desired(relink), live, policy())
    expect(p.actions[0]).toMatchObject({ type: 'update', disruption: 'hotplug' })
    expect(p.actions[0]?.requests.map((r) => r.call)).toEqual(['updateConfig'])
    const model = vm('web', 100, { networks: [{ model: 'e1000', bridge: 'vmbr0', firewall: false, slot: 'net0' }] })
    expect(plan(desired(model), live, policy()).actions[0]).toMatchObject({
      type: 'shutdown-then-update',
      disruption: 'reboot',
    })
  })

  it('growing a disk of a running guest is hotplug: held back under disruption none, made under hotplug', () => {
    const live = inventory([liveVm(100, 'web', {}, { status: 'running' })])
    const bigger = vm('web', 100, {
      disks: [{ storage: 'local-lvm', size: 40 * GiB, interface: 'scsi0', iothread: false }],
    })
    const none = plan(desired(bigger), live, policy({ disruption: 'none' }))
    expect(none.actions).toEqual([])
    expect(none.skips.map((x) => [x.code, x.message])).toEqual([
      [
        'disruption',
        `growing scsi0 would change a running guest (hotplug) and disruption is none; not resized this cycle (${DISRUPTION_OVERRIDE})`,
      ],
    ])
    const hotplug = plan(desired(bigger), live, policy({ disruption: 'hotplug' }))
    expect(types(hotplug)).toEqual(['resize VM/pve1/100(web)'])
    expect(hotplug.actions[0]?.requests).toMatchObject([{ call: 'resizeDisk', disk: 'scsi0', size: '40G' }])
  })

  it('a fractional NIC rate is compared as a number: rate=12.50 is the declared 12.5, rate=12.6 is a change', () => {
    const declared = vm('web', 100, {
      networks: [{ model: 'virtio', bridge: 'vmbr0', 'rate-limit': 12.5, firewall: false, slot: 'net0' }],
    })
    const live = (rate: string) =>
      inventory([liveVm(100, 'web', { net0: `virtio=BC:24:11:00:00:01,bridge=vmbr0,rate=${rate}` })])
    expect(plan(desired(declared), live('12.50'), policy()).actions).toEqual([])
    const p = plan(desired(declared), live('12.6'), policy())
    expect((p.actions[0]?.requests[0] as { params: Record<string, unknown> }).params.net0).toBe(
      'virtio=BC:24:11:00:00:01,bridge=vmbr0,rate=12.5',
    )
  })

  it('vmconfig_update_disk change_medium: a CD medium change on a running VM is live, held back under none', () => {
    // ejecting the medium: the drive stays a CD drive
    const cd = { cdrom: { iso: 'none', media: 'cdrom' as const } }
    const live = inventory([
      liveVm(100, 'web', { hotplug: '0', ide2: 'local:iso/debian.iso,media=cdrom' }, { status: 'running' }),
    ])
    const p = plan(desired(vm('web', 100, { hardware: cd })), live, policy())
    expect(p.actions[0]).toMatchObject({ type: 'update', disruption: 'hotplug' })
    expect((p.actions[0]?.requests[0] as { params: Record<string, unknown> }).params.ide2).toBe('none,media=cdrom')
    const q = plan(desired(vm('web', 100, { hardware: cd })), live, policy({ disruption: 'none' }))
    expect(q.actions).toEqual([])
    expect(q.skips[0]?.code).toBe('disruption')
  })

  it('MarkTemplateOfARunningGuestObeysDisruptionNone', () => {
    const live = inventory([liveVm(100, 'golden', {}, { status: 'running' })])
    const q = plan(desired(vm('golden', 100, {}, 'TemplateVM')), live, policy({ disruption: 'none' }))
    expect(q.actions).toEqual([])
    expect(q.skips).toMatchObject([
      { code: 'disruption', message: expect.stringContaining('mark-template needs a shutdown') },
    ])
    const stopped = inventory([liveVm(100, 'golden', {}, { status: 'stopped' })])
    expect(types(plan(desired(vm('golden', 100, {}, 'TemplateVM')), stopped, policy({ disruption: 'none' })))).toEqual([
      'mark-template TemplateVM/pve1/100(golden)',
    ])
  })

  it('OptionsOnARunningGuestAreDisruptionNone', () => {
    const p = plan(
      desired(vm('web', 100, { tags: ['web'] })),
      inventory([liveVm(100, 'web', {}, { status: 'running' })]),
      policy(),
    )
    expect(p.actions[0]).toMatchObject({ type: 'update', disruption: 'none' })
  })

  it('PendingOwnedValuesAreRestartedUnderAllowAndReportedUnderNone', () => {
    const g = liveVm(100, 'web', { memory: '1024' }, { status: 'running', pending: { memory: '2048' } })
    expect(types(plan(desired(vm('web', 100)), inventory([g]), policy()))).toEqual(['restart VM/pve1/100(web)'])
    const q = plan(desired(vm('web', 100)), inventory([g]), policy({ disruption: 'none' }))
    expect(q.actions).toEqual([])
    expect(q.pending[0]?.keys).toEqual(['memory'])
  })
})

describe('one PVE object, one manifest (the schema identity index validate reports from)', () => {
  const job = (name: string, id: string) =>
    manifest({
      kind: 'BackupJob',
      metadata: { name },
      spec: { id, schedule: 'daily', storage: 'local', selection: { all: true } },
    })
  const pool = (name: string, id: string) => manifest({ kind: 'Pool', metadata: { name }, spec: { id } })
  it.each([
    [
      'BackupJobs',
      job('nightly', 'nightly'),
      job('weekly', 'nightly'),
      'BackupJob/weekly',
      'PVE backup job id "nightly"',
    ],
    ['Pools', pool('web', 'web'), pool('other', 'web'), 'Pool/other', 'PVE pool id "web"'],
  ])('two %s of one PVE id are refused before planning, naming both', (_, first, second, subject, label) => {
    try {
      plan({ cluster: 'c', manifests: [first, second] }, inventory(), policy())
      expect.unreachable()
    } catch (e) {
      expect(e).toBeInstanceOf(PlanInputError)
      expect((e as PlanInputError).code).toBe('PLAN_DUPLICATE')
      expect((e as PlanInputError).subject).toBe(subject)
      expect((e as Error).message).toContain(`declares ${label}, as ${first.kind}/${first.metadata.name} does`)
    }
  })
})
