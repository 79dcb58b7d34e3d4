/**
 * The guests' prune candidates (kinds/guest/prune.ts), pure: what is never a candidate and what the operator is
 * told about it, the linked-clone detection that holds back a template whose clones still use its base volumes
 * (pve-storage `volume_is_base_and_used`: a clone's volume id names the base it was cloned from), and the delete
 * a candidate becomes. Part of the tests `pnpm mutate` runs (docs/mutation-testing.md).
 */
import { describe, expect, test } from 'vitest'
import type { LiveGuest } from '../../inventory.js'
import { DEFAULT_POLICY, type GuestKind, type Policy } from '../../plan-types.js'
import type { Draft } from '../../kit/draft.js'
import type { DestroyEffects } from './destroy-effects.js'
import { guestPrunes, liveKind } from './prune.js'

// not the shared fixtures: their imports would cost every mutant's run seconds
const policy = (over: Partial<Policy> = {}): Policy => ({ ...DEFAULT_POLICY, ...over })
const guest = (vmid: number, config: Record<string, string>, over: Partial<LiveGuest> = {}): LiveGuest => ({
  type: 'qemu',
  vmid,
  node: 'pve1',
  name: config.name,
  template: config.template === '1',
  status: 'stopped',
  tags: (config.tags ?? '').split(';').filter((t) => t !== ''),
  digest: `d${vmid}`,
  config,
  pending: {},
  pendingDeletes: [],
  ...over,
})

const NONE: DestroyEffects = { notes: [], ownedJobDeletes: [], refusals: [] }
const pol = policy({ clusterEntry: 'home' })
const owned = 'proxops;proxops.home'

const run = (
  guests: LiveGuest[],
  opts: {
    matched?: number[]
    offline?: string[]
    effects?: (g: LiveGuest) => DestroyEffects
    chosen?: Draft[]
    desired?: [GuestKind, number][]
  } = {},
) => {
  const group = guestPrunes(
    [...guests].sort((a, b) => a.vmid - b.vmid),
    new Set(opts.matched ?? []),
    new Map(opts.desired ?? []),
    pol,
    new Set(opts.offline ?? []),
    opts.effects ?? (() => NONE),
  )
  return { group, ...group.candidates(opts.chosen ?? []) }
}

const tmpl = (vmid: number, config: Record<string, string>, over: Partial<LiveGuest> = {}) =>
  guest(vmid, { name: `t${vmid}`, template: '1', tags: owned, ...config }, over)
const clone = (vmid: number, config: Record<string, string>, over: Partial<LiveGuest> = {}) =>
  guest(vmid, { name: `c${vmid}`, tags: owned, ...config }, over)

const candidateIds = (r: ReturnType<typeof run>) => r.candidates.map((c) => c.draft.id)

