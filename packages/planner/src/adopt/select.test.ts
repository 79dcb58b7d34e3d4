import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { artifact, guest, inventory, vm } from '../fixtures.test.helpers.js'
import { adopt } from './adopt.js'
import { declaredObjects, selectForAdoption, type AdoptFilter } from './select.js'
import { known } from '../inventory.js'

const iso = (volid: string) => ({ node: 'pve1', storage: 'local', volid, content: 'iso', size: 1024 })

describe('declaredObjects', () => {
  it('names the vmids of guests and the volids of artifacts, as plan() matches them', () => {
    const d = declaredObjects([
      vm('web', 100),
      vm('tpl', 9000, {}, 'TemplateVM'),
      artifact('ISO', 'a', 'a.iso'),
      artifact('CTTemplate', 'c', 'c.tar.zst', ['pve1'], 'nfs'),
    ])
    expect([...d.vmids]).toEqual([100, 9000])
    expect([...d.volids]).toEqual(['local:iso/a.iso', 'nfs:vztmpl/c.tar.zst'])
  })
})

describe('selectForAdoption', () => {
  const live = inventory(
    [
      guest(100, { name: 'web', tags: 'proxops;frontend', memory: '512' }),
      guest(101, { name: 'db', tags: 'backend', memory: '512' }),
      guest(102, { name: 'cache', memory: '512' }),
    ],
    { volumes: [iso('local:iso/a.iso'), iso('local:iso/b.iso')] },
  )

  it('leaves out what the repository declares: guests by vmid, artifacts by volid', () => {
    const s = selectForAdoption(live, { declaredVmids: new Set([100]), declaredVolids: new Set(['local:iso/a.iso']) })
    expect(s.live.guests.map((g) => g.vmid)).toEqual([101, 102])
    expect(s.live.volumes.map((v) => v.volid)).toEqual(['local:iso/b.iso'])
    expect(s.declared).toEqual({ guests: [100], volids: ['local:iso/a.iso'], jobs: [], poolids: [] })
    expect(s.filteredOut).toBe(0)
    const all = selectForAdoption(live, {
      declaredVmids: new Set([100]),
      declaredVolids: new Set(['local:iso/a.iso']),
      includeDeclared: true,
    })
    expect(all.live.guests).toHaveLength(3)
    expect(all.live.volumes).toHaveLength(2)
    // adopt() of the selection writes no second manifest for a declared object
    const paths = adopt(s.live, { cluster: 'homelab' }).files.map((f) => f.path)
    expect(paths).toEqual(['iso/homelab/b-iso.yaml', 'vm/homelab/cache.yaml', 'vm/homelab/db.yaml'])
  })

  it("leaves out and reports guests, pools and backup jobs another cluster entry's marker names", () => {
    const inv = inventory(
      [
        guest(100, { name: 'mine', tags: 'proxops;proxops.lab', memory: '512' }),
        guest(101, { name: 'theirs', tags: 'proxops;proxops.edge', memory: '512' }),
        guest(102, { name: 'both', tags: 'proxops.lab;proxops.edge', memory: '512' }),
        guest(103, { name: 'old', tags: 'proxops', memory: '512' }),
        guest(104, { name: 'free', memory: '512' }),
      ],
      {
        pools: {
          known: [
            { poolid: 'edge', comment: ' managed-by=proxops.edge edge tier', vmids: [], storages: [] },
            { poolid: 'hand', comment: 'made by hand', vmids: [], storages: [] },
            { poolid: 'ours', comment: 'managed-by=proxops.lab web', vmids: [], storages: [] },
          ],
        },
        backupJobs: {
          known: [
            { id: 'nightly', values: { comment: 'managed-by=proxops.edge' } },
            { id: 'weekly', values: { comment: 'managed-by=proxops' } },
          ],
        },
      },
    )
    const owner = { ownershipTag: 'proxops', clusterEntry: 'lab' }
    const none = { declaredVmids: new Set<number>(), declaredVolids: new Set<string>() }
    for (const extra of [{}, { includeDeclared: true, declaredVmids: new Set([101]) }]) {
      const s = selectForAdoption(inv, { ...none, owner, ...extra })
      expect(s.live.guests.map((g) => g.vmid)).toEqual([100, 103, 104])
      expect(s.poolManifests).toEqual(['hand', 'ours'])
      expect(known(s.live.backupJobs)?.map((j) => j.id)).toEqual(['weekly'])
      expect(s.ownedElsewhere).toEqual([
        { kind: 'guest', id: '101', marker: 'proxops.edge' },
        { kind: 'guest', id: '102', marker: 'proxops.edge' },
        { kind: 'pool', id: 'edge', marker: 'managed-by=proxops.edge' },
        { kind: 'backup-job', id: 'nightly', marker: 'managed-by=proxops.edge' },
      ])
      // nothing another entry owns gets a manifest here
      const files = adopt(s.live, { cluster: 'lab', poolManifests: s.poolManifests }).files.map((f) => f.path)
      expect(files.some((f) => /theirs|both|edge|nightly/.test(f))).toBe(false)
    }
    // without an entry (no markers in use) every object is a candidate
    expect(selectForAdoption(inv, none).ownedElsewhere).toEqual([])
    expect(selectForAdoption(inv, { ...none, owner: { ownershipTag: 'proxops' } }).live.guests).toHaveLength(5)
  })

  it('pools: declared ones and (with a filter) all are left without a manifest; guests still name theirs', () => {
    const inv = {
      ...live,
      pools: {
        known: [
          { poolid: 'a', vmids: [100], storages: [] },
          { poolid: 'b', vmids: [101], storages: [] },
        ],
      },
    }
    const s = selectForAdoption(inv, {
      declaredVmids: new Set(),
      declaredVolids: new Set(),
      declaredPoolids: new Set(['a']),
    })
    expect([s.poolManifests, s.declared.poolids]).toEqual([['b'], ['a']])
    const filtered = selectForAdoption(inv, {
      declaredVmids: new Set(),
      declaredVolids: new Set(),
      only: { vmids: [101] },
    })
    expect(filtered.poolManifests).toEqual([])
    const r = adopt(filtered.live, { cluster: 'homelab', poolManifests: filtered.poolManifests })
    expect(r.files.map((f) => [f.path, (f.document.spec as { pool?: string }).pool])).toEqual([
      ['vm/homelab/db.yaml', 'b'],
    ])
    expect(
      declaredObjects([vm('x', 101), { ...vm('p', 102), kind: 'Pool', spec: { id: 'p/q' } } as never]).poolids,
    ).toEqual(new Set(['p/q']))
  })

  it('filters guests by vmid, name or tag; a filter adopts no artifacts', () => {
    const none = { declaredVmids: new Set<number>(), declaredVolids: new Set<string>() }
    const by = (only: AdoptFilter) => selectForAdoption(live, { ...none, only }).live.guests.map((g) => g.vmid)
    expect(by({ vmids: [101] })).toEqual([101])
    expect(by({ names: ['cache'] })).toEqual([102])
    expect(by({ tags: ['frontend', 'Backend'] })).toEqual([100, 101])
    expect(by({ vmids: [102], names: ['web'] })).toEqual([100, 102])
    expect(by({ names: ['nothing'] })).toEqual([])
    expect(by({})).toEqual([100, 101, 102])
    const s = selectForAdoption(live, { ...none, only: { names: ['web'] } })
    expect(s.live.volumes).toEqual([])
    expect(s.filteredOut).toBe(2)
  })

  it('every guest is selected, declared or filtered out, exactly once', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 100, max: 130 }), { maxLength: 12 }),
        fc.subarray(Array.from({ length: 31 }, (_, i) => 100 + i)),
        fc.array(fc.integer({ min: 100, max: 130 }), { maxLength: 3 }),
        (vmids, declared, only) => {
          const inv = inventory(vmids.map((id) => guest(id, { name: `g${id}` })))
          const s = selectForAdoption(inv, {
            declaredVmids: new Set(declared),
            declaredVolids: new Set(),
            only: { vmids: only },
          })
          const selected = s.live.guests.map((g) => g.vmid)
          expect(selected.length + s.declared.guests.length + s.filteredOut).toBe(vmids.length)
          for (const id of selected) expect(declared.includes(id)).toBe(false)
          if (only.length > 0) for (const id of selected) expect(only).toContain(id)
        },
      ),
    )
  })
})
