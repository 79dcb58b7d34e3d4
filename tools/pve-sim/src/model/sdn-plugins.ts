import { fail400, fail500 } from './errors.js'
import { parseIp } from './fw-addr.js'
import type { SectionOptions } from './ha-section.js'
import { parsePropString, PropStringError } from './propstring.js'

/**
 * The per-type rules of pve-network's SDN section configs: each plugin's options() (which keys a type takes and
 * which it requires) and the hooks the API handlers call under the SDN lock (Zones::*Plugin on_update_hook,
 * vnet_update_hook, on_delete_hook; VnetPlugin; SubnetPlugin; Controllers::EvpnPlugin).
 */

export type SdnValue = string | number | string[]
export type SdnSection = Record<string, SdnValue>
export type SdnIds = Map<string, SdnSection>

const DNS = { dns: true, reversedns: true, dnszone: true, ipam: true }

/** Zones::<Type>Plugin options() */
export const ZONE_OPTIONS: Record<string, SectionOptions> = {
  simple: { nodes: true, mtu: true, ...DNS, dhcp: true },
  vlan: { nodes: true, bridge: false, 'bridge-disable-mac-learning': true, mtu: true, ...DNS },
  qinq: {
    nodes: true,
    tag: false,
    bridge: false,
    'bridge-disable-mac-learning': true,
    mtu: true,
    'vlan-protocol': true,
    ...DNS,
  },
  vxlan: { nodes: true, peers: true, 'vxlan-port': true, mtu: true, ...DNS, fabric: true },
  evpn: {
    nodes: true,
    'vrf-vxlan': false,
    controller: false,
    exitnodes: true,
    'exitnodes-local-routing': true,
    'exitnodes-primary': true,
    'advertise-subnets': true,
    'disable-arp-nd-suppression': true,
    'bridge-disable-mac-learning': true,
    'rt-import': true,
    'vxlan-port': true,
    mtu: true,
    mac: true,
    ...DNS,
  },
}

/** VnetPlugin options() */
export const VNET_OPTIONS: SectionOptions = {
  zone: false,
  tag: true,
  alias: true,
  vlanaware: true,
  'isolate-ports': true,
}

/** SubnetPlugin options() */
export const SUBNET_OPTIONS: SectionOptions = {
  vnet: false,
  gateway: true,
  snat: true,
  dnszoneprefix: true,
  'dhcp-range': true,
  'dhcp-dns-server': true,
}

/** Controllers::EvpnPlugin options() (the BGP, ISIS and Faucet controllers are not modelled) */
export const CONTROLLER_OPTIONS: Record<string, SectionOptions> = {
  evpn: { asn: false, peers: true, fabric: true },
}

/** the boolean and integer keys, which SectionConfig's check_value stores as numbers */
export const SDN_BOOLEANS = new Set([
  'vlanaware',
  'isolate-ports',
  'snat',
  'advertise-subnets',
  'disable-arp-nd-suppression',
  'exitnodes-local-routing',
  'bridge-disable-mac-learning',
])
export const SDN_INTEGERS = new Set(['mtu', 'tag', 'vrf-vxlan', 'vxlan-port', 'asn'])

/** the keys encode_value joins (a node list read as a hash, dhcp-range as an array), sorted */
export const SDN_LISTS = new Set(['nodes', 'exitnodes', 'dhcp-range'])

/** PVE::Network::SDN::encode_value */
export function encodeValue(key: string, v: SdnValue | undefined): string | undefined {
  if (v === undefined) return undefined
  if (Array.isArray(v)) return [...v].sort().join(',')
  if (SDN_LISTS.has(key) && typeof v === 'string')
    return v
      .split(/[,;\s]+/)
      .filter(Boolean)
      .sort()
      .join(',')
  return String(v)
}

/** Zones::*Plugin on_update_hook (the zone's cross-object rules); `mac` is the random MAC EvpnPlugin fills in */
export function zoneUpdateHook(id: string, zones: SdnIds, controllers: SdnIds, mac: () => string): void {
  const zone = zones.get(id) as SdnSection
  if (zone.type === 'vxlan' && !zone.peers === !zone.fabric) {
    const msg = 'must have exactly one of peers / fabric defined'
    throw fail400({ peers: msg, fabric: msg })
  }
  if (zone.type !== 'evpn') return
  const controller = String(zone.controller)
  const c = controllers.get(controller)
  if (!c) throw fail500(`controller ${controller} don't exist`)
  if (c.type !== 'evpn') throw fail500(`${controller} is not a evpn controller type`)
  for (const [other, z] of zones)
    if (other !== id && z['vrf-vxlan'] !== undefined && String(z['vrf-vxlan']) === String(zone['vrf-vxlan']))
      throw fail500(`vrf-vxlan ${String(zone['vrf-vxlan'])} is already declared in ${other}`)
  if (zone.mac === undefined) zone.mac = mac()
}

