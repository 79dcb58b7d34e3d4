/**
 * readPoolList against the simulator: pool members from /cluster/resources' `pool` (pve-manager PVE::API2::Cluster
 * resources) agree with `GET /pools?poolid=` (PVE::API2::Pool read_pool) for every guest, and only the pools the
 * desired state names or ProxOps marked (with the entry's ownership: this entry marked) cost a request of their own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { simPve, type SimPve } from '../../test-support/sim.js'
import { known } from '../../inventory.js'
import { readPoolList } from './read.js'

let env: SimPve
const read = <T>(fn: () => Promise<T>): Promise<T> => fn()
const POOLS = 30

beforeAll(async () => {
  env = simPve({ nodes: ['pve1', 'pve2'] })
  for (let i = 0; i < POOLS; i++) {
    // every fifth pool carries a ProxOps marker (this entry's or another's): those are always read exactly
    const comment = i % 5 === 0 ? `managed-by=proxops.${i % 10 === 0 ? 'lab' : 'other'} pool ${i}` : `team ${i}`
    await env.client.createPool({ poolid: `p${String(i).padStart(2, '0')}`, comment })
  }
  for (let vmid = 100; vmid < 160; vmid++) {
    const node = vmid % 2 === 0 ? 'pve1' : 'pve2'
    await env.client.waitTaskOk(await env.client.createGuest(node, 'qemu', { vmid, memory: 512 }), {
      pollIntervalMs: 5,
    })
    // 0..2 guests per pool, some guests in none
    if (vmid % 3 !== 0)
      await env.client.updatePool({ poolid: `p${String(vmid % POOLS).padStart(2, '0')}`, vms: String(vmid) })
  }
  await env.client.updatePool({ poolid: 'p07', storage: 'local' })
})
afterAll(async () => {
  await env.close()
})

describe('readPoolList (PVE::API2::Pool, PVE::API2::Cluster resources)', () => {
  it('members from /cluster/resources match read_pool; requests: the list, the named pools and the marked ones', async () => {
    const exact = known(await readPoolList(env.client, read))
    const resources = await env.client.clusterResources()
    env.sim.stats.reset()
    const cheap = known(await readPoolList(env.client, read, { resources, exact: ['p07'] }))
    const requests = env.requests()
    // the list, p07 (named), and the six marked pools (p00, p05, ..., p25)
    expect(requests.filter((r) => r.startsWith('GET /pools'))).toHaveLength(1 + 1 + 6)
    expect(requests).toHaveLength(8)
    expect(cheap?.map((p) => [p.poolid, p.comment, p.vmids])).toEqual(exact?.map((p) => [p.poolid, p.comment, p.vmids]))
    // storages are known for the pools read exactly
    expect(cheap?.find((p) => p.poolid === 'p07')?.storages).toEqual(['local'])
    expect(exact?.find((p) => p.poolid === 'p07')?.storages).toEqual(['local'])
  })

  it("with the entry's ownership, only its own marked pools are read exactly: others' markers cost nothing", async () => {
    const exact = known(await readPoolList(env.client, read))
    const resources = await env.client.clusterResources()
    env.sim.stats.reset()
    const ownership = { ownershipTag: 'proxops', clusterEntry: 'lab' }
    const cheap = known(await readPoolList(env.client, read, { resources, exact: ['p07'], ownership }))
    // the list, p07 (named), and lab's three marked pools (p00, p10, p20); other's (p05, p15, p25) are not read
    expect(env.requests()).toEqual(Array.from({ length: 1 + 1 + 3 }, () => 'GET /pools'))
    expect(cheap?.map((p) => [p.poolid, p.comment, p.vmids])).toEqual(exact?.map((p) => [p.poolid, p.comment, p.vmids]))
  })

  it('without /cluster/resources, or with exact: all, every pool is read with its own request (adopt)', async () => {
    env.sim.stats.reset()
    await readPoolList(env.client, read, { exact: 'all' })
    expect(env.requests()).toHaveLength(1 + POOLS)
  })
})
