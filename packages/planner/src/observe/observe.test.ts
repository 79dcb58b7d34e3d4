/**
 * observe() against the simulator's model run in-process behind the real client (test-support/sim.ts): guests,
 * pending values, locks, storages and faults are PVE's, made through PVE's API or the simulator's controls.
 * Where a test is about the reader port itself (a reader without nodeGuests, answer order, a stale resources
 * row), it wraps the client.
 */
import { createHash } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { GuestType, PveParams } from '@proxops/pve-client/wire'
import type { LiveReader } from '../ports.js'
import { simPve, type SimPve } from '../test-support/sim.js'
import { observe, ObserveError } from './observe.js'
import { implausibleConfig, splitPending } from '../kinds/guest/read.js'

const open: SimPve[] = []
afterEach(async () => {
  for (const p of open.splice(0)) await p.close()
})
function pve(options: Parameters<typeof simPve>[0] = {}): SimPve {
  const p = simPve(options)
  open.push(p)
  return p
}

async function create(p: SimPve, node: string, type: GuestType, params: PveParams): Promise<void> {
  await p.client.waitTaskOk(await p.client.createGuest(node, type, params), { pollIntervalMs: 5 })
}
async function start(p: SimPve, node: string, type: GuestType, vmid: number): Promise<void> {
  await p.client.waitTaskOk(await p.client.start(node, type, vmid), { pollIntervalMs: 5 })
}
/** a container template on `local` of each node, as `pveam download` leaves it */
function ctTemplate(p: SimPve, node: string): string {
  return p.sim.control.addVolume(node, 'local', { filename: 'debian-12.tar.zst', content: 'vztmpl' })
}
/** SHA-1 of the config file as PVE stores it: the digest PVE reports (PVE::Tools::get_config_digest) */
const digestOf = (p: SimPve, vmid: number): string =>
  createHash('sha1')
    .update(p.sim.control.configText(vmid) ?? '')
    .digest('hex')

/** web (running VM, pve1), tpl (VM template, pve2), ct (running container, pve3); an ISO, a template, a backup */
async function estate(): Promise<SimPve> {
  const p = pve()
  await create(p, 'pve1', 'qemu', { vmid: 101, name: 'web', memory: 2048, tags: 'proxops;web', scsi0: 'local-lvm:8' })
  await start(p, 'pve1', 'qemu', 101)
  await create(p, 'pve2', 'qemu', { vmid: 100, name: 'tpl', tags: 'proxops' })
  await p.client.markTemplate('pve2', 'qemu', 100)
  await p.client.waitTemplate('pve2', 'qemu', 100, { pollIntervalMs: 5 })
  const tpl = ctTemplate(p, 'pve3')
  await create(p, 'pve3', 'lxc', {
    vmid: 200,
    hostname: 'ct',
    tags: 'Web;PROXOPS',
    ostemplate: tpl,
    rootfs: 'local-lvm:4',
  })
  await start(p, 'pve3', 'lxc', 200)
  p.sim.control.addVolume('pve1', 'local', { filename: 'debian.iso', content: 'iso', size: 600 })
  p.sim.control.addVolume('pve2', 'local', { filename: 'debian-12.tar.zst', content: 'vztmpl' })
  p.sim.control.addVolume('pve2', 'local', { filename: 'vzdump-qemu-100.vma.zst', content: 'backup' })
  p.sim.stats.reset()
  return p
}

/** the client with one method's answer rewritten (a reader-port behaviour, not a PVE one) */
function rewrite<K extends keyof LiveReader>(
  reader: LiveReader,
  key: K,
  method: LiveReader[K] | undefined,
): LiveReader {
  return new Proxy(reader, {
    get(target, prop) {
      if (prop === key) return method
      const value = Reflect.get(target, prop, target) as unknown
      // the client's methods use its private fields: call them on the client, not on the proxy
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value
    },
  })
}

