/**
 * The SDN kinds against the simulator's pve-network (PVE::API2::Network::SDN and its Zones, Vnets, Subnets,
 * Controllers) with the real client: a zone of each type, vnets and subnets converge in one apply that ends with
 * exactly one `PUT /cluster/sdn`, a guest on a vnet starts after it, the next plan is empty, and someone else's
 * pending edit blocks every SDN write (the apply would make it running).
 */
import { expect, it } from 'vitest'
import type { PveClient } from '@proxops/pve-client'
import type { Manifest } from '@proxops/schema'
import type { SimPve } from '../../test-support/sim.js'
import { useSimPve } from '../../test-support/use-sim.js'
import { reconcile } from '../../reconcile/reconcile.js'
import { desired, policy } from '../../fixtures.test.helpers.js'
import { manifest } from '../../testing/manifest.js'
import { observe } from '../../observe/observe.js'
import { adopt } from '../../adopt/adopt.js'

let env: SimPve
let pve: PveClient
useSimPve({ taskDurationMs: 10 }, 'test', (e) => {
  env = e
  pve = e.client
})

const pol = policy({ nodes: [], pruneRatioLimit: 1 })
const m = (kind: string, name: string, spec: Record<string, unknown>) => manifest({ kind, metadata: { name }, spec })
const estate: Manifest[] = [
  m('SdnController', 'evpn1', { asn: 65000, peers: ['10.0.0.1', '10.0.0.2'] }),
  m('Zone', 'simple1', { type: 'simple', mtu: 1450 }),
  m('Zone', 'vlan1', { type: 'vlan', bridge: 'vmbr0' }),
  m('Zone', 'qinq1', { type: 'qinq', bridge: 'vmbr0', tag: 20 }),
  m('Zone', 'vxlan1', { type: 'vxlan', peers: ['10.0.0.1', '10.0.0.2'] }),
  m('Zone', 'evpn1', { type: 'evpn', controller: 'evpn1', 'vrf-vxlan': 5000 }),
  m('VNet', 'web', { zone: 'vlan1', tag: 10, alias: 'web tier' }),
  m('VNet', 'app', { zone: 'simple1' }),
  m('VNet', 'ov', { zone: 'evpn1', tag: 100 }),
  m('Subnet', 'web-v4', {
    vnet: 'web',
    cidr: '10.10.0.0/24',
    gateway: '10.10.0.1',
    snat: true,
    'dhcp-range': [{ 'start-address': '10.10.0.100', 'end-address': '10.10.0.200' }],
  }),
  m('VM', 'api', {
    node: 'pve1',
    vmid: 100,
    memory: '512MiB',
    cpu: { type: 'host', cores: 1 },
    disks: [{ storage: 'local-lvm', size: '1GiB' }],
    networks: [{ bridge: 'web' }],
  }),
]

async function cycle(ms: Manifest[]) {
  const all = desired(...ms)
  return reconcile({
    desired: all,
    reader: pve,
    writer: pve,
    policy: pol,
    execute: { confirmAttempts: 3, confirmDelayMs: 20 },
  })
}

it('an SDN estate converges in one apply with one PUT /cluster/sdn, the guest after it; the next plan is empty', async () => {
  const { plan: p, report } = await cycle(estate)
  expect(report?.results.filter((r) => r.status !== 'ok').map((r) => JSON.stringify(r))).toEqual([])
  const apply = p.actions.filter((a) => a.kind === 'SdnApply')
  expect(apply).toHaveLength(1)
  expect(apply[0]?.requests).toEqual([{ call: 'applySdn' }])
  const sdnWrites = p.actions.filter((a) => a.requests.some((r) => r.call === 'sdnWrite')).map((a) => a.id)
  expect([...(apply[0]?.dependsOn ?? [])].sort()).toEqual([...sdnWrites].sort())
  const create = p.actions.find((a) => a.address.startsWith('VM/') && a.type === 'create')
  expect(create?.dependsOn).toContain('SdnApply/cluster#update')
  expect(env.requests().filter((r) => r === 'PUT /cluster/sdn')).toHaveLength(1)
  // the running config holds it all, the alias carries the marker
  expect(await pve.get('/cluster/sdn/vnets/web', { query: { running: 1 } })).toMatchObject({
    alias: 'managed-by=proxops web tier',
    tag: 10,
  })
  expect((await reconcile({ desired: desired(...estate), reader: pve, policy: pol })).plan.actions).toEqual([])
})

