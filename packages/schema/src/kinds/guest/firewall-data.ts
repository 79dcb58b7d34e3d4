/**
 * Facts pve-firewall's rule verification (PVE::Firewall verify_rule) reads, for validating offline: the standard
 * macros ($pve_fw_macros; each line's fixed keys, as a rule may not contradict them), ICMP type names and the
 * service and protocol names of a Debian node's /etc/services and /etc/protocols. The tables are the repository's
 * `pve-data/firewall.json` (compiled in as src/pve-data.ts), which the simulator reads too.
 */
import { firewallData } from '../../pve-data.js'

export const FW_MACROS: Readonly<Record<string, readonly (readonly [string, string][])[]>> = Object.fromEntries(
  Object.entries(firewallData.macros).map(([name, lines]) => [name, lines.map((line) => Object.entries(line))]),
)

export const ICMP_TYPES: ReadonlySet<string> = new Set(firewallData.icmpTypes)

export const ICMPV6_TYPES: ReadonlySet<string> = new Set(firewallData.icmpv6Types)

/** /etc/services names with a tcp, udp or sctp port */
export const SERVICES: ReadonlySet<string> = new Set(firewallData.services)

/** /etc/protocols: name -> number (get_etc_protocols adds `icmpv6`) */
export const PROTOCOLS: Readonly<Record<string, number>> = firewallData.protocols
