/**
 * Conformance, over raw HTTPS: stopping a guest applies its [PENDING] section and rewrites the config.
 *   - qemu-server `_do_vm_stop` -> `vm_stop_cleanup($apply_pending_changes = 1)` -> `vmconfig_apply_pending`:
 *     API stop and shutdown only; `qm cleanup` (a shutdown from inside the guest, a crash) passes 0.
 *   - pve-container `lxc-pve-poststop-hook` -> `vmconfig_apply_pending` + `write_config`: every stop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { apiRequest, okDataOf, waitTask, type RawResponse } from './test-support/raw.js'

const TMPL = 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst'
let sim: Simulator
let auth: Record<string, string>
const req = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> =>
  apiRequest(sim, auth, method, path, params)
const data = okDataOf
/** a worker call: 200 with a UPID, then the task's exit status */
async function task(method: string, path: string, params: Record<string, string> = {}): Promise<string> {
  const upid = data<string>(await req(method, path, params))
  return String((await waitTask(sim, auth, 'pve1', upid)).exitstatus)
}
const config = (type: string, vmid: number, current = false) =>
  req('GET', `/nodes/pve1/${type}/${vmid}/config${current ? '?current=1' : ''}`).then((r) =>
    data<Record<string, unknown>>(r),
  )
const pending = (type: string, vmid: number) =>
  req('GET', `/nodes/pve1/${type}/${vmid}/pending`).then((r) => data<Record<string, unknown>[]>(r))
const withPending = (rows: Record<string, unknown>[]) =>
  rows.filter((r) => r.pending !== undefined || r.delete !== undefined).map((r) => r.key)

async function runningVm(vmid: number, extra: Record<string, string> = {}): Promise<void> {
  expect(await task('POST', '/nodes/pve1/qemu', { vmid: String(vmid), memory: '512', cores: '1', ...extra })).toBe('OK')
  expect(await task('POST', `/nodes/pve1/qemu/${vmid}/status/start`)).toBe('OK')
}
async function runningCt(vmid: number): Promise<void> {
  expect(
    await task('POST', '/nodes/pve1/lxc', {
      vmid: String(vmid),
      ostemplate: TMPL,
      rootfs: 'local-lvm:2',
      memory: '512',
    }),
  ).toBe('OK')
  expect(await task('POST', `/nodes/pve1/lxc/${vmid}/status/start`)).toBe('OK')
}

beforeAll(async () => {
  sim = await startSimulator({ taskDurationMs: 20, resourcesLagMs: 0, log: () => {} })
  auth = { Authorization: sim.token.header }
  sim.control.addVolume('pve1', 'local', { filename: 'debian-12-standard_12.7-1_amd64.tar.zst', content: 'vztmpl' })
})
afterAll(async () => {
  await sim.close()
})