describe('which live guests become candidates', () => {
  test('liveKind names the four guest kinds', () => {
    expect(
      [
        { type: 'qemu', template: false },
        { type: 'qemu', template: true },
        { type: 'lxc', template: false },
        { type: 'lxc', template: true },
      ].map((g) => liveKind(g as Pick<LiveGuest, 'type' | 'template'>)),
    ).toEqual(['VM', 'TemplateVM', 'LXC', 'TemplateCT'])
  })

  test('the group counts the owned guests per kind, and carries the desired counts and the owner for the guards', () => {
    const r = run(
      [
        clone(101, {}),
        clone(102, {}, { type: 'lxc' }),
        clone(103, {}, { type: 'lxc' }),
        clone(104, { tags: 'proxops;proxops.work' }),
        clone(105, { tags: 'proxops' }),
        clone(106, { tags: 'other' }),
      ],
      { desired: [['VM', 2]] },
    )
    expect(r.group.guarded).toBe(true)
    expect(r.group.owner).toBe('proxops-tagged')
    expect(r.group.noun).toBe('live object(s)')
    expect([...r.group.owned]).toEqual([
      ['VM', 1],
      ['LXC', 2],
    ])
    expect([...r.group.desired]).toEqual([['VM', 2]])
  })

  test('what is never a candidate is reported with the reason an operator reads', () => {
    const r = run(
      [
        clone(101, {}),
        clone(102, { tags: 'other' }),
        clone(103, { tags: 'proxops;proxops.lab;proxops.work' }),
        clone(104, { tags: 'proxops' }),
        clone(105, {}, { node: 'pve2' }),
        clone(106, {}, { lock: 'backup' }),
        clone(107, {}, { lock: '' }),
        clone(108, { protection: '1' }),
        clone(109, { protection: '0' }),
        clone(110, {}),
      ],
      { matched: [110], offline: ['pve2'] },
    )
    expect(candidateIds(r)).toEqual([
      'VM/pve1/101(c101)#delete',
      'VM/pve1/107(c107)#delete',
      'VM/pve1/109(c109)#delete',
    ])
    expect(r.skips).toEqual([
      {
        code: 'untagged',
        address: 'VM/pve1/102(c102)',
        kind: 'VM',
        node: 'pve1',
        vmid: 102,
        message: 'live object without proxops tag; never touched',
      },
      {
        code: 'owned-elsewhere',
        address: 'VM/pve1/103(c103)',
        kind: 'VM',
        node: 'pve1',
        vmid: 103,
        message: 'owned by cluster entry lab, work; never touched by this entry',
      },
      {
        code: 'unmarked',
        address: 'VM/pve1/104(c104)',
        kind: 'VM',
        node: 'pve1',
        vmid: 104,
        message:
          "tagged proxops without a cluster-entry marker and absent in git; not pruned (it may be another entry's): add the tag proxops.home to let this entry prune it, or delete it by hand",
      },
      {
        code: 'node-offline',
        address: 'VM/pve2/105(c105)',
        kind: 'VM',
        node: 'pve2',
        vmid: 105,
        message: 'node pve2 is offline; prune not planned this cycle',
      },
      {
        code: 'locked',
        address: 'VM/pve1/106(c106)',
        kind: 'VM',
        node: 'pve1',
        vmid: 106,
        message: 'locked: backup; prune not planned this cycle',
      },
    ])
    expect(r.anomalies).toEqual([
      {
        code: 'protected',
        address: 'VM/pve1/108(c108)',
        kind: 'VM',
        field: 'protection',
        message:
          'VM/pve1/108(c108) is tagged proxops and absent in git but PVE protection is on; proxops will not delete it (turn protection off to allow the prune)',
      },
    ])
  })

  test('candidates come by node, then vmid, in whatever order the guests were read', () => {
    const guests = [
      clone(300, {}),
      clone(101, {}, { node: 'pve2' }),
      clone(200, {}),
      clone(103, {}, { node: 'pve2' }),
      clone(102, {}, { node: 'pve3' }),
      clone(104, {}),
    ]
    const group = guestPrunes(guests, new Set(), new Map(), pol, new Set(), () => NONE)
    expect(group.candidates([]).candidates.map((c) => `${c.draft.node}/${c.draft.vmid}`)).toEqual([
      'pve1/104',
      'pve1/200',
      'pve1/300',
      'pve2/101',
      'pve2/103',
      'pve3/102',
    ])
  })
})

