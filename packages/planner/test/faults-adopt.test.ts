/**
 * Reads within budget, faults (failed reads, offline node, lock contention, locked guest, failed task) and
 * the adopt round trip, against the simulator.
 */
import { describe, expect, it } from 'vitest'
import { adopt, observe } from '../src/index.js'
import { useEnv, small, testVm, cycle, failures, manifest } from './helpers.js'
import { known } from '../src/inventory.js'

const env = useEnv({ estate: { guests: 12 }, seed: 7 })

const vm = (vmid: number, node = 'pve1', spec: Record<string, unknown> = {}) =>
  testVm(vmid, { node, memory: '512MiB', ...small('4GiB'), ...spec }, `f${vmid}`)

describe('observe against the simulator', () => {
  it('reads a cluster within guests + 2 x nodes + storage listings + pools + 6 requests', async () => {
    env.sim.stats.reset()
    const live = await observe('homelab', env.reader)
    const guests = live.guests.length + live.unknownGuests.length
    // one `content=` listing per storage and artifact content type it holds (iso, vztmpl, import on `local`)
    const listed = env.sim.stats.count('GET', '/nodes/{node}/storage/{storage}/content')
    expect(listed).toBe(3 * live.nodes.filter((n) => n.online).length)
    expect(guests).toBe(12)
    // the 6 cluster-wide reads: /version, /cluster/resources, /cluster/backup, the HA resources and preferences,
    // the pool list; then one read per pool (its members)
    const pools = known(live.pools)?.length ?? 0
    expect(env.sim.stats.count('GET', '/pools')).toBe(1 + pools)
    expect(env.sim.stats.requests.length).toBeLessThanOrEqual(guests + 2 * live.nodes.length + listed + pools + 6)
    expect(env.sim.stats.count('GET', '/nodes/{node}/qemu/{vmid}/config')).toBe(0)
    expect(env.sim.stats.count('GET', '/nodes/{node}/qemu/{vmid}/status/current')).toBe(0)
  })
})

describe('faults (simulator)', () => {
  it('marks a guest whose read keeps failing unknown: no create, no delete, reported (read error is never "absent")', async () => {
    const desired = [vm(400)]
    expect(failures((await cycle(env, desired)).report)).toEqual([])
    env.sim.control.failNext({
      method: 'GET',
      path: '/nodes/pve1/qemu/400/pending',
      status: 500,
      count: 8,
      message: 'Internal Server Error',
    })
    const p = await cycle(env, [], {
      policy: { allowEmpty: ['VM'], pruneBudget: 'unlimited', pruneRatioLimit: 1 },
      dryRun: true,
    })
    expect(p.live.unknownGuests.map((g) => g.vmid)).toContain(400)
    expect(p.plan.actions.filter((a) => a.vmid === 400)).toEqual([])
    expect(p.plan.skips.filter((s) => s.vmid === 400).map((s) => s.code)).toEqual(['unknown'])
    const again = await cycle(env, desired, { dryRun: true })
    expect(again.plan.actions.filter((a) => a.vmid === 400)).toEqual([])
    env.sim.control.clearFaults()
  })

  it('creates nothing on an offline node and carries on elsewhere', async () => {
    env.sim.control.setNodeOnline('pve3', false)
    try {
      const r = await cycle(env, [vm(410, 'pve3'), vm(411, 'pve2')], { policy: { pruneBudget: 0 } })
      expect(r.plan.actions.map((a) => a.vmid)).toEqual([411])
      expect(r.plan.skips.some((s) => s.vmid === 410 || s.node === 'pve3')).toBe(true)
      expect(failures(r.report)).toEqual([])
    } finally {
      env.sim.control.setNodeOnline('pve3', true)
    }
    expect(env.sim.control.guest(410)).toBeUndefined()
  })

  it("retries PVE's lock timeout and succeeds once the lock is released", async () => {
    const desired = [vm(420)]
    expect(failures((await cycle(env, desired, { policy: { pruneBudget: 0 } })).report)).toEqual([])
    env.sim.control.setFlockContention(420, true)
    setTimeout(() => env.sim.control.setFlockContention(420, false), 150)
    const r = await cycle(env, [vm(420, 'pve1', { memory: '1GiB' })], {
      policy: { pruneBudget: 0 },
      execute: { lockRetryDelayMs: 100 },
    })
    expect(failures(r.report)).toEqual([])
    expect(env.sim.control.guest(420)!.config.memory).toBe('1024')
  })

  it('skips a guest that carries a config lock and reports it', async () => {
    env.sim.control.setLock(420, 'backup')
    const r = await cycle(env, [vm(420, 'pve1', { memory: '2GiB' })], { policy: { pruneBudget: 0 }, dryRun: true })
    expect(r.plan.actions.filter((a) => a.vmid === 420)).toEqual([])
    expect(r.plan.skips.filter((s) => s.vmid === 420).map((s) => s.code)).toEqual(['locked'])
    env.sim.control.setLock(420, null)
  })

  it("reports a failed task with PVE's error and leaves unrelated work done", async () => {
    expect(
      failures((await cycle(env, [vm(430, 'pve1', { state: 'stopped' })], { policy: { pruneBudget: 0 } })).report),
    ).toEqual([])
    env.sim.control.setTaskBehaviour('qmstart', { fail: 'start failed: QEMU exited with code 1' })
    try {
      const r = await cycle(env, [vm(430, 'pve1'), vm(431, 'pve2', { state: 'stopped' })], {
        policy: { pruneBudget: 0 },
      })
      const byVmid = new Map(r.report!.results.map((x) => [x.vmid, x]))
      expect(byVmid.get(430)).toMatchObject({ type: 'start', status: 'failed' })
      expect(byVmid.get(430)!.error).toContain('QEMU exited with code 1')
      expect(byVmid.get(431)).toMatchObject({ type: 'create', status: 'ok' })
      expect(r.report!.complete).toBe(false)
    } finally {
      env.sim.control.setTaskBehaviour('qmstart', null)
    }
  })
})

describe('adopt round trip (simulator)', () => {
  it('adopts untagged live guests read-only; a diff of the adopted manifests shows only the ownership claim', async () => {
    const writes = env.client.writes
    const live = await observe('homelab', env.reader)
    const estate = live.guests.filter((g) => g.vmid >= 1000)
    const result = adopt({ ...live, guests: estate }, { cluster: 'homelab' })
    expect(env.client.writes).toBe(writes)
    const complete = result.files.filter((f) => f.incomplete.length === 0 && f.vmid !== undefined)
    expect(complete.length).toBeGreaterThan(0)
    const desired = complete.map((f) => manifest(f.document))
    const r = await cycle(env, desired, { policy: { pruneBudget: 0 }, dryRun: true })
    // only the ownership claim, plus keys adopt listed as gaps (e.g. an unset `cpu` adopted as PVE's default)
    for (const action of r.plan.actions) {
      expect(['update', 'shutdown-then-update']).toContain(action.type)
      const gapKeys = result.gaps.filter((g) => g.id === String(action.vmid)).map((g) => g.field)
      for (const diff of action.diffs)
        expect(diff.key === 'tags' || gapKeys.includes(diff.key), `${action.id}: ${diff.key}`).toBe(true)
      expect(action.diffs.map((d) => d.key)).toContain('tags')
    }
    expect(r.plan.actions.map((a) => a.vmid).sort()).toEqual(complete.map((f) => f.vmid).sort())
    // LXCs are INCOMPLETE (their CT template is unrecoverable) and not composed
    for (const f of result.files.filter((x) => x.kind === 'LXC')) expect(f.incomplete.join()).toContain('spec.template')
  })
})
