/**
 * SDN over raw HTTP, each test naming the pve-network function it follows: PVE::API2::Network::SDN::Zones,
 * ::Vnets, ::Subnets and ::Controllers (index with `pending`/`running`, create/update/delete under
 * lock_sdn_config), the zone plugins' on_update_hook / vnet_update_hook, SubnetPlugin on_update_hook,
 * PVE::Network::SDN pending_config and commit_config behind `PUT /cluster/sdn` (reload), Zones::status per node
 * and Zones::tap_plug at a guest's start.
 */
import { afterEach, beforeEach, describe as suite, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
import { apidocForTests } from '../apidoc/test-data.js'
import { apiRequest, okData, waitTask, type RawResponse } from './test-support/raw.js'

const describe = suite.skipIf(!apidocForTests())

let sim: Simulator
let root: Record<string, string>
const call = (method: string, path: string, params?: Record<string, string>) =>
  apiRequest(sim, root, method, path, params)
const ok = <T = unknown>(method: string, path: string, params?: Record<string, string>) =>
  okData<T>(call(method, path, params))
async function fails(method: string, path: string, params: Record<string, string>): Promise<RawResponse> {
  const r = await call(method, path, params)
  expect(r.status, r.body).not.toBe(200)
  return r
}
const reason = (r: RawResponse) => `${r.status} ${r.reason} ${r.body}`
type Item = Record<string, unknown>

/** PUT /cluster/sdn, then every node's srvreload it started */
async function apply(): Promise<void> {
  const upid = await ok<string>('PUT', '/cluster/sdn')
  expect(upid).toMatch(/:reloadnetworkall::/)
  expect((await waitTask(sim, root, 'pve1', upid)).exitstatus).toBe('OK')
  for (const node of ['pve1', 'pve2']) {
    const tasks = await ok<Item[]>('GET', `/nodes/${node}/tasks`, { typefilter: 'srvreload', source: 'all' })
    for (const t of tasks) await waitTask(sim, root, node, String(t.upid))
  }
}

beforeEach(async () => {
  sim = await startSimulator({
    nodes: ['pve1', 'pve2'],
    authFailureDelayMs: 0,
    taskDurationMs: 10,
    resourcesLagMs: 0,
    log: () => {},
  })
  root = { Authorization: sim.token.header }
})
afterEach(async () => {
  await sim.close()
})

describe('PVE::API2::Network::SDN::Zones and the zone plugins', () => {
  it("create checks each type's options (check_config): required keys, keys of another type", async () => {
    let r = await fails('POST', '/cluster/sdn/zones', { zone: 'v1', type: 'vlan' })
    expect(reason(r)).toContain("missing value for required option 'bridge'")
    r = await fails('POST', '/cluster/sdn/zones', { zone: 's1', type: 'simple', bridge: 'vmbr0' })
    expect(reason(r)).toContain("unexpected property 'bridge'")
    r = await fails('POST', '/cluster/sdn/zones', { zone: 'q1', type: 'qinq', bridge: 'vmbr0' })
    expect(reason(r)).toContain("missing value for required option 'tag'")
    await ok('POST', '/cluster/sdn/zones', { zone: 'v1', type: 'vlan', bridge: 'vmbr0', mtu: '1500' })
    r = await fails('POST', '/cluster/sdn/zones', { zone: 'v1', type: 'vlan', bridge: 'vmbr1' })
    expect(reason(r)).toContain("sdn zone object ID 'v1' already defined")
  })

  it('VxlanPlugin on_update_hook: exactly one of peers / fabric; ipam must exist', async () => {
    const r = await fails('POST', '/cluster/sdn/zones', { zone: 'x1', type: 'vxlan' })
    expect(reason(r)).toContain('must have exactly one of peers / fabric defined')
    const i = await fails('POST', '/cluster/sdn/zones', { zone: 'x1', type: 'vxlan', peers: '10.0.0.1', ipam: 'nb' })
    expect(reason(i)).toContain('nb not existing')
    await ok('POST', '/cluster/sdn/zones', { zone: 'x1', type: 'vxlan', peers: '10.0.0.1,10.0.0.2', ipam: 'pve' })
  })

  it('EvpnPlugin on_update_hook: the controller exists and is evpn, vrf-vxlan unique, a MAC filled in', async () => {
    let r = await fails('POST', '/cluster/sdn/zones', { zone: 'e1', type: 'evpn', controller: 'c1', 'vrf-vxlan': '10' })
    expect(reason(r)).toContain("create sdn zone object failed: controller c1 don't exist")
    r = await fails('POST', '/cluster/sdn/controllers', { controller: 'c1', type: 'evpn', asn: '65000' })
    expect(reason(r)).toContain('must have exactly one of peers / fabric defined')
    await ok('POST', '/cluster/sdn/controllers', { controller: 'c1', type: 'evpn', asn: '65000', peers: '10.0.0.1' })
    r = await fails('POST', '/cluster/sdn/controllers', {
      controller: 'c2',
      type: 'evpn',
      asn: '65001',
      peers: '10.0.0.1',
    })
    expect(reason(r)).toContain('only 1 global evpn controller can be defined')
    await ok('POST', '/cluster/sdn/zones', { zone: 'e1', type: 'evpn', controller: 'c1', 'vrf-vxlan': '10' })
    r = await fails('POST', '/cluster/sdn/zones', { zone: 'e2', type: 'evpn', controller: 'c1', 'vrf-vxlan': '10' })
    expect(reason(r)).toContain('vrf-vxlan 10 is already declared in e1')
    const zone = await ok<Item>('GET', '/cluster/sdn/zones/e1')
    expect(zone).toMatchObject({ zone: 'e1', type: 'evpn', controller: 'c1', 'vrf-vxlan': 10 })
    expect(zone.mac).toMatch(/^[0-9A-F]{2}(:[0-9A-F]{2}){5}$/i)
    // Controllers::EvpnPlugin on_delete_hook
    r = await fails('DELETE', '/cluster/sdn/controllers/c1', {})
    expect(reason(r)).toContain('controller c1 is used by e1')
  })

  it('update: digest, delete_from_config; Zones::Plugin on_delete_hook keeps a zone a vnet names', async () => {
    await ok('POST', '/cluster/sdn/zones', { zone: 's1', type: 'simple', mtu: '1450' })
    const { digest } = await ok<Item>('GET', '/cluster/sdn/zones/s1')
    const stale = await fails('PUT', '/cluster/sdn/zones/s1', { mtu: '1400', digest: '0'.repeat(40) })
    expect(reason(stale)).toContain('detected modified configuration')
    await ok('PUT', '/cluster/sdn/zones/s1', { delete: 'mtu', digest: String(digest) })
    expect(await ok<Item>('GET', '/cluster/sdn/zones/s1')).not.toHaveProperty('mtu')
    await ok('POST', '/cluster/sdn/vnets', { vnet: 'vn1', zone: 's1' })
    const r = await fails('DELETE', '/cluster/sdn/zones/s1', {})
    expect(reason(r)).toContain('zone s1 is used by vnet vn1')
  })
})

describe("PVE::API2::Network::SDN::Vnets and each zone's vnet_update_hook", () => {
  beforeEach(async () => {
    await ok('POST', '/cluster/sdn/zones', { zone: 's1', type: 'simple' })
    await ok('POST', '/cluster/sdn/zones', { zone: 'v1', type: 'vlan', bridge: 'vmbr0' })
    await ok('POST', '/cluster/sdn/zones', { zone: 'x1', type: 'vxlan', peers: '10.0.0.1' })
  })

  it('the vnet id is 2-8 characters (parse_sdn_vnet_id)', async () => {
    const r = await fails('POST', '/cluster/sdn/vnets', { vnet: 'toolongid', zone: 's1' })
    expect(r.status).toBe(400)
    expect(r.body).toContain("vnet ID 'toolongid' can't be more length than 8 characters")
    expect((await fails('POST', '/cluster/sdn/vnets', { vnet: 'a', zone: 's1' })).status).toBe(400)
  })

  it('SimplePlugin refuses a tag; VlanPlugin needs one up to 4096, unique in the zone', async () => {
    let r = await fails('POST', '/cluster/sdn/vnets', { vnet: 'ab', zone: 's1', tag: '5' })
    expect(reason(r)).toContain('vlan tag is not allowed on simple zone')
    r = await fails('POST', '/cluster/sdn/vnets', { vnet: 'ab', zone: 'v1' })
    expect(reason(r)).toContain('missing vlan tag')
    r = await fails('POST', '/cluster/sdn/vnets', { vnet: 'ab', zone: 'v1', tag: '5000' })
    expect(reason(r)).toContain('vlan tag max value is 4096')
    await ok('POST', '/cluster/sdn/vnets', { vnet: 'ab', zone: 'v1', tag: '10' })
    r = await fails('POST', '/cluster/sdn/vnets', { vnet: 'cd', zone: 'v1', tag: '10' })
    expect(reason(r)).toContain('tag 10 already exist in vnet ab')
  })

  it('VxlanPlugin: a VNI is unique across vxlan and evpn zones', async () => {
    await ok('POST', '/cluster/sdn/zones', { zone: 'x2', type: 'vxlan', peers: '10.0.0.2' })
    await ok('POST', '/cluster/sdn/vnets', { vnet: 'ab', zone: 'x1', tag: '100' })
    const r = await fails('POST', '/cluster/sdn/vnets', { vnet: 'cd', zone: 'x2', tag: '100' })
    expect(reason(r)).toContain('vxlan tag 100 already exist in vnet ab in zone x1')
  })

  it('VnetPlugin: no subnet on a vlan-aware vnet, no delete while subnets exist, no zone change', async () => {
    await ok('POST', '/cluster/sdn/vnets', { vnet: 'ab', zone: 's1', 'isolate-ports': '1', alias: 'web net' })
    expect(await ok<Item>('GET', '/cluster/sdn/vnets/ab')).toMatchObject({ 'isolate-ports': 1, alias: 'web net' })
    await ok('POST', '/cluster/sdn/vnets/ab/subnets', { subnet: '10.1.0.0/24', type: 'subnet', gateway: '10.1.0.1' })
    let r = await fails('PUT', '/cluster/sdn/vnets/ab', { vlanaware: '1' })
    expect(reason(r)).toContain('vlanaware vnet is not compatible with subnets')
    r = await fails('PUT', '/cluster/sdn/vnets/ab', { zone: 'v1', tag: '3' })
    expect(reason(r)).toContain("can't change zone if subnets exist")
    r = await fails('DELETE', '/cluster/sdn/vnets/ab', {})
    expect(reason(r)).toContain("Can't delete vnet if subnets exists")
  })
})

describe('PVE::API2::Network::SDN::Subnets and SubnetPlugin on_update_hook', () => {
  beforeEach(async () => {
    await ok('POST', '/cluster/sdn/zones', { zone: 's1', type: 'simple' })
    await ok('POST', '/cluster/sdn/vnets', { vnet: 'ab', zone: 's1' })
  })

  it('the id is <zone>-<network>-<mask>; the listing derives cidr, zone, network, mask and parses dhcp-range', async () => {
    await ok('POST', '/cluster/sdn/vnets/ab/subnets', {
      subnet: '10.1.0.0/24',
      type: 'subnet',
      gateway: '10.1.0.1',
      snat: '1',
      'dhcp-range': 'start-address=10.1.0.100,end-address=10.1.0.200',
    })
    const [s] = await ok<Item[]>('GET', '/cluster/sdn/vnets/ab/subnets')
    expect(s).toMatchObject({
      subnet: 's1-10.1.0.0-24',
      id: 's1-10.1.0.0-24',
      cidr: '10.1.0.0/24',
      zone: 's1',
      network: '10.1.0.0',
      mask: '24',
      vnet: 'ab',
      gateway: '10.1.0.1',
      snat: 1,
      'dhcp-range': [{ 'start-address': '10.1.0.100', 'end-address': '10.1.0.200' }],
    })
  })

  it('the gateway is inside the subnet (a /32 point-to-point excepted); dhcp ranges inside and apart', async () => {
    let r = await fails('POST', '/cluster/sdn/vnets/ab/subnets', {
      subnet: '10.1.0.0/24',
      type: 'subnet',
      gateway: '10.2.0.1',
    })
    expect(reason(r)).toContain('10.2.0.1 is not in subnet 10.1.0.0/24')
    await ok('POST', '/cluster/sdn/vnets/ab/subnets', { subnet: '10.9.0.5/32', type: 'subnet', gateway: '10.2.0.1' })
    r = await fails('POST', '/cluster/sdn/vnets/ab/subnets', {
      subnet: '10.1.0.0/24',
      type: 'subnet',
      'dhcp-range': 'start-address=10.1.0.200,end-address=10.1.0.100',
    })
    expect(reason(r)).toContain('start-address 10.1.0.200 must be smaller than end-address 10.1.0.100')
    r = await fails('POST', '/cluster/sdn/vnets/ab/subnets', {
      subnet: '10.1.0.0/24',
      type: 'subnet',
      'dhcp-range': 'start-address=10.1.0.100,end-address=10.1.1.10',
    })
    expect(reason(r)).toContain('end-address 10.1.1.10 is not in subnet 10.1.0.0/24')
  })
})

describe('PVE::Network::SDN pending_config, commit_config and Zones::status', () => {
  it('listings: the config files by default, `pending` with state and pending keys, `running` after apply', async () => {
    await ok('POST', '/cluster/sdn/zones', { zone: 's1', type: 'simple', mtu: '1450' })
    expect(await ok('GET', '/cluster/sdn/zones', { running: '1' })).toEqual([])
    expect(await ok('GET', '/cluster/sdn/zones', { pending: '1' })).toEqual([
      { zone: 's1', type: 'simple', state: 'new', pending: { mtu: 1450 } },
    ])
    await apply()
    expect(await ok('GET', '/cluster/sdn/zones', { pending: '1' })).toEqual([{ zone: 's1', type: 'simple', mtu: 1450 }])
    expect(await ok('GET', '/cluster/sdn/zones', { running: '1' })).toEqual([{ zone: 's1', type: 'simple', mtu: 1450 }])
    await ok('PUT', '/cluster/sdn/zones/s1', { delete: 'mtu', dhcp: 'dnsmasq' })
    expect(await ok('GET', '/cluster/sdn/zones', { pending: '1' })).toEqual([
      { zone: 's1', type: 'simple', mtu: 1450, state: 'changed', pending: { mtu: 'deleted', dhcp: 'dnsmasq' } },
    ])
    await ok('DELETE', '/cluster/sdn/zones/s1')
    expect(await ok('GET', '/cluster/sdn/zones', { pending: '1' })).toEqual([
      { zone: 's1', type: 'simple', mtu: 1450, state: 'deleted', pending: {} },
    ])
    expect(await ok('GET', '/cluster/sdn/zones')).toEqual([])
  })

  it('reload: the running config at once, each node `pending` until its srvreload ran', async () => {
    await ok('POST', '/cluster/sdn/zones', { zone: 's1', type: 'simple', nodes: 'pve2' })
    await ok('POST', '/cluster/sdn/zones', { zone: 's2', type: 'simple' })
    sim.control.setTaskBehaviour('srvreload', { hold: true })
    const upid = await ok<string>('PUT', '/cluster/sdn')
    expect(await ok('GET', '/nodes/pve1/sdn/zones')).toEqual([{ zone: 's2', status: 'pending' }])
    await waitTask(sim, root, 'pve1', upid)
    expect(await ok('GET', '/nodes/pve2/sdn/zones')).toEqual([
      { zone: 's1', status: 'pending' },
      { zone: 's2', status: 'pending' },
    ])
    sim.control.setTaskBehaviour('srvreload', null)
    await apply()
    expect(await ok('GET', '/nodes/pve2/sdn/zones')).toEqual([
      { zone: 's1', status: 'available' },
      { zone: 's2', status: 'available' },
    ])
  })

  it('Zones::tap_plug: a guest on a vnet starts only once the vnet is applied on its node', async () => {
    await ok('POST', '/cluster/sdn/zones', { zone: 's1', type: 'simple', nodes: 'pve2' })
    await ok('POST', '/cluster/sdn/vnets', { vnet: 'ab', zone: 's1' })
    const vm = { vmid: '100', memory: '512', net0: 'virtio,bridge=ab' }
    await waitTask(sim, root, 'pve1', await ok<string>('POST', '/nodes/pve1/qemu', vm))
    const start = async (node: string, vmid: string) =>
      waitTask(sim, root, node, await ok<string>('POST', `/nodes/${node}/qemu/${vmid}/status/start`))
    expect((await start('pve1', '100')).exitstatus).toBe("bridge 'ab' does not exist")
    await apply()
    expect((await start('pve1', '100')).exitstatus).toBe('vnet ab is not allowed on this node')
    await waitTask(sim, root, 'pve2', await ok<string>('POST', '/nodes/pve2/qemu', { ...vm, vmid: '101' }))
    expect((await start('pve2', '101')).exitstatus).toBe('OK')
  })
})