describe('qemu-server vm_stop_cleanup -> vmconfig_apply_pending (API stop and shutdown)', () => {
  for (const action of ['shutdown', 'stop'] as const) {
    it(`status/${action} of a running VM applies [PENDING]: new config, new digest, the old digest refused`, async () => {
      const vmid = action === 'shutdown' ? 300 : 301
      await runningVm(vmid)
      // cores is not hot-pluggable: PVE keeps it pending on a running VM
      expect((await req('PUT', `/nodes/pve1/qemu/${vmid}/config`, { cores: '4' })).status).toBe(200)
      const before = await config('qemu', vmid)
      expect((await config('qemu', vmid, true)).cores).toBe(1)
      expect(withPending(await pending('qemu', vmid))).toEqual(['cores'])

      expect(await task('POST', `/nodes/pve1/qemu/${vmid}/status/${action}`)).toBe('OK')
      const after = await config('qemu', vmid, true)
      expect(after.cores).toBe(4)
      expect(withPending(await pending('qemu', vmid))).toEqual([])
      expect(after.digest).not.toBe(before.digest)
      const stale = await req('PUT', `/nodes/pve1/qemu/${vmid}/config`, {
        memory: '1024',
        digest: String(before.digest),
      })
      expect(stale.status).toBe(500)
      expect(stale.body).toContain('checksum mismatch')
      const fresh = await req('PUT', `/nodes/pve1/qemu/${vmid}/config`, {
        memory: '1024',
        digest: String(after.digest),
      })
      expect(fresh.status, fresh.body).toBe(200)
    })
  }

  it('pending disk changes: a pending delete detaches the volume to unusedN, a pending new disk lands', async () => {
    await runningVm(302, { sata0: 'local-lvm:1' })
    const volume = String((await config('qemu', 302)).sata0).split(',')[0]
    // sata is not a hot-pluggable bus: both changes wait in [PENDING], the new disk already allocated
    expect((await req('PUT', `/nodes/pve1/qemu/302/config`, { delete: 'sata0', sata1: 'local-lvm:2' })).status).toBe(
      200,
    )
    expect(withPending(await pending('qemu', 302)).sort()).toEqual(['sata0', 'sata1'])
    expect(await task('POST', '/nodes/pve1/qemu/302/status/shutdown')).toBe('OK')
    const after = await config('qemu', 302, true)
    expect(after.sata0).toBeUndefined()
    expect(after.unused0).toBe(volume)
    expect(after.sata1).toMatch(/^local-lvm:vm-302-disk-1,size=2G$/)
    expect(withPending(await pending('qemu', 302))).toEqual([])
  })

  it('nothing pending: the stop leaves the config and its digest alone', async () => {
    await runningVm(303)
    const before = await config('qemu', 303)
    expect(await task('POST', '/nodes/pve1/qemu/303/status/stop')).toBe('OK')
    expect((await config('qemu', 303)).digest).toBe(before.digest)
  })

  it('a shutdown that times out (no forceStop) applies nothing; with forceStop the SIGTERM path cleans up and applies', async () => {
    await runningVm(304)
    expect((await req('PUT', '/nodes/pve1/qemu/304/config', { cores: '2' })).status).toBe(200)
    sim.control.setIgnoresShutdown(304, true)
    expect(await task('POST', '/nodes/pve1/qemu/304/status/shutdown', { timeout: '1' })).toBe(
      'VM quit/powerdown failed - got timeout',
    )
    expect(withPending(await pending('qemu', 304))).toEqual(['cores'])
    expect(await task('POST', '/nodes/pve1/qemu/304/status/shutdown', { timeout: '1', forceStop: '1' })).toBe('OK')
    expect((await config('qemu', 304, true)).cores).toBe(2)
  })

  it('a shutdown from inside the guest (qm cleanup, apply_pending_changes = 0) leaves [PENDING]; start applies it', async () => {
    await runningVm(305)
    expect((await req('PUT', '/nodes/pve1/qemu/305/config', { cores: '3' })).status).toBe(200)
    const before = await config('qemu', 305)
    sim.control.driftPower(305, 'stopped')
    expect(data<{ status: string }>(await req('GET', '/nodes/pve1/qemu/305/status/current')).status).toBe('stopped')
    expect(withPending(await pending('qemu', 305))).toEqual(['cores'])
    expect((await config('qemu', 305)).digest).toBe(before.digest)
    // vm_stop of a VM that is not running returns before the cleanup: still pending
    expect(await task('POST', '/nodes/pve1/qemu/305/status/stop')).toBe('OK')
    expect(withPending(await pending('qemu', 305))).toEqual(['cores'])
    expect(await task('POST', '/nodes/pve1/qemu/305/status/start')).toBe('OK')
    expect((await config('qemu', 305, true)).cores).toBe(3)
  })
})