describe('linked clones hold back their template', () => {
  const anomaly = (r: ReturnType<typeof run>) => r.anomalies.map((a) => [a.code, a.address, a.message])

  test('a clone whose volume names the base keeps the template; the message names every clone', () => {
    const r = run([
      tmpl(9000, { scsi0: 'ceph:base-9000-disk-0,size=8G', ide2: 'ceph:vm-9000-cloudinit,media=cdrom' }),
      clone(101, { scsi0: 'ceph:base-9000-disk-0/vm-101-disk-0,size=8G' }, { template: false }),
      clone(102, { rootfs: 'ceph:base-9000-disk-0/vm-102-disk-0,size=8G' }, { type: 'lxc' }),
      clone(103, { scsi0: 'ceph:vm-103-disk-0,size=8G' }),
    ])
    expect(anomaly(r)).toEqual([
      [
        'template-linked-clones',
        'TemplateVM/pve1/9000(t9000)',
        'TemplateVM/pve1/9000(t9000) is tagged proxops and absent in git but linked clones still use its base volumes (qemu 101, lxc 102); PVE refuses to destroy it, so proxops will not try (destroy or fully clone them first)',
      ],
    ])
    expect(r.anomalies[0]?.kind).toBe('TemplateVM')
    // the clones themselves, and the unrelated guest, are candidates
    expect(r.candidates.map((c) => c.draft.vmid)).toEqual([101, 102, 103])
  })

  test('one base in use is enough: a template with two base disks is held when a clone uses either', () => {
    const r = run([
      tmpl(9000, { scsi0: 'ceph:base-9000-disk-0,size=8G', scsi1: 'ceph:base-9000-disk-1,size=4G' }),
      clone(101, { scsi0: 'ceph:base-9000-disk-1/vm-101-disk-0,size=4G' }),
    ])
    expect(anomaly(r).map(([code]) => code)).toEqual(['template-linked-clones'])
    expect(candidateIds(r)).toEqual(['VM/pve1/101(c101)#delete'])
  })

  test('the volume id is read from the leading token or from file= and volume=, on directory storages too', () => {
    for (const [template, user] of [
      [{ scsi0: 'file=ceph:base-9000-disk-0,size=8G' }, { scsi0: 'ceph:base-9000-disk-0/vm-101-disk-0' }],
      [
        { scsi0: 'size=8G,file=ceph:base-9000-disk-0' },
        { scsi0: 'cache=none,file=ceph:base-9000-disk-0/vm-101-disk-0' },
      ],
      [
        { rootfs: 'volume=zfs:basevol-9000-disk-0,size=8G' },
        { mp0: 'volume=zfs:basevol-9000-disk-0/subvol-101-disk-0,mp=/d' },
      ],
      [
        { scsi0: 'nas:9000/base-9000-disk-0.qcow2,size=8G' },
        { scsi0: 'nas:9000/base-9000-disk-0.qcow2/101/vm-101-disk-0.qcow2' },
      ],
    ] as const) {
      const r = run([tmpl(9000, template), clone(101, user)])
      expect(
        anomaly(r).map(([code]) => code),
        JSON.stringify(template),
      ).toEqual(['template-linked-clones'])
    }
  })

  test('only base volumes count: a template disk that is not a base, or a base of another guest, holds nothing', () => {
    for (const [template, user] of [
      // a disk the template conversion did not rename, and a key that is not a volume
      [{ scsi1: 'nas:9000/vm-9000-disk-1.qcow2' }, { scsi0: 'nas:9000/vm-9000-disk-1.qcow2/101/vm-101-disk-0.qcow2' }],
      [{ scsi0: 'mybase-9000-x:y', net0: 'virtio=BC:24:11:00:00:01,bridge=vmbr0' }, { scsi0: 'mybase-9000-x:y/101' }],
      [{ scsi0: 'ceph:notbase-9000-disk-0' }, { scsi0: 'ceph:notbase-9000-disk-0/vm-101-disk-0' }],
      [{ scsi0: 'cache=none,backup=0' }, { scsi0: 'cache=none,backup=0/x' }],
      // a clone of a different base whose name the template's base begins
      [{ scsi0: 'ceph:base-9000-disk-0' }, { scsi0: 'ceph:base-9000-disk-00/vm-101-disk-0' }],
      // the same base name without the separator a linked clone's volume id has
      [{ scsi0: 'ceph:base-9000-disk-0' }, { scsi0: 'ceph:base-9000-disk-0' }],
      // a value that is not a volume beside one that is
      [{ scsi0: 'ceph:base-9000-disk-0' }, { description: 'copy of ceph:base-9000-disk-0/vm-101' }],
      // notes that name a volume after another key than file= or volume= are not a disk
      [{ scsi0: 'ceph:base-9000-disk-0' }, { description: 'cloned from=ceph:base-9000-disk-0/vm-101-disk-0' }],
      // a storage whose name looks like a base makes no base
      [{ scsi0: 'base-1-ssd:vm-9000-disk-0' }, { scsi0: 'base-1-ssd:vm-9000-disk-0/vm-101-disk-0' }],
    ] as const) {
      const r = run([tmpl(9000, template), clone(101, user)])
      expect(r.anomalies, JSON.stringify(template)).toEqual([])
      expect(candidateIds(r), JSON.stringify(template)).toEqual([
        'VM/pve1/101(c101)#delete',
        'TemplateVM/pve1/9000(t9000)#delete',
      ])
    }
  })

  test("a template's own volumes do not hold it, and a plain guest is never checked for clones", () => {
    const self = run([tmpl(9000, { scsi0: 'ceph:base-9000-disk-0', scsi1: 'ceph:base-9000-disk-0/vm-9000-disk-1' })])
    expect(self.anomalies).toEqual([])
    // a (non-template) guest whose volumes others' ids begin with is pruned
    const plain = run([
      clone(100, { scsi0: 'ceph:base-100-disk-0' }),
      clone(101, { scsi0: 'ceph:base-100-disk-0/vm-101-disk-0' }),
    ])
    expect(plain.anomalies).toEqual([])
    expect(plain.candidates.map((c) => c.draft.vmid)).toEqual([100, 101])
  })
})

