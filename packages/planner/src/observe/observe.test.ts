import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { FakePve } from '../test-support/index.js'
import { implausibleConfig, observe, ObserveError, splitPending } from './observe.js'

function estate(): FakePve {
  const pve = new FakePve()
  pve.addGuest({
    vmid: 101,
    node: 'pve1',
    status: 'running',
    config: { name: 'web', memory: '2048', tags: 'proxops;web', scsi0: 'local-lvm:vm-101-disk-0,size=8G' },
  })
  pve.addGuest({ vmid: 100, node: 'pve2', config: { name: 'tpl', template: '1', tags: 'proxops' } })
  pve.addGuest({
    type: 'lxc',
    vmid: 200,
    node: 'pve3',
    status: 'running',
    config: { hostname: 'ct', tags: 'Web, PROXOPS', rootfs: 'local-lvm:vm-200-disk-0,size=4G' },
  })
  pve.addVolume('pve1', 'local', 'local:iso/debian.iso', 'iso', 600)
  pve.addVolume('pve2', 'local', 'local:vztmpl/debian-12.tar.zst', 'vztmpl')
  pve.addVolume('pve2', 'local', 'local:backup/vzdump.vma.zst', 'backup')
  return pve
}

describe('observe', () => {
  it('reads guests, applied config, digest, power state, tags and artifacts into a sorted inventory', async () => {
    const pve = estate()
    const live = await observe('homelab', pve)
    expect(live.cluster).toBe('homelab')
    expect(live.pveVersion).toBe('9.1.1')
    expect(live.nodes).toEqual([
      { node: 'pve1', online: true },
      { node: 'pve2', online: true },
      { node: 'pve3', online: true },
    ])
    expect(live.guests.map((g) => g.vmid)).toEqual([100, 101, 200])
    const web = live.guests[1]!
    expect(web).toMatchObject({
      type: 'qemu',
      node: 'pve1',
      name: 'web',
      status: 'running',
      template: false,
      tags: ['proxops', 'web'],
    })
    expect(web.config).toMatchObject({ memory: '2048', scsi0: 'local-lvm:vm-101-disk-0,size=8G' })
    expect(web.config).not.toHaveProperty('digest')
    expect(web.digest).toBe(pve.digestOf(pve.guests.get(101)!))
    expect(live.guests[0]).toMatchObject({ template: true, name: 'tpl', status: 'stopped' })
    expect(live.guests[2]).toMatchObject({ type: 'lxc', name: 'ct', tags: ['proxops', 'web'] })
    expect(live.unknownGuests).toEqual([])
    expect(live.volumes.map((v) => v.volid)).toEqual(['local:iso/debian.iso', 'local:vztmpl/debian-12.tar.zst'])
    expect(live.storages).toHaveLength(6)
    expect(live.unreadableStorages).toEqual([])
  })

  it('stays within the request budget: guests + 2 x nodes + storage listings + 4', async () => {
    const pve = estate()
    await observe('homelab', pve)
    const guests = 3
    const nodes = 3
    // `local` on each node, once per artifact content type it holds (iso, vztmpl, import), each with `content=`;
    // local-lvm holds no artifacts and is not listed
    const listings = pve.calls.filter((c) => c.method === 'storageContent')
    expect(listings.map((c) => `${String(c.args[0])} ${String(c.args[1])} ${String(c.args[2])}`).sort()).toEqual(
      ['pve1', 'pve2', 'pve3'].flatMap((n) => ['import', 'iso', 'vztmpl'].map((c) => `${n} local ${c}`)),
    )
    expect(pve.reads().length).toBeLessThanOrEqual(guests + 2 * nodes + listings.length + 4)
    // one read per guest: /pending, never config + status
    expect(pve.reads().filter((c) => c.method === 'guestConfig' || c.method === 'guestStatus')).toEqual([])
  })

  it('lists a shared storage once and records its volumes on every node that holds it', async () => {
    const pve = new FakePve({
      nodes: ['pve1', 'pve2'],
      storages: [
        { node: 'pve1', storage: 'nfs', type: 'nfs', content: ['iso'], shared: true },
        { node: 'pve2', storage: 'nfs', type: 'nfs', content: ['iso'], shared: true },
      ],
    })
    pve.addVolume('pve1', 'nfs', 'nfs:iso/a.iso', 'iso')
    const live = await observe('homelab', pve)
    expect(pve.calls.filter((c) => c.method === 'storageContent')).toHaveLength(1)
    expect(live.volumes.map((v) => `${v.node}/${v.volid}`)).toEqual(['pve1/nfs:iso/a.iso', 'pve2/nfs:iso/a.iso'])
  })

  it('reads pending values and pending deletes separately from the applied config', async () => {
    const pve = estate()
    const g = pve.guests.get(101)!
    g.pending.cores = '4'
    g.pendingDeletes.add('memory')
    const live = await observe('homelab', pve)
    const web = live.guests.find((x) => x.vmid === 101)!
    expect(web.config.memory).toBe('2048')
    expect(web.config.cores).toBeUndefined()
    expect(web.pending).toEqual({ cores: '4' })
    expect(web.pendingDeletes).toEqual(['memory'])
  })

  it('marks a guest whose read fails as unknown, never absent', async () => {
    const pve = estate()
    pve.fault = (call) =>
      call.method === 'guestPending' && call.args[2] === 101 ? new Error('500 proxy loop') : undefined
    const live = await observe('homelab', pve)
    expect(live.guests.map((g) => g.vmid)).toEqual([100, 200])
    expect(live.unknownGuests).toEqual([
      {
        type: 'qemu',
        vmid: 101,
        node: 'pve1',
        name: 'web',
        tags: ['proxops', 'web'],
        reason: 'read failed: 500 proxy loop',
      },
    ])
  })

  it('marks every guest of an offline node unknown and its storages unreadable, without reading them', async () => {
    const pve = estate()
    pve.offline.add('pve3')
    const live = await observe('homelab', pve)
    expect(live.nodes.find((n) => n.node === 'pve3')).toEqual({ node: 'pve3', online: false })
    expect(live.unknownGuests.map((g) => [g.vmid, g.reason])).toEqual([[200, 'node pve3 is offline']])
    expect(live.unreadableStorages).toEqual([{ node: 'pve3', storage: 'local', reason: 'node pve3 is offline' }])
    expect(pve.calls.some((c) => c.args[0] === 'pve3')).toBe(false)
  })

  it('marks the guests of a node whose guest list fails as unknown', async () => {
    const pve = estate()
    pve.fault = (call) =>
      call.method === 'nodeGuests' && call.args[0] === 'pve1' && call.args[1] === 'qemu'
        ? new Error('timeout')
        : undefined
    const live = await observe('homelab', pve)
    expect(live.unknownGuests.map((g) => g.vmid)).toEqual([101])
    expect(live.unknownGuests[0]!.reason).toContain('guest list of node pve1 unreadable: timeout')
  })

  it('records a failed storage listing as unreadable (its artifacts are neither present nor absent)', async () => {
    const pve = estate()
    pve.fault = (call) =>
      call.method === 'storageContent' && call.args[0] === 'pve2' ? new Error('storage down') : undefined
    const live = await observe('homelab', pve)
    expect(live.unreadableStorages).toEqual([
      { node: 'pve2', storage: 'local', reason: 'content listing failed: storage down' },
    ])
    expect(live.volumes.some((v) => v.node === 'pve2')).toBe(false)
  })

  it('fails the whole observation when the cluster listing fails', async () => {
    const pve = estate()
    pve.fault = (call) => (call.method === 'clusterResources' ? new Error('401 no ticket') : undefined)
    const error = await observe('homelab', pve).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ObserveError)
    expect((error as ObserveError).code).toBe('PVE_INVENTORY_READ_FAILED')
    expect((error as Error).message).toBe('pve inventory read failed for cluster homelab: 401 no ticket')
  })

  it('ignores nodes outside the allowlist entirely', async () => {
    const pve = estate()
    const live = await observe('homelab', pve, { nodes: ['pve1', 'pve2'] })
    expect(live.nodes.map((n) => n.node)).toEqual(['pve1', 'pve2'])
    expect(live.guests.map((g) => g.vmid)).toEqual([100, 101])
    expect(live.unknownGuests).toEqual([])
    expect(pve.calls.some((c) => c.args[0] === 'pve3')).toBe(false)
  })

  it('reports a guest config lock for the planner to skip it', async () => {
    const pve = estate()
    pve.guests.get(101)!.config.lock = 'backup'
    const live = await observe('homelab', pve)
    expect(live.guests.find((g) => g.vmid === 101)!.lock).toBe('backup')
  })

  it('reports a paused VM as paused (the power rule treats it as not running)', async () => {
    const pve = estate()
    const original = pve.nodeGuests.bind(pve)
    pve.nodeGuests = async (node, type) =>
      (await original(node, type)).map((g) => (g.vmid === 101 ? { ...g, qmpstatus: 'paused' } : g))
    const live = await observe('homelab', pve)
    expect(live.guests.find((g) => g.vmid === 101)!.status).toBe('paused')
  })

  it('14.10: every QMP status other than running (prelaunch, suspended, io-error, ...) counts as paused, the status kept', async () => {
    for (const qmp of ['prelaunch', 'suspended', 'io-error', 'guest-panicked', 'inmigrate', 'some-future-state']) {
      const pve = estate()
      const original = pve.nodeGuests.bind(pve)
      pve.nodeGuests = async (node, type) =>
        (await original(node, type)).map((g) => (g.vmid === 101 ? { ...g, qmpstatus: qmp } : g))
      const g = (await observe('homelab', pve)).guests.find((x) => x.vmid === 101)!
      expect([g.status, g.qmpstatus]).toEqual(['paused', qmp])
    }
    const pve = estate()
    const original = pve.nodeGuests.bind(pve)
    pve.nodeGuests = async (node, type) =>
      (await original(node, type)).map((g) => (g.vmid === 101 ? { ...g, qmpstatus: 'running' } : g))
    const g = (await observe('homelab', pve)).guests.find((x) => x.vmid === 101)!
    expect([g.status, g.qmpstatus]).toEqual(['running', undefined])
  })

  it('falls back to one status read per guest when the reader has no node guest lists', async () => {
    const pve = new FakePve({ nodeGuests: false })
    pve.addGuest({ vmid: 101, status: 'running', config: { name: 'web' } })
    const live = await observe('homelab', pve)
    expect(live.guests[0]!.status).toBe('running')
    expect(pve.calls.filter((c) => c.method === 'guestStatus')).toHaveLength(1)
  })

  it('a /pending answer without a digest row is implausible (config_with_pending_array lists it): unknown', async () => {
    const pve = new FakePve({ pendingWithoutDigest: true })
    pve.addGuest({ vmid: 101, status: 'running', config: { name: 'web', tags: 'proxops' } })
    const live = await observe('homelab', pve)
    expect(live.guests).toEqual([])
    expect(live.unknownGuests.map((g) => [g.vmid, g.reason])).toEqual([
      [101, 'implausible read: its /pending answer has no digest row, which every PVE config read has'],
    ])
    expect(pve.calls.filter((c) => c.method === 'guestConfig')).toHaveLength(0)
  })

  it('a config that contradicts the node guest list (vmstatus reads the same file) is unknown', async () => {
    const pve = estate()
    const real = pve.guestPending.bind(pve)
    // a PVE that answers the running VM's /pending with the digest row alone
    pve.guestPending = async (node, type, vmid) =>
      vmid === 101 ? (await real(node, type, vmid)).filter((r) => r.key === 'digest') : real(node, type, vmid)
    const live = await observe('homelab', pve)
    expect(live.guests.map((g) => g.vmid)).toEqual([100, 200])
    expect(live.unknownGuests.map((g) => [g.vmid, g.reason])).toEqual([
      [101, 'implausible read: its config names it "VM 101" but the node\'s guest list "web"'],
    ])
  })

  it('desired vmids no allowlisted node lists: found in /cluster/resources, else probed with vmidFree', async () => {
    const pve = estate()
    pve.addGuest({ vmid: 150, node: 'pve3', config: { name: 'elsewhere' } })
    const probed: number[] = []
    const hidden = new Set([160])
    const reader = Object.assign(pve, {
      vmidFree: async (vmid: number) => {
        probed.push(vmid)
        if (vmid === 180) throw new Error('500 proxy loop')
        return !hidden.has(vmid)
      },
    })
    const live = await observe('homelab', reader, { nodes: ['pve1', 'pve2'], vmids: [101, 150, 160, 170, 180] })
    expect(live.heldVmids).toEqual([{ vmid: 150, node: 'pve3', type: 'qemu', name: 'elsewhere' }, { vmid: 160 }])
    // listed guests and ones the listing places elsewhere cost no probe; a failed probe is left to the create
    expect(probed.sort()).toEqual([160, 170, 180])
    expect((await observe('homelab', reader, { vmids: [101] })).heldVmids).toBeUndefined()
  })

  it('implausibleConfig: digest, LXC rootfs, name and tags as vmstatus derives them', () => {
    const ok = { digest: 'd', config: { name: 'web', tags: 'a;b' } }
    const listed = { name: 'web', tags: 'a;b' }
    expect(implausibleConfig({ type: 'qemu', vmid: 1, listed }, ok)).toBeUndefined()
    expect(implausibleConfig({ type: 'qemu', vmid: 1, listed }, { ...ok, digest: undefined })).toMatch(/no digest/)
    expect(implausibleConfig({ type: 'qemu', vmid: 1, listed }, { digest: 'd', config: { name: 'web' } })).toMatch(
      /tags "" but the node's guest list "a;b"/,
    )
    // PVE's defaults when the key is absent
    expect(implausibleConfig({ type: 'qemu', vmid: 7, listed: { name: 'VM 7' } }, { digest: 'd', config: {} })).toBe(
      undefined,
    )
    const ct = { digest: 'd', config: { hostname: 'my ct', rootfs: 'local:4' } }
    expect(implausibleConfig({ type: 'lxc', vmid: 7, listed: { name: 'myct' } }, ct)).toBeUndefined()
    expect(
      implausibleConfig({ type: 'lxc', vmid: 7, listed: { name: 'CT7' } }, { digest: 'd', config: { rootfs: 'x' } }),
    ).toBeUndefined()
    expect(implausibleConfig({ type: 'lxc', vmid: 7 }, { digest: 'd', config: { hostname: 'c' } })).toMatch(/no rootfs/)
    // without a node list (status read instead) only the config itself is checked
    expect(implausibleConfig({ type: 'qemu', vmid: 7 }, { digest: 'd', config: {} })).toBeUndefined()
  })

  it('never has more than the concurrency limit of reads in flight', async () => {
    const pve = estate()
    for (let vmid = 300; vmid < 340; vmid++) pve.addGuest({ vmid, node: `pve${(vmid % 3) + 1}` })
    let inFlight = 0
    let peak = 0
    const slow = new Proxy(pve, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown
        if (typeof value !== 'function') return value
        return async (...args: unknown[]) => {
          inFlight++
          peak = Math.max(peak, inFlight)
          await new Promise((r) => setTimeout(r, 1))
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
          } finally {
            inFlight--
          }
        }
      },
    })
    await observe('homelab', slow, { concurrency: 3 })
    expect(peak).toBeLessThanOrEqual(3)
    expect(peak).toBeGreaterThan(1)
  })

  it('stops with the abort reason when cancelled', async () => {
    const controller = new AbortController()
    controller.abort(new Error('cancelled by user'))
    await expect(observe('homelab', estate(), { signal: controller.signal })).rejects.toThrow('cancelled by user')
  })

  it('is deterministic whatever order the reader answers in (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 100, max: 999 }), { maxLength: 12 }),
        fc.array(fc.nat(5), { minLength: 1, maxLength: 30 }),
        async (vmids, delays) => {
          const pve = new FakePve()
          vmids.forEach((vmid, i) =>
            pve.addGuest({
              vmid,
              type: i % 2 ? 'lxc' : 'qemu',
              node: `pve${(i % 3) + 1}`,
              config: { tags: 'b,a;proxops', ...(i % 2 ? { rootfs: `local-lvm:vm-${vmid}-disk-0,size=4G` } : {}) },
            }),
          )
          let i = 0
          const jittery = new Proxy(pve, {
            get(target, prop, receiver) {
              const value = Reflect.get(target, prop, receiver) as unknown
              if (typeof value !== 'function') return value
              return async (...args: unknown[]) => {
                await new Promise((r) => setTimeout(r, delays[i++ % delays.length]))
                return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
              }
            },
          })
          const a = await observe('c', pve)
          const b = await observe('c', jittery)
          expect(JSON.stringify(b)).toBe(JSON.stringify(a))
          expect(a.guests.map((g) => g.vmid)).toEqual([...vmids].sort((x, y) => x - y))
        },
      ),
      { numRuns: 25 },
    )
  })
})