/** Zones::Plugin on_delete_hook: a zone a vnet names stays */
export function zoneDeleteHook(id: string, vnets: SdnIds): void {
  for (const [vnet, v] of vnets) if (v.zone === id) throw fail500(`zone ${id} is used by vnet ${vnet}`)
}

/** each zone plugin's vnet_update_hook: the tag rules of the vnet's zone type */
export function vnetZoneHook(id: string, vnets: SdnIds, zones: SdnIds): void {
  const vnet = vnets.get(id) as SdnSection
  const zone = zones.get(String(vnet.zone))
  // Zones::Plugin->lookup(undef type) dies for a zone that does not exist
  if (!zone) throw fail500(`unknown section type ''`)
  const tag = vnet.tag === undefined ? undefined : Number(vnet.tag)
  const others = [...vnets].filter(([other]) => other !== id)
  const type = zone.type
  if (type === 'simple') {
    if (tag !== undefined) throw fail400({ tag: 'vlan tag is not allowed on simple zone' })
  } else if (type === 'vlan') {
    if (tag === undefined) throw fail400({ tag: 'missing vlan tag' })
    if (tag > 4096) throw fail400({ tag: 'vlan tag max value is 4096' })
    for (const [other, o] of others)
      if (o.zone === vnet.zone && o.tag !== undefined && Number(o.tag) === tag)
        throw fail400({ tag: `tag ${tag} already exist in vnet ${other}` })
  } else if (type === 'qinq') {
    if (tag && tag > 4096) throw fail400({ tag: 'VLAN tag maximal value is 4096' })
    for (const [other, o] of others.sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (o.zone !== vnet.zone) continue
      if (tag) {
        if (o.tag && Number(o.tag) === tag)
          throw fail400({ tag: `tag ${tag} already exist in zone ${String(vnet.zone)} vnet ${other}` })
      } else if (!o.tag) {
        throw fail400({ tag: `tag-less vnet already exists in zone ${String(vnet.zone)} vnet ${other}` })
      }
    }
  } else if (type === 'vxlan' || type === 'evpn') {
    if (tag === undefined) throw fail400({ tag: 'missing vxlan tag' })
    if (tag > 16777216) throw fail400({ tag: 'vxlan tag max value is 16777216' })
    if (type === 'evpn' && vnet.vlanaware)
      throw fail400({ 'vlan-aware': "vlan-aware option can't be enabled with evpn" })
    // vxlan ids are unique across every vxlan and evpn zone
    for (const [other, o] of others.sort(([a], [b]) => (a < b ? -1 : 1))) {
      const oz = zones.get(String(o.zone))
      if (oz?.type !== 'vxlan' && oz?.type !== 'evpn') continue
      if (o.tag && Number(o.tag) === tag)
        throw fail400({ tag: `vxlan tag ${tag} already exist in vnet ${other} in zone ${String(o.zone)} ` })
    }
  }
}

/** the subnets of a vnet (Vnets::get_subnets) */
export const subnetsOf = (vnet: string, subnets: SdnIds): string[] =>
  [...subnets].filter(([, s]) => s.vnet === vnet).map(([id]) => id)

/** VnetPlugin on_update_hook: a vlan-aware vnet takes no subnet */
export function vnetUpdateHook(id: string, vnets: SdnIds, subnets: SdnIds): void {
  if (vnets.get(id)?.vlanaware && subnetsOf(id, subnets).length)
    throw fail400({ vlanaware: 'vlanaware vnet is not compatible with subnets' })
}

/** VnetPlugin on_delete_hook */
export function vnetDeleteHook(id: string, subnets: SdnIds): void {
  if (subnetsOf(id, subnets).length) throw fail400({ vnet: "Can't delete vnet if subnets exists" })
}

/** Controllers::EvpnPlugin on_update_hook */
export function controllerUpdateHook(id: string, controllers: SdnIds): void {
  let evpn = 0
  for (const [other, c] of controllers) {
    if (other === id || c.type !== 'evpn') continue
    evpn++
    if (evpn >= 1) throw fail500('only 1 global evpn controller can be defined')
  }
  const c = controllers.get(id) as SdnSection
  if (c.type === 'evpn' && !c.peers === !c.fabric) throw fail500('must have exactly one of peers / fabric defined')
}

