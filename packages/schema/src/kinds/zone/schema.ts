/**
 * SDN zones: the `Zone` kind (pve-network PVE::API2::Network::SDN::Zones and its Simple, Vlan, QinQ, Vxlan and
 * Evpn plugins). Keys are spelled as PVE names them; which keys a type takes is ZONE_KEYS. docs/network.md
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { bool, int, list, nodeName, nonEmptyStr, obj, oneOf, str } from '../../manifest/fields.js'

export const ZONE_TYPES = ['simple', 'vlan', 'qinq', 'vxlan', 'evpn'] as const
export type ZoneType = (typeof ZONE_TYPES)[number]

const DNS = ['dns', 'reversedns', 'dnszone', 'ipam'] as const

/** each zone plugin's options() (`nodes` and `mtu` every type takes); required keys are ZONE_REQUIRED */
export const ZONE_KEYS: Record<ZoneType, readonly string[]> = {
  simple: ['nodes', 'mtu', ...DNS, 'dhcp'],
  vlan: ['nodes', 'bridge', 'bridge-disable-mac-learning', 'mtu', ...DNS],
  qinq: ['nodes', 'tag', 'bridge', 'bridge-disable-mac-learning', 'mtu', 'vlan-protocol', ...DNS],
  vxlan: ['nodes', 'peers', 'vxlan-port', 'mtu', ...DNS],
  evpn: [
    'nodes',
    'vrf-vxlan',
    'controller',
    'exitnodes',
    'exitnodes-local-routing',
    'exitnodes-primary',
    'advertise-subnets',
    'disable-arp-nd-suppression',
    'bridge-disable-mac-learning',
    'rt-import',
    'vxlan-port',
    'mtu',
    'mac',
    ...DNS,
  ],
}

/** the options a type requires (`optional => 0`), and VxlanPlugin's `peers` (its `fabric` alternative is not modelled) */
export const ZONE_REQUIRED: Record<ZoneType, readonly string[]> = {
  simple: [],
  vlan: ['bridge'],
  qinq: ['tag', 'bridge'],
  vxlan: ['peers'],
  evpn: ['vrf-vxlan', 'controller'],
}

const ip = v.pipe(
  v.string(m('field-type', 'must be a string')),
  v.regex(/^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]*)$/, m('field-invalid', 'must be an IP address')),
)
const nodes = (d: string) => list(nodeName('A PVE node.'), d)

export const zoneSpecSchema = obj(
  {
    id: v.optional(str('PVE zone id; default `metadata.name`. 2 to 8 letters and digits, starting with a letter.')),
    type: oneOf(ZONE_TYPES, 'Zone type: `simple`, `vlan`, `qinq`, `vxlan` or `evpn`.'),
    nodes: v.optional(nodes('Nodes the zone is deployed on; absent = every node.')),
    mtu: v.optional(int("MTU of the zone's vnet bridges.", 576, 65520)),
    ipam: v.optional(nonEmptyStr('IPAM id (`pve` is built in).')),
    dns: v.optional(nonEmptyStr('DNS server id.')),
    reversedns: v.optional(nonEmptyStr('Reverse DNS server id.')),
    dnszone: v.optional(nonEmptyStr('DNS domain of the zone (needs `dns`).')),
    dhcp: v.optional(oneOf(['dnsmasq'], 'DHCP backend (simple zones).')),
    bridge: v.optional(nonEmptyStr('The local bridge the VLANs ride on (vlan, qinq).')),
    'bridge-disable-mac-learning': v.optional(bool('Disable MAC learning on the bridge (vlan, qinq, evpn).')),
    tag: v.optional(int('Service VLAN (outer tag) of a qinq zone.', 0, 4096)),
    'vlan-protocol': v.optional(
      oneOf(['802.1q', '802.1ad'], 'Outer VLAN protocol of a qinq zone; PVE default 802.1q.'),
    ),
    peers: v.optional(list(ip, "VXLAN peers (usually the nodes' addresses) of a vxlan zone.")),
    'vxlan-port': v.optional(int('UDP port of the VXLAN tunnel; PVE default 4789 (vxlan, evpn).', 1, 65536)),
    controller: v.optional(str('The EVPN controller (an SdnController id) of an evpn zone.')),
    'vrf-vxlan': v.optional(int("VNI of the zone's VRF (evpn), unique across zones.", 1, 16777215)),
    mac: v.optional(
      v.pipe(
        v.string(m('field-type', 'must be a string')),
        v.regex(/^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}$/, m('field-invalid', 'must be a MAC address')),
        v.description('Anycast router MAC (evpn); absent = PVE picks one, never compared.'),
      ),
    ),
    exitnodes: v.optional(nodes('Exit nodes of an evpn zone.')),
    'exitnodes-primary': v.optional(nodeName('Preferred exit node (evpn).')),
    'exitnodes-local-routing': v.optional(bool('Routes on the exit nodes to reach the guests (evpn).')),
    'advertise-subnets': v.optional(bool('Advertise IP prefixes (type-5 routes) (evpn).')),
    'disable-arp-nd-suppression': v.optional(bool('Disable ARP/ND suppression (evpn).')),
    'rt-import': v.optional(list(nonEmptyStr('A route target.'), 'Route targets imported into the VRF (evpn).')),
  },
  "Zone spec: the type and that type's keys, as PVE names them.",
)