describe('splitPending', () => {
  it('separates digest, applied values, pending values and pending deletes', () => {
    expect(
      splitPending([
        { key: 'memory', value: '2048', pending: '4096' },
        { key: 'digest', value: 'abc' },
        { key: 'cores', pending: '2' },
        { key: 'net1', value: 'virtio', delete: 2 },
      ]),
    ).toEqual({
      digest: 'abc',
      config: { memory: '2048', net1: 'virtio' },
      pending: { cores: '2', memory: '4096' },
      pendingDeletes: ['net1'],
    })
  })

  it('gives the same result, key order included, whatever order the rows arrive in (property)', () => {
    const row = fc.record(
      {
        key: fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/),
        value: fc.string({ maxLength: 4 }),
        pending: fc.string({ maxLength: 4 }),
        delete: fc.constantFrom(1, 2),
      },
      { requiredKeys: ['key'] },
    )
    const unique = fc.uniqueArray(row, { selector: (r) => r.key, maxLength: 12 })
    fc.assert(
      fc.property(unique, fc.func(fc.integer()), (rows, rank) => {
        const sorted = [...rows].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        const shuffled = [...rows].sort((a, b) => rank(a.key) - rank(b.key))
        expect(JSON.stringify(splitPending(shuffled))).toBe(JSON.stringify(splitPending(sorted)))
      }),
      { numRuns: 200 },
    )
  })
})

