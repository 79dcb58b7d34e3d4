/**
 * Facts pve-firewall's rule verification reads: the standard macros (PVE::Firewall $pve_fw_macros, action
 * PARAM everywhere, so only each line's fixed keys are kept; `NeighborDiscovery` and `DHCPv6` come from the
 * IPv6 list), ICMP type names ($icmp_type_names, $icmpv6_type_names) and the service and protocol names of
 * a Debian node's /etc/services and /etc/protocols (netbase), which get_etc_services / get_etc_protocols read.
 * The tables are `pve-data/firewall.json`, which the schema package reads too.
 */
import { firewallData } from './pve-data.js'

/** macro name (preferred spelling) -> its template lines as `key=value` lists (values may hold commas) */
export const FW_MACROS: Readonly<Record<string, readonly (readonly [string, string][])[]>> = Object.fromEntries(
  Object.entries(firewallData.macros).map(([name, lines]) => [name, lines.map((line) => Object.entries(line))]),
)

export const ICMP_TYPES: ReadonlySet<string> = new Set(firewallData.icmpTypes)

export const ICMPV6_TYPES: ReadonlySet<string> = new Set(firewallData.icmpv6Types)

/** /etc/services names with a tcp, udp or sctp port */
export const SERVICES: ReadonlySet<string> = new Set(firewallData.services)

/** /etc/protocols: name -> number (get_etc_protocols adds `icmpv6`) */
export const PROTOCOLS: Readonly<Record<string, number>> = firewallData.protocols
