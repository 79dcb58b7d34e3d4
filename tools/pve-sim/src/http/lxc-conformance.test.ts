/**
 * LXC specifics over raw HTTP, each test named after the pve-container function it follows:
 * create with `start=1` (PVE::API2::LXC create_vm -> PVE::API2::LXC::Status vm_start), the early checks of
 * resize_vm, and raw `lxc.*` lines (PVE::LXC::Config parse_pct_config / write_pct_config).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { apiRequest, dataOf, waitTask, type RawResponse } from './test-support/raw.js'

let sim: Simulator
let auth: Record<string, string>
let template: string
const req = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> =>
  apiRequest(sim, auth, method, path, params)
const data = dataOf
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function createCt(vmid: number, extra: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const r = await req('POST', '/nodes/pve1/lxc', {
    vmid: String(vmid),
    ostemplate: template,
    rootfs: 'local-lvm:2',
    ...extra,
  })
  expect(r.status, r.body).toBe(200)
  return waitTask(sim, auth, 'pve1', data<string>(r))
}

async function tasksOf(vmid: number, type: string): Promise<Record<string, unknown>[]> {
  return data<Record<string, unknown>[]>(
    await req('GET', `/nodes/pve1/tasks?vmid=${vmid}&typefilter=${type}&source=all`),
  )
}

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 30, resourcesLagMs: 0, log: () => {} })
  auth = { Authorization: sim.token.header }
  template = sim.control.addVolume('pve1', 'local', {
    filename: 'debian-12-standard_12.7-1_amd64.tar.zst',
    content: 'vztmpl',
  })
})
afterAll(async () => {
  await sim.close()
})
beforeEach(() => {
  sim.control.setTaskBehaviour('vzstart', null)
})

describe('create with start=1 (PVE::API2::LXC create_vm -> PVE::API2::LXC::Status vm_start)', () => {
  it('the vzcreate task ends OK with the CT stopped; a separate vzstart task starts it', async () => {
    // held, so the reads below see it running however loaded the machine is
    sim.control.setTaskBehaviour('vzstart', { hold: true })
    const st = await createCt(300, { start: '1' })
    expect(st.exitstatus).toBe('OK')
    expect(data<{ status: string }>(await req('GET', '/nodes/pve1/lxc/300/status/current')).status).toBe('stopped')
    const [start] = await tasksOf(300, 'vzstart')
    expect(start).toMatchObject({ type: 'vzstart', id: '300' })
    expect(start?.status).toBe('RUNNING') // the task list's status of an active task
    sim.control.setTaskBehaviour('vzstart', null)
    const done = await waitTask(sim, auth, 'pve1', String(start?.upid))
    expect(done.exitstatus).toBe('OK')
    expect(data<{ status: string }>(await req('GET', '/nodes/pve1/lxc/300/status/current')).status).toBe('running')
  })

  it('the vzstart task fails on its own: the create stays OK and the CT stays stopped', async () => {
    sim.control.setTaskBehaviour('vzstart', { fail: "startup for container '301' failed" })
    const st = await createCt(301, { start: '1' })
    expect(st.exitstatus).toBe('OK')
    let start: Record<string, unknown> | undefined
    for (let i = 0; i < 100 && (start?.status === undefined || start.status === 'RUNNING'); i++) {
      await sleep(20)
      start = (await tasksOf(301, 'vzstart'))[0]
    }
    expect(start?.status).toBe("startup for container '301' failed")
    expect(data<{ status: string }>(await req('GET', '/nodes/pve1/lxc/301/status/current')).status).toBe('stopped')
  })

  it('without start no vzstart task is forked', async () => {
    await createCt(302)
    await sleep(60)
    expect(await tasksOf(302, 'vzstart')).toEqual([])
  })
})

describe('PUT /lxc/{vmid}/resize (PVE::API2::LXC resize_vm load_and_check before fork_worker)', () => {
  beforeAll(async () => {
    await createCt(310)
  })

  const resize = (params: Record<string, string>) =>
    req('PUT', '/nodes/pve1/lxc/310/resize', { disk: 'rootfs', ...params })

  it('an equal size is an immediate 500 `disk is already at specified size` (absolute and +0)', async () => {
    for (const size of ['2G', '+0']) {
      const r = await resize({ size })
      expect([r.status, (r.json as { message: string }).message]).toEqual([500, 'disk is already at specified size\n'])
    }
  })

  it('a smaller size is an immediate 500 `unable to shrink disk size`', async () => {
    const r = await resize({ size: '1G' })
    expect([r.status, (r.json as { message: string }).message]).toEqual([500, 'unable to shrink disk size\n'])
  })

  it('a config lock is an immediate 500 (check_lock), checked before the digest', async () => {
    sim.control.setLock(310, 'backup')
    try {
      const r = await resize({ size: '+1G', digest: '0'.repeat(40) })
      expect([r.status, (r.json as { message: string }).message]).toEqual([500, 'CT is locked (backup)\n'])
    } finally {
      sim.control.setLock(310, null)
    }
  })

  it('a stale digest is an immediate 500 (assert_if_modified)', async () => {
    const r = await resize({ size: '+1G', digest: '0'.repeat(40) })
    expect(r.status).toBe(500)
    expect((r.json as { message: string }).message).toBe(
      'detected modified configuration - file changed by other user? Try again.\n',
    )
  })

  it('a real grow forks a resize task that writes the new size', async () => {
    const digest = data<{ digest: string }>(await req('GET', '/nodes/pve1/lxc/310/config')).digest
    const r = await resize({ size: '+1G', digest })
    expect(r.status, r.body).toBe(200)
    expect((await waitTask(sim, auth, 'pve1', data<string>(r))).exitstatus).toBe('OK')
    expect(data<{ rootfs: string }>(await req('GET', '/nodes/pve1/lxc/310/config')).rootfs).toBe(
      'local-lvm:vm-310-disk-0,size=3G',
    )
    // the grown size is now the current one
    const again = await resize({ size: '3G' })
    expect((again.json as { message: string }).message).toBe('disk is already at specified size\n')
  })
})

describe('raw lxc.* lines (PVE::LXC::Config parse_pct_config, write_pct_config)', () => {
  it('GET .../config returns them as [key, value] pairs under `lxc`, in file order; /pending leaves them out', async () => {
    await createCt(320)
    const before = data<{ digest: string }>(await req('GET', '/nodes/pve1/lxc/320/config')).digest
    sim.control.setRawLxc(320, [
      ['lxc.cgroup2.devices.allow', 'c 10:200 rwm'],
      ['lxc.mount.entry', '/dev/net dev/net none bind,create=dir'],
      ['lxc.cgroup2.devices.allow', 'c 188:* rwm'],
    ])
    const cfg = data<Record<string, unknown>>(await req('GET', '/nodes/pve1/lxc/320/config'))
    expect(cfg.lxc).toEqual([
      ['lxc.cgroup2.devices.allow', 'c 10:200 rwm'],
      ['lxc.mount.entry', '/dev/net dev/net none bind,create=dir'],
      ['lxc.cgroup2.devices.allow', 'c 188:* rwm'],
    ])
    // the raw lines are part of the file, so the digest moves
    expect(cfg.digest).not.toBe(before)
    expect(sim.control.configText(320)).toMatch(
      /\nunprivileged: 1\nlxc\.cgroup2\.devices\.allow: c 10:200 rwm\nlxc\.mount\.entry: /,
    )
    const pending = data<{ key: string }[]>(await req('GET', '/nodes/pve1/lxc/320/pending'))
    expect(pending.map((p) => p.key)).not.toContain('lxc')
  })

  it('a config write through the API keeps them', async () => {
    const r = await req('PUT', '/nodes/pve1/lxc/320/config', { hostname: 'ct-320' })
    expect(r.status, r.body).toBe(200)
    const cfg = data<Record<string, unknown>>(await req('GET', '/nodes/pve1/lxc/320/config'))
    expect(cfg.hostname).toBe('ct-320')
    expect((cfg.lxc as unknown[]).length).toBe(3)
  })

  it('a container without raw lines has no `lxc` key', async () => {
    await createCt(321)
    expect(data<Record<string, unknown>>(await req('GET', '/nodes/pve1/lxc/321/config')).lxc).toBeUndefined()
  })
})
