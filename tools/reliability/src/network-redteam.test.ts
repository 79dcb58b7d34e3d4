/**
 * Red-team cases of the SDN kinds (issue 41, issue 39 item 5), the real CLI against the simulator behind a
 * proxy that records every request: an SDN edit someone left pending on an object git does not declare (a subnet
 * of a hand-made vnet) must never be applied by ProxOps' `PUT /cluster/sdn`, which applies every pending edit;
 * and a malformed `pending=1` listing (an item of a state PVE never gives) makes SDN unreadable: nothing written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { doc, makeRepo, runCli, type Repo, simAdmin } from './cli-harness.js'
import { startHostilePve, type HostilePve } from './hostile-pve.js'

let sim: Simulator
let pve: HostilePve
let repo: Repo
let admin: PveClient

const FILES: Record<string, string> = {
  'zone/c/lab.yaml': doc('Zone', 'lab', 'type: simple'),
  'vnet/c/web.yaml': doc('VNet', 'web', 'zone: lab'),
}
const writes = () => pve.seen.filter((s) => s.method !== 'GET')
const applies = () => pve.seen.filter((s) => s.method === 'PUT' && s.path === '/cluster/sdn')

beforeAll(async () => {
  sim = await startSimulator({ taskDurationMs: 20, authFailureDelayMs: 0, resourcesLagMs: 0, log: () => {} })
  pve = await startHostilePve(sim)
  repo = makeRepo(pve, FILES)
  admin = simAdmin(sim)
}, 60_000)
afterAll(async () => {
  await admin.close()
  repo.cleanup()
  await pve.close()
  await sim.close()
})

describe('SDN red team (CLI)', { timeout: 120_000 }, () => {
  it("someone else's pending subnet edit on a vnet git does not declare is never applied", async () => {
    // by hand, applied: a zone and vnet of their own with a subnet; then an unapplied gateway change on it
    await admin.request('POST', '/cluster/sdn/zones', { params: { zone: 'theirs', type: 'simple' } })
    await admin.request('POST', '/cluster/sdn/vnets', { params: { vnet: 'db', zone: 'theirs' } })
    await admin.request('POST', '/cluster/sdn/vnets/db/subnets', {
      params: { subnet: '10.5.0.0/24', type: 'subnet', gateway: '10.5.0.1' },
    })
    await admin.request('PUT', '/cluster/sdn')
    await new Promise((r) => setTimeout(r, 300))
    await admin.request('PUT', '/cluster/sdn/vnets/db/subnets/theirs-10.5.0.0-24', {
      params: { gateway: '10.5.0.254' },
    })

    pve.seen.length = 0
    const diff = await runCli(['diff', '--detailed-exitcode'], repo)
    expect(diff.code).not.toBe(0)
    expect(diff.stdout + diff.stderr).toContain('sdn-pending')
    expect(diff.stdout + diff.stderr).toContain('Subnet/db/10.5.0.0/24')
    expect(diff.stdout + diff.stderr).toContain('pending keys: gateway')
    const apply = await runCli(['apply', '--yes'], repo)
    expect(apply.code).not.toBe(0)
    expect(writes()).toEqual([])
    expect(applies()).toEqual([])
    const running = (await admin.get('/cluster/sdn/vnets/db/subnets', { query: { running: 1 } })) as {
      gateway?: string
    }[]
    expect(running.map((s) => s.gateway)).toEqual(['10.5.0.1'])
  })

  it('a pending listing with a state PVE never gives makes SDN unreadable: no SDN write', async () => {
    await admin.request('PUT', '/cluster/sdn/vnets/db/subnets/theirs-10.5.0.0-24', { params: { gateway: '10.5.0.1' } })
    pve.tamper((req) =>
      req.path === '/cluster/sdn/zones'
        ? { kind: 'rewrite', data: (d) => (d as Record<string, unknown>[]).map((z) => ({ ...z, state: 'applied' })) }
        : { kind: 'forward' },
    )
    pve.seen.length = 0
    const apply = await runCli(['apply', '--yes'], repo)
    pve.tamper(() => ({ kind: 'forward' }))
    expect(apply.code).not.toBe(0)
    expect(writes()).toEqual([])
  })
})
