import { describe, expect, it } from 'vitest'
import { makeSim } from '../test-support/sim.js'

describe('cluster views', () => {
  it('/version per selected release', async () => {
    expect(await makeSim().call('GET', '/version')).toMatchObject({ release: '9.1', version: '9.1.1' })
    expect(await makeSim({ pveVersion: '8.4' }).call('GET', '/version')).toMatchObject({ release: '8.4' })
  })

  it('/cluster/nextid is a string; with vmid it is 400 when taken', async () => {
    const s = makeSim()
    expect(await s.call('GET', '/cluster/nextid')).toBe('100')
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100 })
    expect(await s.call('GET', '/cluster/nextid')).toBe('101')
    expect(await s.call('GET', '/cluster/nextid', { vmid: 250 })).toBe('250')
    const e = await s.error('GET', '/cluster/nextid', { vmid: 100 })
    expect([e.status, e.errors]).toEqual([400, { vmid: 'VM 100 already exists' }])
  })

  it('/cluster/resources: fresh guests are `unknown` without a name until the next stats cycle; status lags', async () => {
    const s = makeSim({ resourcesLagMs: 10_000, taskDurationMs: 100 })
    await s.call('POST', '/nodes/pve1/qemu', { vmid: 100, name: 'web', memory: '2048' })
    s.advance(100)
    let r = await s.call('GET', '/cluster/resources', { type: 'vm' })
    expect(r).toEqual([{ id: 'qemu/100', type: 'qemu', vmid: 100, node: 'pve1', status: 'unknown' }])
    s.advance(10_000)
    r = await s.call('GET', '/cluster/resources', { type: 'vm' })
    expect(r[0]).toMatchObject({ status: 'stopped', name: 'web', template: 0, maxmem: 2048 * 1024 ** 2, vmid: 100 })
    await s.call('POST', '/nodes/pve1/qemu/100/status/start')
    s.advance(100)
    expect((await s.call('GET', '/cluster/resources', { type: 'vm' }))[0].status).toBe('stopped')
    expect((await s.call('GET', '/nodes/pve1/qemu/100/status/current')).status).toBe('running')
    s.advance(10_000)
    expect((await s.call('GET', '/cluster/resources', { type: 'vm' }))[0].status).toBe('running')
  })

  it('/nodes and offline nodes: listed offline, their paths answer 595; unknown nodes 500', async () => {
    const s = makeSim()
    s.sim.setNodeOnline('pve2', false)
    const nodes = await s.call('GET', '/nodes')
    expect(nodes.map((n: { node: string; status: string }) => [n.node, n.status])).toEqual([
      ['pve1', 'online'],
      ['pve2', 'offline'],
    ])
    expect((await s.error('GET', '/nodes/pve2/qemu')).status).toBe(595)
    const unknown = await s.error('GET', '/nodes/nope/qemu')
    expect(unknown.message).toMatch(/^hostname lookup 'nope' failed/)
    expect(await s.call('GET', '/cluster/config/nodes')).toEqual([{ node: 'pve1' }, { node: 'pve2' }])
  })

  it('guest lists only show that node; vmid is a number, name falls back to `VM <id>`', async () => {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100 })
    await s.run('POST', '/nodes/pve2/qemu', { vmid: 101, name: 'b' })
    expect(
      (await s.call('GET', '/nodes/pve1/qemu')).map((g: { vmid: number; name: string }) => [g.vmid, g.name]),
    ).toEqual([[100, 'VM 100']])
  })

  it('holds a 10,000-guest estate and lists it through /cluster/resources', async () => {
    const s = makeSim({ nodes: ['pve1', 'pve2', 'pve3', 'pve4'], estate: { guests: 10_000 } })
    const t0 = performance.now()
    const r = await s.call('GET', '/cluster/resources', { type: 'vm' })
    const ms = performance.now() - t0
    expect(r).toHaveLength(10_000)
    expect(
      r.every((g: { status: string; name?: string }) => g.status !== 'unknown' && typeof g.name === 'string'),
    ).toBe(true)
    // informative only (no wall-clock assertion on a shared machine)
    console.info(`/cluster/resources for 10,000 guests: ${ms.toFixed(0)} ms`)
  })
})

describe('tasks', () => {
  it('UPID format, log pages with n/t, `no such task` window, unparsable upid', async () => {
    const s = makeSim()
    s.sim.setNoSuchTaskWindow(500)
    const upid = await s.call('POST', '/nodes/pve1/qemu', { vmid: 100 })
    const path = `/nodes/pve1/tasks/${encodeURIComponent(upid)}`
    expect((await s.error('GET', `${path}/status`)).errors).toEqual({ upid: 'no such task' })
    s.advance(600)
    expect((await s.call('GET', `${path}/status`)).status).toBe('running')
    s.advance(1000)
    const log = await s.call('GET', `${path}/log`)
    expect(log[0]).toEqual({ n: 1, t: expect.any(String) })
    expect(log.at(-1).t).toBe('TASK OK')
    expect((await s.error('GET', '/nodes/pve1/tasks/garbage/status')).errors).toEqual({
      upid: 'unable to parse worker upid',
    })
    const other = await s.error('GET', `/nodes/pve2/tasks/${encodeURIComponent(upid)}/status`)
    expect(other.errors).toEqual({ upid: 'no such task' })
  })

  it('WARNINGS: n is a success exit status; per-type duration and failure injection', async () => {
    const s = makeSim()
    s.sim.setTaskBehaviour('qmcreate', { warnings: 2 })
    const r = await s.run('POST', '/nodes/pve1/qemu', { vmid: 100 })
    expect(r.exitstatus).toBe('WARNINGS: 2')
    expect(r.log.at(-1)).toBe('TASK WARNINGS: 2')
    s.sim.setTaskBehaviour('qmstart', { durationMs: 5000 })
    const upid = await s.call('POST', '/nodes/pve1/qemu/100/status/start')
    s.advance(4000)
    expect(s.sim.guest(100)?.status).toBe('stopped')
    s.advance(1000)
    expect(s.sim.guest(100)?.status).toBe('running')
    expect(s.sim.tasks().find((t) => t.upid === upid)?.exitstatus).toBe('OK')
    const list = await s.call('GET', '/nodes/pve1/tasks', { vmid: 100 })
    expect(list.map((t: { type: string }) => t.type)).toEqual(['qmstart', 'qmcreate'])
    expect(
      (await s.call('GET', '/nodes/pve1/tasks', { statusfilter: 'warning' })).map((t: { type: string }) => t.type),
    ).toEqual(['qmcreate'])
    expect(await s.call('GET', '/nodes/pve1/tasks', { statusfilter: 'error' })).toEqual([])
    expect(await s.call('GET', '/nodes/pve1/tasks', { source: 'active' })).toEqual([])
  })
})

describe('estates are derived from the seed only', () => {
  it('same seed, same estate (config text and digests); template every 250th; artifacts on local', async () => {
    const a = makeSim({ estate: { guests: 50 } })
    const b = makeSim({ estate: { guests: 50 } })
    expect(a.sim.guests().map((g) => g.digest)).toEqual(b.sim.guests().map((g) => g.digest))
    expect(a.sim.configText(1000)).toBe(b.sim.configText(1000))
    expect(
      a.sim
        .guests()
        .filter((g) => g.config.template === '1')
        .map((g) => g.vmid),
    ).toEqual([1000])
    expect((await a.call('GET', '/nodes/pve1/storage/local/content', { content: 'import' }))[0].volid).toBe(
      'local:import/debian-12-genericcloud-amd64.qcow2',
    )
  })
})
