/**
 * `GET /cluster/ha/status/current` (pve-ha-manager PVE::API2::HA::Status `status`, with PVE::HA::Tools
 * get_verbose_service_state and count_active_services) on the simulator's clock: the quorum, master and LRM rows,
 * and a service row through `queued`, `starting`, `started` and a `migrate` with its target.
 */
import { describe, expect, it } from 'vitest'
import { makeSim, type Sim } from '../test-support/sim.js'
import { verboseServiceState } from './ha-status.js'

const LAG = 1000
const TASK = 1000
type Row = Record<string, unknown>
const rows = async (s: Sim): Promise<Row[]> => (await s.call('GET', '/cluster/ha/status/current')) as Row[]
const service = async (s: Sim, sid: string): Promise<Row | undefined> =>
  (await rows(s)).find((r) => r.id === `service:${sid}`)
function runFor(s: Sim, ms: number): void {
  for (let t = 0; t < ms; t += 100) {
    s.advance(100)
    s.sim.settle()
  }
}

describe('PVE::API2::HA::Status status', () => {
  it('without services: the quorum row only (no CRM master yet)', async () => {
    const s = makeSim()
    expect(await rows(s)).toEqual([{ id: 'quorum', type: 'quorum', node: 'pve1', status: 'OK', quorate: 1 }])
  })

  it('a service row goes queued -> starting -> started, and shows `migrate` with the LRM of its target active', async () => {
    const s = makeSim({ taskDurationMs: TASK })
    s.sim.setHaLag(LAG)
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512, scsi0: 'local-lvm:1' })
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', max_relocate: 2 })
    expect(await service(s, 'vm:100')).toEqual({
      id: 'service:vm:100',
      type: 'service',
      sid: 'vm:100',
      node: 'pve1',
      state: 'queued',
      status: 'vm:100 (pve1, queued)',
      request_state: 'started',
      max_relocate: 2,
    })
    const all = await rows(s)
    expect(all.map((r) => r.id)).toEqual(['quorum', 'master', 'lrm:pve1', 'lrm:pve2', 'service:vm:100'])
    expect(String(all[1]?.status)).toMatch(/^pve1 \(active, \w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4}\)$/)
    runFor(s, LAG + 100)
    expect(await service(s, 'vm:100')).toMatchObject({ crm_state: 'started', state: 'starting' })
    runFor(s, TASK + LAG)
    expect(await service(s, 'vm:100')).toMatchObject({ crm_state: 'started', state: 'started' })
    expect(String((await rows(s)).find((r) => r.id === 'lrm:pve1')?.status)).toMatch(
      /^pve1 \(active, watchdog active, /,
    )
    expect(String((await rows(s)).find((r) => r.id === 'lrm:pve2')?.status)).toMatch(/^pve2 \(idle, watchdog standby, /)
    await s.call('POST', '/cluster/ha/resources/vm:100/migrate', { node: 'pve2' })
    runFor(s, LAG + 100)
    expect(await service(s, 'vm:100')).toMatchObject({ node: 'pve1', crm_state: 'migrate', state: 'migrate' })
    expect(String((await rows(s)).find((r) => r.id === 'lrm:pve2')?.status)).toMatch(/^pve2 \(active, /)
  })

  it('get_verbose_service_state: deleting, ignored, queued, starting, stopping, clearing error flag', () => {
    expect(verboseServiceState(undefined, undefined, 'pve1')).toBe('deleting')
    expect(verboseServiceState(undefined, { type: 'vm', state: 'ignored' }, 'pve1')).toBe('ignored')
    expect(verboseServiceState(undefined, { type: 'vm' }, undefined)).toBe('not found')
    expect(verboseServiceState(undefined, { type: 'vm' }, 'pve1')).toBe('queued')
    const ss = (state: 'stopped' | 'started' | 'error', running?: boolean) =>
      ({ state, node: 'pve1', uid: 1, ...(running === undefined ? {} : { running }) }) as const
    expect(verboseServiceState(ss('stopped'), { type: 'vm', state: 'started' }, 'pve1')).toBe('starting')
    expect(verboseServiceState(ss('started', true), { type: 'vm', state: 'stopped' }, 'pve1')).toBe('stopping')
    expect(verboseServiceState(ss('error'), { type: 'vm', state: 'disabled' }, 'pve1')).toBe('clearing error flag')
  })
})
