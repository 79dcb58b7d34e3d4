/**
 * Conformance over raw HTTPS for the hotplug routing of NICs and the snapshot, status, task and resource
 * views. Each test names the PVE function it follows (qemu-server, pve-container, pve-guest-common,
 * pve-manager).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { form, raw, waitTask, type RawResponse } from './test-support/raw.js'

let sim: Simulator
let auth: Record<string, string>
const req = (
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> =>
  raw(sim, method, `/api2/json${path}`, { ...opts, headers: { ...auth, ...(opts.headers ?? {}) } })
const formReq = (method: string, path: string, params: Record<string, string>): Promise<RawResponse> => {
  const f = form(params)
  return req(method, path, { headers: f.headers, body: f.body })
}
const data = <T = Record<string, unknown>>(r: RawResponse): T => (r.json as { data: T }).data
async function task(r: RawResponse, node = 'pve1'): Promise<Record<string, unknown>> {
  expect(r.status, r.body).toBe(200)
  return waitTask(sim, auth, node, data<string>(r))
}
async function ok(r: RawResponse, node = 'pve1'): Promise<void> {
  const st = await task(r, node)
  expect(st.exitstatus).toBe('OK')
}
const config = async (vmid: number, type = 'qemu'): Promise<Record<string, unknown>> =>
  data(await req('GET', `/nodes/pve1/${type}/${vmid}/config`))
const pending = async (vmid: number): Promise<Record<string, unknown>[]> =>
  data(await req('GET', `/nodes/pve1/qemu/${vmid}/pending`))

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 10, resourcesLagMs: 0, log: () => {} })
  auth = { Authorization: sim.token.header }
})
afterAll(async () => {
  await sim.close()
})

describe('qemu-server vmconfig_update_net', () => {
  it('re-links bridge, tag, firewall and rate live without network hotplug; a model change waits', async () => {
    const mac = 'BC:24:11:00:00:42'
    await ok(
      await formReq('POST', '/nodes/pve1/qemu', {
        vmid: '300',
        memory: '512',
        hotplug: 'disk',
        net0: `virtio=${mac},bridge=vmbr0`,
      }),
    )
    await ok(await formReq('POST', '/nodes/pve1/qemu/300/status/start', {}))
    const live = `virtio=${mac},bridge=vmbr1,firewall=1,rate=10,tag=5`
    expect((await formReq('PUT', '/nodes/pve1/qemu/300/config', { net0: live })).status).toBe(200)
    expect((await config(300)).net0).toBe(live)
    expect((await pending(300)).find((p) => p.key === 'net0')).toEqual({ key: 'net0', value: live })
    // a new model needs an unplug (vm_deviceunplug), which needs `network` in hotplug: it stays pending
    const e1000 = `e1000=${mac},bridge=vmbr1`
    expect((await formReq('PUT', '/nodes/pve1/qemu/300/config', { net0: e1000 })).status).toBe(200)
    expect((await pending(300)).find((p) => p.key === 'net0')).toEqual({ key: 'net0', value: live, pending: e1000 })
  })
})