describe('qemu-server vm_stop and the LXC vm_shutdown worker hold lock_config while they wait', () => {
  const upidOf = (r: RawResponse) => data<string>(r)

  it('a config write during a VM shutdown meets the flock; after the shutdown it goes through', async () => {
    await runningVm(306)
    sim.control.setIgnoresShutdown(306, true)
    // held: the write below meets the running shutdown however loaded the machine is
    sim.control.setTaskBehaviour('qmshutdown', { hold: true })
    const shutdown = upidOf(await req('POST', '/nodes/pve1/qemu/306/status/shutdown', { timeout: '1', forceStop: '1' }))
    const during = await req('PUT', '/nodes/pve1/qemu/306/config', { memory: '1024' })
    sim.control.setTaskBehaviour('qmshutdown', null)
    expect(during.status).toBe(500)
    expect(during.body).toContain("can't lock file '/var/lock/qemu-server/lock-306.conf' - got timeout")
    expect((await waitTask(sim, auth, 'pve1', shutdown)).exitstatus).toBe('OK')
    expect((await req('PUT', '/nodes/pve1/qemu/306/config', { memory: '1024' })).status).toBe(200)
  })

  it('a config write during a CT shutdown meets the flock', async () => {
    await runningCt(314)
    sim.control.setIgnoresShutdown(314, true)
    // held: the write below meets the running shutdown however loaded the machine is
    sim.control.setTaskBehaviour('vzshutdown', { hold: true })
    const shutdown = upidOf(await req('POST', '/nodes/pve1/lxc/314/status/shutdown', { timeout: '1', forceStop: '1' }))
    const during = await req('PUT', '/nodes/pve1/lxc/314/config', { memory: '1024' })
    sim.control.setTaskBehaviour('vzshutdown', null)
    expect(during.status).toBe(500)
    expect(during.body).toContain("can't lock file '/run/lock/lxc/pve-config-314.lock' - got timeout")
    expect((await waitTask(sim, auth, 'pve1', shutdown)).exitstatus).toBe('OK')
    expect((await req('PUT', '/nodes/pve1/lxc/314/config', { memory: '1024' })).status).toBe(200)
  })
})

describe('pve-container lxc-pve-poststop-hook -> vmconfig_apply_pending (every stop)', () => {
  const cases = [
    ['status/shutdown', 310, () => task('POST', '/nodes/pve1/lxc/310/status/shutdown')],
    ['status/stop', 311, () => task('POST', '/nodes/pve1/lxc/311/status/stop')],
    ['a stop from inside the container', 312, async () => (sim.control.driftPower(312, 'stopped'), 'OK')],
  ] as const
  for (const [what, vmid, stop] of cases) {
    it(`${what} applies [PENDING] and rewrites the config (new digest)`, async () => {
      await runningCt(vmid)
      // ostype is no hot-plug option of a running CT: it waits in [PENDING]
      expect((await req('PUT', `/nodes/pve1/lxc/${vmid}/config`, { ostype: 'ubuntu' })).status).toBe(200)
      const before = await config('lxc', vmid)
      expect(withPending(await pending('lxc', vmid))).toEqual(['ostype'])
      expect(await stop()).toBe('OK')
      const after = await config('lxc', vmid, true)
      expect(after.ostype).toBe('ubuntu')
      expect(withPending(await pending('lxc', vmid))).toEqual([])
      expect(after.digest).not.toBe(before.digest)
      const stale = await req('PUT', `/nodes/pve1/lxc/${vmid}/config`, {
        memory: '1024',
        digest: String(before.digest),
      })
      expect(stale.status).toBe(500)
      expect(stale.body).toContain('detected modified configuration')
    })
  }

  it('a changed mount point waits unallocated and is allocated by the stop, the old volume becoming unusedN', async () => {
    await runningCt(313)
    expect((await req('PUT', '/nodes/pve1/lxc/313/config', { mp0: 'local-lvm:1,mp=/data' })).status).toBe(200)
    const old = String((await config('lxc', 313)).mp0).split(',')[0]
    expect(old).toBe('local-lvm:vm-313-disk-1')
    expect((await req('PUT', '/nodes/pve1/lxc/313/config', { mp0: 'local-lvm:3,mp=/data' })).status).toBe(200)
    expect((await config('lxc', 313)).mp0).toBe('local-lvm:3,mp=/data')
    expect(await task('POST', '/nodes/pve1/lxc/313/status/shutdown')).toBe('OK')
    const after = await config('lxc', 313, true)
    expect(after.mp0).toBe('local-lvm:vm-313-disk-2,mp=/data,size=3G')
    expect(after.unused0).toBe(old)
  })
})