describe('observe', () => {
  it('reads guests, applied config, digest, power state, tags and artifacts into a sorted inventory', async () => {
    const p = await estate()
    const live = await observe('homelab', p.client)
    expect(live.cluster).toBe('homelab')
    expect(live.pveVersion).toMatch(/^9\.1\./)
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
    expect(web.digest).toBe(digestOf(p, 101))
    expect(live.guests[0]).toMatchObject({ template: true, name: 'tpl', status: 'stopped' })
    expect(live.guests[2]).toMatchObject({ type: 'lxc', name: 'ct', tags: ['proxops', 'web'] })
    expect(live.unknownGuests).toEqual([])
    expect(live.volumes.map((v) => `${v.node}/${v.volid}`)).toEqual([
      'pve1/local:iso/debian.iso',
      'pve2/local:vztmpl/debian-12.tar.zst',
      'pve3/local:vztmpl/debian-12.tar.zst',
    ])
    expect(live.storages.map((s) => `${s.node}/${s.storage}`)).toEqual([
      'pve1/local',
      'pve1/local-lvm',
      'pve1/local-zfs',
      'pve2/local',
      'pve2/local-lvm',
      'pve2/local-zfs',
      'pve3/local',
      'pve3/local-lvm',
      'pve3/local-zfs',
    ])
    expect(live.unreadableStorages).toEqual([])
  })

  it('stays within the request budget: guests + 2 x nodes + storage listings + 6', async () => {
    const p = await estate()
    await observe('homelab', p.client)
    const reads = p.requests().filter((r) => r.startsWith('GET '))
    expect(reads).toHaveLength(p.requests().length)
    const guests = 3
    const nodes = 3
    // `local` on each node, once per artifact content type it holds (import, iso, vztmpl: one `content=` each);
    // local-lvm and local-zfs hold no artifacts and are not listed
    const listings = reads.filter((r) => /\/storage\/[^/]+\/content$/.test(r))
    expect(listings.sort()).toEqual(
      ['pve1', 'pve2', 'pve3'].flatMap((n) => Array(3).fill(`GET /nodes/${n}/storage/local/content`)),
    )
    // the fixed six: version, resources, backup jobs, HA resources, HA rules, pools
    expect(reads.length).toBeLessThanOrEqual(guests + 2 * nodes + listings.length + 6)
    // one read per guest: /pending, never config + status
    expect(reads.filter((r) => /\/(qemu|lxc)\/\d+\//.test(r)).sort()).toEqual([
      'GET /nodes/pve1/qemu/101/pending',
      'GET /nodes/pve2/qemu/100/pending',
      'GET /nodes/pve3/lxc/200/pending',
    ])
  })

  it('lists a shared storage once and records its volumes on every node that holds it', async () => {
    const p = pve({ nodes: ['pve1', 'pve2'] })
    await p.client.request('POST', '/storage', {
      params: { storage: 'nfs', type: 'nfs', server: '10.0.0.9', export: '/isos', content: 'iso' },
    })
    p.sim.control.addVolume('pve1', 'nfs', { filename: 'a.iso', content: 'iso' })
    p.sim.stats.reset()
    const live = await observe('homelab', p.client)
    expect(p.requests().filter((r) => /^GET \/nodes\/[^/]+\/storage\/nfs\/content$/.test(r))).toHaveLength(1)
    expect(live.volumes.map((v) => `${v.node}/${v.volid}`)).toEqual(['pve1/nfs:iso/a.iso', 'pve2/nfs:iso/a.iso'])
  })

  it('reads pending values and pending deletes separately from the applied config', async () => {
    const p = await estate()
    // a running VM keeps a change PVE cannot hotplug pending (qemu-server vmconfig_hotplug_pending)
    const task = await p.client.updateConfig('pve1', 'qemu', 101, { cores: 4, delete: 'memory' })
    if (task) await p.client.waitTaskOk(task, { pollIntervalMs: 5 })
    const live = await observe('homelab', p.client)
    const web = live.guests.find((x) => x.vmid === 101)!
    expect(web.config.memory).toBe('2048')
    expect(web.config.cores).toBeUndefined()
    expect(web.pending).toEqual({ cores: '4' })
    expect(web.pendingDeletes).toEqual(['memory'])
  })

  it('marks a guest whose read fails as unknown, never absent', async () => {
    const p = await estate()
    p.sim.control.failNext({ method: 'GET', path: '/nodes/pve1/qemu/101/pending', status: 500, count: 10 })
    const live = await observe('homelab', p.client)
    expect(live.guests.map((g) => g.vmid)).toEqual([100, 200])
    expect(live.unknownGuests).toHaveLength(1)
    expect(live.unknownGuests[0]).toMatchObject({
      type: 'qemu',
      vmid: 101,
      node: 'pve1',
      name: 'web',
      tags: ['proxops', 'web'],
    })
    expect(live.unknownGuests[0]!.unreadable).toMatch(/^read failed: .*500/)
  })

  it('marks every guest of an offline node unknown and its storages unreadable, without reading them', async () => {
    const p = await estate()
    p.sim.control.setNodeOnline('pve3', false)
    const live = await observe('homelab', p.client)
    expect(live.nodes.find((n) => n.node === 'pve3')).toEqual({ node: 'pve3', online: false })
    expect(live.unknownGuests.map((g) => [g.vmid, g.unreadable])).toEqual([[200, 'node pve3 is offline']])
    expect(live.unreadableStorages).toEqual([{ node: 'pve3', storage: 'local', unreadable: 'node pve3 is offline' }])
    expect(p.requests().filter((r) => r.includes('/nodes/pve3/'))).toEqual([])
  })

  it('marks the guests of a node whose guest list fails as unknown', async () => {
    const p = await estate()
    p.sim.control.failNext({ method: 'GET', path: '/nodes/pve1/qemu', status: 500, message: 'timeout', count: 10 })
    const live = await observe('homelab', p.client)
    expect(live.unknownGuests.map((g) => g.vmid)).toEqual([101])
    expect(live.unknownGuests[0]!.unreadable).toContain('guest list of node pve1 unreadable:')
    expect(live.unknownGuests[0]!.unreadable).toContain('timeout')
  })

  it('records a failed storage listing as unreadable (its artifacts are neither present nor absent)', async () => {
    const p = await estate()
    p.sim.control.failNext({
      method: 'GET',
      path: '/nodes/pve2/storage/local/content',
      status: 500,
      message: 'storage down',
      count: 10,
    })
    const live = await observe('homelab', p.client)
    expect(live.unreadableStorages).toHaveLength(1)
    expect(live.unreadableStorages[0]).toMatchObject({ node: 'pve2', storage: 'local' })
    expect(live.unreadableStorages[0]!.unreadable).toMatch(/^content listing failed: .*storage down/)
    expect(live.volumes.some((v) => v.node === 'pve2')).toBe(false)
  })

  it('fails the whole observation when the cluster listing fails', async () => {
    const p = await estate()
    p.sim.control.revokeToken()
    const error = await observe('homelab', p.client).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ObserveError)
    expect((error as ObserveError).code).toBe('PVE_INVENTORY_READ_FAILED')
    expect((error as Error).message).toMatch(/^pve inventory read failed for cluster homelab: .*401/)
  })

  it('ignores nodes outside the allowlist entirely', async () => {
    const p = await estate()
    const live = await observe('homelab', p.client, { nodes: ['pve1', 'pve2'] })
    expect(live.nodes.map((n) => n.node)).toEqual(['pve1', 'pve2'])
    expect(live.guests.map((g) => g.vmid)).toEqual([100, 101])
    expect(live.unknownGuests).toEqual([])
    expect(p.requests().filter((r) => r.includes('/nodes/pve3/'))).toEqual([])
  })

  it('reports a guest config lock for the planner to skip it', async () => {
    const p = await estate()
    p.sim.control.setLock(101, 'backup')
    const live = await observe('homelab', p.client)
    expect(live.guests.find((g) => g.vmid === 101)!.lock).toBe('backup')
  })

  it('reports a suspended VM as paused (the power rule treats it as not running)', async () => {
    const p = await estate()
    const upid = (await p.client.request('POST', '/nodes/pve1/qemu/101/status/suspend')) as string
    await p.client.waitTaskOk({ node: 'pve1', upid }, { pollIntervalMs: 5 })
    const web = (await observe('homelab', p.client)).guests.find((g) => g.vmid === 101)!
    expect([web.status, web.qmpstatus]).toEqual(['paused', 'paused'])
  })

  it('every QMP status other than running (prelaunch, io-error, ...) counts as paused, the status kept', async () => {
    const p = await estate()
    const withQmp = (qmp: string): LiveReader =>
      rewrite(p.client, 'nodeGuests', async (node, type) =>
        (await p.client.nodeGuests(node, type)).map((g) => (g.vmid === 101 ? { ...g, qmpstatus: qmp } : g)),
      )
    for (const qmp of ['prelaunch', 'suspended', 'io-error', 'guest-panicked', 'inmigrate', 'some-future-state']) {
      const g = (await observe('homelab', withQmp(qmp))).guests.find((x) => x.vmid === 101)!
      expect([g.status, g.qmpstatus]).toEqual(['paused', qmp])
    }
    const g = (await observe('homelab', withQmp('running'))).guests.find((x) => x.vmid === 101)!
    expect([g.status, g.qmpstatus]).toEqual(['running', undefined])
  })

  it('reads the status of a guest that /cluster/resources lists and its node does not list (one request)', async () => {
    const p = pve()
    await create(p, 'pve1', 'qemu', { vmid: 101, name: 'web' })
    await start(p, 'pve1', 'qemu', 101)
    p.sim.stats.reset()
    const live = await observe(
      'homelab',
      rewrite(p.client, 'nodeGuests', async () => []),
    )
    expect(live.guests[0]!.status).toBe('running')
    expect(p.requests().filter((r) => r.endsWith('/status/current'))).toEqual([
      'GET /nodes/pve1/qemu/101/status/current',
    ])
  })

  it('a /pending answer without a digest row is implausible (config_with_pending_array lists it): unknown', async () => {
    const p = pve()
    await create(p, 'pve1', 'qemu', { vmid: 101, name: 'web', tags: 'proxops' })
    await start(p, 'pve1', 'qemu', 101)
    p.sim.stats.reset()
    // a reader that drops the digest row PVE::GuestHelpers::config_with_pending_array always adds
    const reader = rewrite(p.client, 'guestPending', async (node, type, vmid) =>
      (await p.client.guestPending(node, type, vmid)).filter((r) => r.key !== 'digest'),
    )
    const live = await observe('homelab', reader)
    expect(live.guests).toEqual([])
    expect(live.unknownGuests.map((g) => [g.vmid, g.unreadable])).toEqual([
      [101, 'implausible read: its /pending answer has no digest row, which every PVE config read has'],
    ])
    expect(p.requests().filter((r) => r.endsWith('/config'))).toEqual([])
  })

  it('a config that contradicts the node guest list (vmstatus reads the same file) is unknown', async () => {
    const p = await estate()
    // an answer for the running VM with the digest row alone: no name, so PVE's default "VM 101"
    const reader = rewrite(p.client, 'guestPending', async (node, type, vmid) => {
      const rows = await p.client.guestPending(node, type, vmid)
      return vmid === 101 ? rows.filter((r) => r.key === 'digest') : rows
    })
    const live = await observe('homelab', reader)
    expect(live.guests.map((g) => g.vmid)).toEqual([100, 200])
    expect(live.unknownGuests.map((g) => [g.vmid, g.unreadable])).toEqual([
      [101, 'implausible read: its config names it "VM 101" but the node\'s guest list "web"'],
    ])
  })

  it('desired vmids no allowlisted node lists: found in /cluster/resources, else probed with vmidFree', async () => {
    const p = await estate()
    await create(p, 'pve3', 'qemu', { vmid: 150, name: 'elsewhere' })
    const probed: number[] = []
    // PVE's /cluster/nextid?vmid= answers for 170 (free); 160 stands for a guest this token cannot see (the
    // probe says used, no listing shows it) and 180 for a failed probe
    const reader = rewrite(p.client, 'vmidFree', async (vmid) => {
      probed.push(vmid)
      if (vmid === 180) throw new Error('500 proxy loop')
      return vmid === 160 ? false : p.client.vmidFree(vmid)
    })
    const live = await observe('homelab', reader, { nodes: ['pve1', 'pve2'], vmids: [101, 150, 160, 170, 180] })
    expect(live.heldVmids).toEqual([{ vmid: 150, node: 'pve3', type: 'qemu', name: 'elsewhere' }, { vmid: 160 }])
    // listed guests and ones the listing places elsewhere cost no probe; a failed probe is left to the create
    expect(probed.sort()).toEqual([160, 170, 180])
    expect((await observe('homelab', reader, { vmids: [101] })).heldVmids).toEqual([])
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
    const p = pve({ estate: { guests: 40 } })
    let inFlight = 0
    let peak = 0
    const counted = new Proxy(p.client, {
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
    const live = await observe('homelab', counted, { concurrency: 3 })
    expect(live.guests).toHaveLength(40)
    expect(peak).toBeLessThanOrEqual(3)
    expect(peak).toBeGreaterThan(1)
  })

  it('stops with the abort reason when cancelled', async () => {
    const p = await estate()
    const controller = new AbortController()
    controller.abort(new Error('cancelled by user'))
    await expect(observe('homelab', p.client, { signal: controller.signal })).rejects.toThrow('cancelled by user')
  })

  it('is deterministic whatever order the reader answers in (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.nat(5), { minLength: 1, maxLength: 30 }),
        async (guests, seed, delays) => {
          const p = simPve({ estate: { guests }, seed })
          try {
            let i = 0
            const jittery = new Proxy(p.client, {
              get(target, prop, receiver) {
                const value = Reflect.get(target, prop, receiver) as unknown
                if (typeof value !== 'function') return value
                return async (...args: unknown[]) => {
                  await new Promise((r) => setTimeout(r, delays[i++ % delays.length]))
                  return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)
                }
              },
            })
            const a = await observe('c', p.client)
            const b = await observe('c', jittery)
            expect(JSON.stringify(b)).toBe(JSON.stringify(a))
            const vmids = p.sim.control.guests().map((g) => g.vmid)
            expect(a.guests.map((g) => g.vmid)).toEqual([...vmids].sort((x, y) => x - y))
          } finally {
            await p.close()
          }
        },
      ),
      { numRuns: 15 },
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
    const p = pve()
    await create(p, 'pve2', 'qemu', { vmid: 150, name: 'moved', tags: 'proxops' })
    // the resources row still names the node the guest left (pmxcfs's status lags a migration)
    const reader = rewrite(p.client, 'clusterResources', async (type) =>
      (await p.client.clusterResources(type)).map((r) => (r.vmid === 150 ? { ...r, node: 'pve1' } : r)),
    )
    const live = await observe('homelab', reader)
    expect(live.guests.map((g) => [g.vmid, g.node])).toEqual([[150, 'pve2']])
    expect(live.unknownGuests).toEqual([])
  })

  it('takes a fresh guest from the node that lists it while pvestatd has not seen it yet', async () => {
    const p = pve({ resourcesLagMs: 60_000 })
    await create(p, 'pve3', 'qemu', { vmid: 151, name: 'fresh' })
    await start(p, 'pve3', 'qemu', 151)
    // pmxcfs lists the guest at once; its stats (status, name) wait for pvestatd's next broadcast
    const row = (await p.client.clusterResources('vm')).find((r) => r.vmid === 151)
    expect(row).toMatchObject({ node: 'pve3', status: 'unknown' })
    expect(row?.name).toBeUndefined()
    const live = await observe('homelab', p.client)
    expect(live.guests.map((g) => [g.vmid, g.node, g.status, g.name])).toEqual([[151, 'pve3', 'running', 'fresh']])
    // and when the resources answer lacks the guest altogether (a node whose vmlist lags), the node list decides
    const without = rewrite(p.client, 'clusterResources', async (type) =>
      (await p.client.clusterResources(type)).filter((r) => r.vmid !== 151),
    )
    expect((await observe('homelab', without)).guests.map((g) => [g.vmid, g.node])).toEqual([[151, 'pve3']])
  })
})

