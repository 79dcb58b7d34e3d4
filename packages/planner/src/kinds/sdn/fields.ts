/**
 * The SDN kinds' one field table: a manifest's spec as the PVE keys and string values pve-network's config files
 * hold (SectionConfig: booleans 1/0, lists comma-joined; a subnet's dhcp ranges as `start-end` joined by `;`, the
 * form @proxops/pve-client/wire's SDN codec reads). What PVE fills in itself (an EVPN zone's `mac`, a simple
 * vnet's) is compared only when declared.
 */
import type { SdnControllerManifest, SubnetManifest, VNetManifest, ZoneManifest } from '@proxops/schema'

export type SdnManifest = SdnControllerManifest | ZoneManifest | VNetManifest | SubnetManifest

/** a spec value as the config file writes it */
function text(v: unknown): string {
  if (typeof v === 'boolean') return v ? '1' : '0'
  if (Array.isArray(v)) return v.map(String).join(',')
  return String(v)
}

/** the owned PVE keys of one manifest and their values (`id`, a subnet's `vnet` and `cidr` name the object) */
export function desiredValues(m: SdnManifest, marker: string): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(m.spec)) {
    if (v === undefined || k === 'id' || k === 'cidr') continue
    if (m.kind === 'Subnet' && k === 'dhcp-range') {
      const ranges = v as { 'start-address': string; 'end-address': string }[]
      out[k] = ranges
        .map((r) => `${r['start-address']}-${r['end-address']}`)
        .sort()
        .join(';')
    } else out[k] = text(v)
  }
  // a VNet's alias carries the ownership marker (PVE keeps no comment on SDN objects)
  if (m.kind === 'VNet') out.alias = m.spec.alias === undefined ? marker : `${marker} ${m.spec.alias}`
  return out
}

/** the values as a request sends them: a dhcp range back as `start-address=..,end-address=..` (one range: plan.ts) */
export function sendValues(values: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(values)) {
    const [a, b] = v.split('-')
    out[k] = k === 'dhcp-range' ? `start-address=${String(a)},end-address=${String(b)}` : v
  }
  return out
}