it("someone else's pending edit blocks every SDN write, with its keys named; nothing is applied", async () => {
  await cycle(estate)
  await pve.request('PUT', '/cluster/sdn/zones/vlan1', { params: { mtu: 1400 } })
  const changed = estate.map((x) =>
    x.kind === 'VNet' && x.metadata.name === 'app' ? m('VNet', 'app', { zone: 'simple1', 'isolate-ports': true }) : x,
  )
  const before = env.requests().length
  const { plan: p } = await reconcile({ desired: desired(...changed), reader: pve, policy: pol })
  expect(p.actions).toEqual([])
  expect(p.anomalies.map((a) => [a.code, a.address])).toEqual([['sdn-pending', 'Zone/vlan1']])
  expect(p.anomalies[0]?.message).toContain('pending keys: mtu')
  const { report } = await cycle(changed)
  expect(report?.results ?? []).toEqual([])
  const writes = env
    .requests()
    .slice(before)
    .filter((r) => !r.startsWith('GET '))
  expect(writes).toEqual([])
})

it('an interrupted run: its own pending edits are applied by the next cycle', async () => {
  await cycle(estate)
  // ProxOps wrote the vnet change, then stopped before the apply
  await pve.request('PUT', '/cluster/sdn/vnets/app', { params: { 'isolate-ports': 1 } })
  const changed = estate.map((x) =>
    x.kind === 'VNet' && x.metadata.name === 'app' ? m('VNet', 'app', { zone: 'simple1', 'isolate-ports': true }) : x,
  )
  const { plan: p } = await cycle(changed)
  expect(p.actions.map((a) => a.address)).toEqual(['SdnApply/cluster'])
  expect(await pve.get('/cluster/sdn/vnets/app', { query: { running: 1 } })).toMatchObject({ 'isolate-ports': 1 })
})

it('adopt writes a manifest per SDN object; applying the adopted manifests changes nothing but the claim', async () => {
  await cycle(estate)
  // one more, made by hand with keys PVE fills in itself (an EVPN zone's mac is already there)
  await pve.request('POST', '/cluster/sdn/vnets', {
    params: { vnet: 'byhand', zone: 'vxlan1', tag: 7000, vlanaware: 1 },
  })
  await pve.request('PUT', '/cluster/sdn')
  await new Promise((r) => setTimeout(r, 200))
  const live = await observe('homelab', pve, { sdn: true })
  const adopted = adopt(live, { cluster: 'homelab' })
  const sdnFiles = adopted.files.filter((f) => ['SdnController', 'Zone', 'VNet', 'Subnet'].includes(f.kind))
  expect(sdnFiles.map((f) => `${f.kind}/${f.name}`).sort()).toEqual([
    'SdnController/evpn1',
    'Subnet/vlan1-10-10-0-0-24',
    'VNet/app',
    'VNet/byhand',
    'VNet/ov',
    'VNet/web',
    'Zone/evpn1',
    'Zone/qinq1',
    'Zone/simple1',
    'Zone/vlan1',
    'Zone/vxlan1',
  ])
  const manifests = sdnFiles.map((f) => manifest(f.document))
  const guests = estate.filter((x) => x.kind === 'VM')
  const { plan: p } = await reconcile({ desired: desired(...manifests, ...guests), reader: pve, policy: pol })
  // the only change: the hand-made vnet is claimed (the marker written into its alias), then applied
  expect(p.actions.map((a) => [a.address, a.diffs.map((d) => d.key)])).toEqual([
    ['VNet/byhand', ['alias']],
    ['SdnApply/cluster', []],
  ])
  expect(p.anomalies).toEqual([])
})