describe('observe under random read failures', () => {
  it('accounts for every guest as read or unknown, never absent, and every artifact storage as listed or unreadable (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 10 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
        fc.subarray(['pve1', 'pve2', 'pve3']),
        async (guests, seed, failPattern, offline) => {
          const p = simPve({ estate: { guests }, seed })
          try {
            for (const node of offline) p.sim.control.setNodeOnline(node, false)
            const all = p.sim.control.guests().map((g) => g.vmid)
            // every read but the cluster-wide ones fails or not, by the pattern
            let i = 0
            const failing = new Proxy(p.client, {
              get(target, prop, receiver) {
                const value = Reflect.get(target, prop, receiver) as unknown
                if (typeof value !== 'function') return value
                const method = (value as (...a: unknown[]) => Promise<unknown>).bind(target)
                if (prop === 'version' || prop === 'clusterResources') return method
                return async (...args: unknown[]) => {
                  if (failPattern[i++ % failPattern.length]) throw new Error(`injected ${String(prop)}`)
                  return method(...args)
                }
              },
            })
            const live = await observe('homelab', failing)
            const seen = [...live.guests.map((g) => g.vmid), ...live.unknownGuests.map((g) => g.vmid)].sort(
              (a, b) => a - b,
            )
            expect(seen).toEqual([...all].sort((a, b) => a - b))
            for (const g of live.unknownGuests) expect(g.unreadable).not.toBe('')
            for (const g of live.guests) expect(offline).not.toContain(g.node)
            const listed = new Set(
              p
                .requests()
                .map((r) => /^GET \/nodes\/([^/]+)\/storage\/local\/content/.exec(r)?.[1])
                .filter((n) => n !== undefined),
            )
            for (const node of ['pve1', 'pve2', 'pve3'].filter((n) => !offline.includes(n)))
              expect(listed.has(node) || live.unreadableStorages.some((s) => s.node === node)).toBe(true)
          } finally {
            await p.close()
          }
        },
      ),
      { numRuns: 30 },
    )
  })
})