/** Controllers::EvpnPlugin on_delete_hook */
export function controllerDeleteHook(id: string, zones: SdnIds): void {
  for (const [zone, z] of zones) if (z.controller === id) throw fail500(`controller ${id} is used by ${zone}`)
}

export interface Cidr {
  version: 4 | 6
  network: bigint
  mask: number
}

/** SubnetPlugin parse_sdn_subnet_id's CIDR, and `<zone>-<ip>-<mask>` ids split as sdn_subnets_config does */
export function parseCidr(text: string): Cidr | undefined {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text)
  const ip = m ? parseIp(m[1] as string) : undefined
  if (!m || !ip) return undefined
  const mask = Number(m[2])
  if (mask > (ip.version === 4 ? 32 : 128)) return undefined
  return { version: ip.version, network: ip.value, mask }
}

/** Net::Subnet's subnet_matcher: the address's leading `mask` bits equal the network's */
export function cidrContains(cidr: Cidr, addr: string): boolean {
  const ip = parseIp(addr)
  if (!ip || ip.version !== cidr.version) return false
  const bits = BigInt((cidr.version === 4 ? 32 : 128) - cidr.mask)
  return ip.value >> bits === cidr.network >> bits
}

const RANGE_FMT = {}

/**
 * SubnetPlugin on_update_hook without the IPAM half: the vnet exists and is not vlan-aware, the gateway is inside
 * the subnet (a /32 IPv4 point-to-point excepted), and validate_dhcp_ranges. `text` is the CIDR as the id spells it.
 */
export function subnetUpdateHook(subnet: SdnSection, text: string, vnets: SdnIds): void {
  const cidr = parseCidr(text)
  if (!cidr) throw fail400({ subnet: 'value does not look like a valid CIDR network' })
  const vnetid = subnet.vnet === undefined ? undefined : String(subnet.vnet)
  if (vnetid) {
    const vnet = vnets.get(vnetid)
    if (!vnet) throw fail400({ vnet: `${vnetid} don't exist` })
    if (vnet.vlanaware) throw fail400({ vnet: "you can't add a subnet on a vlanaware vnet" })
  }
  const gateway = subnet.gateway === undefined ? undefined : String(subnet.gateway)
  const pointopoint = gateway !== undefined && parseIp(gateway)?.version === 4 && cidr.mask === 32
  if (gateway && !cidrContains(cidr, gateway) && !pointopoint)
    throw fail400({ gateway: `${gateway} is not in subnet ${text}` })
  validateDhcpRanges(subnet, cidr, text)
}

/** SubnetPlugin validate_dhcp_ranges */
function validateDhcpRanges(subnet: SdnSection, cidr: Cidr, text: string): void {
  const ranges: [bigint, bigint][] = []
  for (const r of dhcpRanges(subnet)) {
    const start = parseIp(r['start-address'] ?? '')
    const end = parseIp(r['end-address'] ?? '')
    if (!start) throw fail400({ 'dhcp-range': `start-address is not a valid IP ${r['start-address']}` })
    if (!end) throw fail400({ 'dhcp-range': `end-address is not a valid IP ${r['end-address']}` })
    if (start.value > end.value)
      throw fail400({
        'dhcp-range': `start-address ${r['start-address']} must be smaller than end-address ${r['end-address']}`,
      })
    if (!cidrContains(cidr, r['start-address'] as string))
      throw fail400({ 'dhcp-range': `start-address ${r['start-address']} is not in subnet ${text}` })
    if (!cidrContains(cidr, r['end-address'] as string))
      throw fail400({ 'dhcp-range': `end-address ${r['end-address']} is not in subnet ${text}` })
    if (ranges.some(([a, b]) => start.value <= b && a <= end.value))
      throw fail400({ 'dhcp-range': 'dhcp ranges must not overlap' })
    ranges.push([start.value, end.value])
  }
}

/** Subnets::get_dhcp_ranges: each `start-address=..,end-address=..` parsed; an entry that does not parse is skipped */
export function dhcpRanges(subnet: SdnSection): Record<string, string>[] {
  const raw = subnet['dhcp-range']
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [String(raw)]
  const out: Record<string, string>[] = []
  for (const entry of list) {
    try {
      out.push(parsePropString(entry, RANGE_FMT))
    } catch (e) {
      if (!(e instanceof PropStringError)) throw e
    }
  }
  return out
}
