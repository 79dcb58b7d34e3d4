/**
 * The SDN kinds (Zone, VNet, Subnet, SdnController) as pve-network checks them: parse_sdn_zone_id /
 * parse_sdn_vnet_id (at most 8 characters), each zone plugin's options() (Zones::*Plugin), SubnetPlugin
 * on_update_hook (gateway inside the subnet, validate_dhcp_ranges), and the graph: a vnet after its zone, an EVPN
 * zone after its controller, a subnet after its vnet, a guest NIC on a vnet after the vnet.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { parseManifest } from '../../manifest/parse.js'
import { clone, validManifests } from '../../test-support/manifests.js'
import { loadRepository } from '../../loader/load.js'
import { clusterConfig, tempRepo, vmYaml, type TempRepo } from '../../test-support/repo.js'

const problems = (doc: unknown): string[] => {
  const r = parseManifest(doc)
  return r.ok ? [] : r.issues.map((i) => `${i.path.join('.')}: ${i.code}: ${i.message}`)
}
const of = (kind: keyof typeof validManifests, name: string, spec: Record<string, unknown>) => ({
  ...clone(validManifests[kind]),
  metadata: { name },
  spec,
})

describe('Zone', () => {
  it('spec.id defaults to metadata.name, at most 8 letters and digits (parse_sdn_zone_id)', () => {
    const r = parseManifest(validManifests.Zone)
    expect(r.ok && r.manifest.spec).toEqual({ id: 'lab', type: 'vlan', bridge: 'vmbr0' })
    expect(problems(of('Zone', 'toolongid', { type: 'simple' }))).toEqual([
      'metadata.name: field-invalid: "toolongid" cannot be a PVE zone id: at most 8 characters; set spec.id',
    ])
    expect(problems(of('Zone', 'a', { id: 'my-zone', type: 'simple' }))[0]).toMatch(
      /^spec\.id: field-invalid: "my-zone" cannot be/,
    )
  })

  it("each type's keys (Zones::*Plugin options()): required ones, another type's refused", () => {
    expect(problems(of('Zone', 'vl', { type: 'vlan' }))).toEqual([
      'spec.bridge: field-required: a vlan zone needs bridge',
    ])
    expect(problems(of('Zone', 'si', { type: 'simple', bridge: 'vmbr0' }))).toEqual([
      'spec.bridge: field-invalid: a simple zone has no bridge (PVE refuses it: unexpected property)',
    ])
    expect(problems(of('Zone', 'qq', { type: 'qinq', bridge: 'vmbr0' }))).toEqual([
      'spec.tag: field-required: a qinq zone needs tag',
    ])
    expect(problems(of('Zone', 'vx', { type: 'vxlan' }))).toEqual([
      'spec.peers: field-required: a vxlan zone needs peers',
    ])
    expect(problems(of('Zone', 'ev', { type: 'evpn', controller: 'c1' }))).toEqual([
      'spec.vrf-vxlan: field-required: a evpn zone needs vrf-vxlan',
    ])
    expect(problems(of('Zone', 'ev', { type: 'evpn', controller: 'c1', 'vrf-vxlan': 0 }))[0]).toMatch(
      /^spec\.vrf-vxlan: field-invalid: must be between 1/,
    )
    expect(problems(of('Zone', 'si', { type: 'simple', dnszone: 'lab.example' }))).toEqual([
      'spec.dnszone: field-invalid: dnszone needs dns (PVE: missing dns server)',
    ])
  })
})

describe('VNet, Subnet, SdnController', () => {
  it('a vnet id is at most 8 characters (parse_sdn_vnet_id); the tag is 1..16777215', () => {
    expect(problems(of('VNet', 'frontend1', { zone: 'lab' }))[0]).toMatch(/at most 8 characters; set spec.id$/)
    expect(problems(of('VNet', 'web', { zone: 'lab', tag: 0 }))[0]).toMatch(/^spec\.tag: field-invalid/)
    expect(problems(of('VNet', 'web', { zone: 'lab', alias: 'two\nlines' }))).toEqual([
      'spec.alias: field-invalid: must be a single line',
    ])
  })

  it('SubnetPlugin on_update_hook: the gateway inside the subnet (/32 excepted), dhcp ranges inside and apart', () => {
    expect(problems(validManifests.Subnet)).toEqual([])
    expect(problems(of('Subnet', 's', { vnet: 'web', cidr: '10.0.0.0/24', gateway: '10.0.1.1' }))).toEqual([
      'spec.gateway: field-invalid: 10.0.1.1 is not in subnet 10.0.0.0/24',
    ])
    expect(problems(of('Subnet', 's', { vnet: 'web', cidr: '10.0.0.5/32', gateway: '10.0.1.1' }))).toEqual([])
    expect(problems(of('Subnet', 's', { vnet: 'web', cidr: 'fd00::/64', gateway: 'fd00::1' }))).toEqual([])
    expect(problems(of('Subnet', 's', { vnet: 'web', cidr: '10.0.0.0/4' }))[0]).toMatch(/^spec\.cidr: field-invalid/)
    const range = (a: string, b: string) => ({ 'start-address': a, 'end-address': b })
    expect(
      problems(
        of('Subnet', 's', {
          vnet: 'web',
          cidr: '10.0.0.0/24',
          'dhcp-range': [
            range('10.0.0.10', '10.0.0.20'),
            range('10.0.0.15', '10.0.0.30'),
            range('10.0.0.9', '10.0.0.1'),
            range('10.0.0.100', '10.0.1.5'),
          ],
        }),
      ),
    ).toEqual([
      'spec.dhcp-range.1: field-invalid: dhcp ranges must not overlap',
      'spec.dhcp-range.2: field-invalid: start-address 10.0.0.9 must be smaller than end-address 10.0.0.1',
      'spec.dhcp-range.3: field-invalid: the range 10.0.0.100-10.0.1.5 is not in subnet 10.0.0.0/24',
    ])
  })

  it('an EVPN controller has an AS number and peers (Controllers::EvpnPlugin)', () => {
    expect(problems(validManifests.SdnController)).toEqual([])
    expect(problems(of('SdnController', 'c1', { asn: 65000, peers: [] }))).toEqual([
      'spec.peers: field-invalid: an evpn controller needs at least one peer',
    ])
  })
})

describe('SDN in a cluster', () => {
  let repo: TempRepo | undefined
  afterEach(() => repo?.cleanup())
  const doc = (kind: string, name: string, spec: string) =>
    `apiVersion: proxops/v1alpha1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${spec}`

  it("controller, zone, vnet, subnet and a guest on the vnet come in that order; vmbr0 is the node's own", async () => {
    repo = tempRepo({
      'clusters/lab/config.yaml': clusterConfig('lab'),
      'clusters/lab/resources.yaml':
        'resources:\n  - ../../sdncontroller/base/c.yaml\n  - ../../zone/base/z.yaml\n  - ../../vnet/base/v.yaml\n  - ../../subnet/base/s.yaml\n  - ../../vm/base/a.yaml\n  - ../../vm/base/b.yaml\n',
      'sdncontroller/base/c.yaml': doc('SdnController', 'evpn1', '  asn: 65000\n  peers: [10.0.0.1]\n'),
      'zone/base/z.yaml': doc('Zone', 'ev', '  type: evpn\n  controller: evpn1\n  vrf-vxlan: 100\n'),
      'vnet/base/v.yaml': doc('VNet', 'web', '  zone: ev\n  tag: 1000\n'),
      'subnet/base/s.yaml': doc('Subnet', 'web-v4', '  vnet: web\n  cidr: 10.1.0.0/24\n  gateway: 10.1.0.1\n'),
      'vm/base/a.yaml': vmYaml('a', 100, 'pve1', '  networks:\n    - bridge: web\n'),
      'vm/base/b.yaml': vmYaml('b', 101, 'pve1', '  networks:\n    - bridge: vmbr0\n'),
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors).toEqual([])
    const graph = m.clusters[0]!.graph
    expect(graph.dependsOn.get('Zone/ev')).toEqual(['SdnController/evpn1'])
    expect(graph.dependsOn.get('VNet/web')).toEqual(['Zone/ev'])
    expect(graph.dependsOn.get('Subnet/web-v4')).toEqual(['VNet/web'])
    expect(graph.dependsOn.get('VM/a')).toEqual(['VNet/web'])
    expect(graph.dependsOn.get('VM/b')).toEqual([])
    expect(graph.level.get('VM/a')).toBe(3)
  })

  it('sdn-id-duplicate: two VNets cannot declare one PVE vnet', async () => {
    repo = tempRepo({
      'clusters/lab/config.yaml': clusterConfig('lab'),
      'clusters/lab/resources.yaml': 'resources:\n  - ../../vnet/base/n.yaml\n',
      'vnet/base/n.yaml': `${doc('VNet', 'web', '  zone: z\n')}---\n${doc('VNet', 'other', '  id: web\n  zone: z\n')}`,
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors.map((e) => e.code)).toEqual(['sdn-id-duplicate'])
  })
})