describe('observe with a lagging /cluster/resources', () => {
  it('trusts the node that lists a guest over a stale resources row on another node (migration)', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 150, node: 'pve2', config: { name: 'moved', tags: 'proxops' } })
    const original = pve.clusterResources.bind(pve)
    pve.clusterResources = async () => (await original()).map((r) => (r.vmid === 150 ? { ...r, node: 'pve1' } : r))
    const live = await observe('homelab', pve)
    expect(live.guests.map((g) => [g.vmid, g.node])).toEqual([[150, 'pve2']])
    expect(live.unknownGuests).toEqual([])
  })

  it('includes a guest a node lists before /cluster/resources shows it', async () => {
    const pve = new FakePve()
    pve.addGuest({ vmid: 151, node: 'pve3', status: 'running', config: { name: 'fresh' } })
    const original = pve.clusterResources.bind(pve)
    pve.clusterResources = async () => (await original()).filter((r) => r.vmid !== 151)
    const live = await observe('homelab', pve)
    expect(live.guests.map((g) => [g.vmid, g.node, g.status])).toEqual([[151, 'pve3', 'running']])
  })
})

describe('observe under random read failures', () => {
  it('accounts for every guest as read or unknown, never absent, and every artifact storage as listed or unreadable (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          fc.record({
            vmid: fc.integer({ min: 100, max: 400 }),
            node: fc.constantFrom('pve1', 'pve2', 'pve3'),
            lxc: fc.boolean(),
          }),
          { selector: (g) => g.vmid, maxLength: 10 },
        ),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
        fc.subarray(['pve1', 'pve2', 'pve3']),
        async (guests, failPattern, offline) => {
          const pve = new FakePve({ offline })
          for (const g of guests)
            pve.addGuest({ vmid: g.vmid, node: g.node, type: g.lxc ? 'lxc' : 'qemu', config: { tags: 'proxops' } })
          let i = 0
          pve.fault = (call) =>
            call.method !== 'version' && call.method !== 'clusterResources' && failPattern[i++ % failPattern.length]
              ? new Error(`injected ${call.method}`)
              : undefined
          const live = await observe('homelab', pve)
          const seen = [...live.guests.map((g) => g.vmid), ...live.unknownGuests.map((g) => g.vmid)].sort(
            (a, b) => a - b,
          )
          expect(seen).toEqual(guests.map((g) => g.vmid).sort((a, b) => a - b))
          for (const g of live.unknownGuests) expect(g.reason).not.toBe('')
          for (const g of live.guests) expect(offline).not.toContain(g.node)
          const storages = [...live.storages.filter((s) => s.content.includes('iso')).map((s) => s.node)].sort()
          const accounted = new Set([
            ...live.unreadableStorages.map((s) => s.node),
            ...pve.calls.filter((c) => c.method === 'storageContent').map((c) => String(c.args[0])),
          ])
          for (const node of storages) expect(accounted.has(node)).toBe(true)
        },
      ),
      { numRuns: 100 },
    )
  })
})