describe("a destroy's purge effects", () => {
  test('a refusal holds the prune back with every reason', () => {
    const r = run([clone(101, {})], { effects: () => ({ notes: [], ownedJobDeletes: [], refusals: ['a', 'b'] }) })
    expect(r.candidates).toEqual([])
    expect(r.anomalies).toEqual([
      {
        code: 'purge-effect',
        address: 'VM/pve1/101(c101)',
        kind: 'VM',
        message: 'VM/pve1/101(c101) is tagged proxops and absent in git, but a; b; not pruned',
      },
    ])
  })

  test('a guest whose purge deletes an owned job waits until the job is chosen for deletion first', () => {
    const fx = (g: LiveGuest): DestroyEffects => ({
      notes: [
        'deletes backup job j1 (it names no other guest)',
        'removes HA resource vm:101',
        'removes it from pool p',
      ],
      ownedJobDeletes: g.vmid === 101 ? ['BackupJob/j2#delete', 'BackupJob/j1#delete', 'BackupJob/j3#delete'] : [],
      refusals: [],
    })
    const waiting = run([clone(101, {})], { effects: fx, chosen: [{ id: 'BackupJob/j1#delete' } as Draft] })
    expect(waiting.candidates).toEqual([])
    expect(waiting.skips).toEqual([
      {
        code: 'prune-budget',
        address: 'VM/pve1/101(c101)',
        kind: 'VM',
        node: 'pve1',
        vmid: 101,
        message:
          'prune deferred: its destroy (purge) would delete BackupJob/j2, BackupJob/j3, whose own prune is deferred this cycle',
      },
    ])
    const chosen = run([clone(101, {}, { status: 'running' })], {
      effects: fx,
      chosen: [{ id: 'BackupJob/j1#delete' }, { id: 'BackupJob/j2#delete' }, { id: 'BackupJob/j3#delete' }] as Draft[],
    })
    const d = chosen.candidates[0]?.draft
    expect(d?.after).toEqual(['BackupJob/j1#delete', 'BackupJob/j2#delete', 'BackupJob/j3#delete'])
    expect(d?.reason).toBe(
      "present on PVE (proxops-tagged) but absent in git; graceful shutdown first; PVE's destroy also deletes backup job j1 (it names no other guest), removes HA resource vm:101 and removes it from pool p",
    )
  })
})

describe('the delete a candidate becomes', () => {
  test('a running guest is shut down first, with the policy timeout, then destroyed', () => {
    const p = policy({ clusterEntry: 'home', shutdownTimeoutSeconds: 42, forceStopAfterTimeout: true })
    const group = guestPrunes(
      [clone(101, {}, { status: 'running', digest: 'abc' })],
      new Set(),
      new Map(),
      p,
      new Set(),
      () => NONE,
    )
    expect(group.candidates([]).candidates).toEqual([
      {
        kind: 'VM',
        draft: {
          id: 'VM/pve1/101(c101)#delete',
          address: 'VM/pve1/101(c101)',
          kind: 'VM',
          name: 'c101',
          node: 'pve1',
          vmid: 101,
          type: 'delete',
          reason: 'present on PVE (proxops-tagged) but absent in git; graceful shutdown first',
          diffs: [],
          disruption: 'stop',
          tier: 9,
          level: 0,
          digest: 'abc',
          requests: [
            { call: 'shutdown', node: 'pve1', guest: 'qemu', vmid: 101, timeoutSeconds: 42, forceStop: true },
            { call: 'deleteGuest', node: 'pve1', guest: 'qemu', vmid: 101 },
          ],
        },
      },
    ])
  })

  test('a stopped guest without a name is destroyed at once, and one effect is said alone', () => {
    const g = guest(101, { tags: owned }, { type: 'lxc', name: undefined })
    const r = run([g], { effects: () => ({ notes: ['removes it from pool p'], ownedJobDeletes: [], refusals: [] }) })
    const d = r.candidates[0]?.draft
    expect(d?.address).toBe('LXC/pve1/101')
    expect(d && 'name' in d).toBe(false)
    expect(d && 'after' in d).toBe(false)
    expect(d?.disruption).toBe('none')
    expect(d?.requests).toEqual([{ call: 'deleteGuest', node: 'pve1', guest: 'lxc', vmid: 101 }])
    expect(d?.reason).toBe(
      "present on PVE (proxops-tagged) but absent in git; PVE's destroy also removes it from pool p",
    )
  })

  test('two effects are joined with "and"', () => {
    const r = run([clone(101, {})], { effects: () => ({ notes: ['x', 'y'], ownedJobDeletes: [], refusals: [] }) })
    expect(r.candidates[0]?.draft.reason).toBe(
      "present on PVE (proxops-tagged) but absent in git; PVE's destroy also x and y",
    )
  })
})
