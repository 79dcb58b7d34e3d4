/**
 * Live SDN objects to manifests: every controller (evpn), zone, vnet and subnet of the config files, keys as PVE
 * names them; a zone's or vnet's id longer than a manifest name allows keeps `spec.id`. What PVE filled in
 * itself (an EVPN zone's `mac`) is left out, so applying the adopted manifests changes nothing.
 */
import { sdnConfigValues, type SdnObject } from '@proxops/pve-client/wire'
import type { LiveInventory } from '../../inventory.js'
import type { AdoptContext } from '../../kit/adopt.js'
import type { Kind } from '@proxops/schema'
import { commentText } from '../../kit/ownership.js'
import { sanitiseName } from '../../kit/names.js'
import { subnetCidr } from './plan.js'

const BOOLS = new Set([
  'vlanaware',
  'isolate-ports',
  'snat',
  'advertise-subnets',
  'disable-arp-nd-suppression',
  'exitnodes-local-routing',
  'bridge-disable-mac-learning',
])
const INTS = new Set(['mtu', 'tag', 'vrf-vxlan', 'vxlan-port', 'asn'])
const LISTS = new Set(['nodes', 'exitnodes', 'peers', 'rt-import'])

function spec(values: Record<string, string>, skip: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(values).sort()) {
    const v = values[k] as string
    if (skip.includes(k)) continue
    if (BOOLS.has(k)) out[k] = v === '1'
    else if (INTS.has(k)) out[k] = Number(v)
    else if (LISTS.has(k)) out[k] = v.split(',').filter(Boolean)
    else if (k === 'dhcp-range')
      out[k] = v.split(';').map((r) => {
        const [a, b] = r.split('-')
        return { 'start-address': a, 'end-address': b }
      })
    else out[k] = v
  }
  return out
}

export function adoptSdn(live: LiveInventory, ctx: AdoptContext): void {
  if (live.sdn === undefined || 'unreadable' in live.sdn) return
  const sdn = live.sdn.known
  const doc = (kind: string, name: string, s: Record<string, unknown>) => ({
    apiVersion: 'proxops/v1alpha1',
    kind,
    metadata: { name },
    spec: s,
  })
  const push = (kind: Kind, folder: string, id: string, s: Record<string, unknown>) => {
    const name = sanitiseName(id, kind.toLowerCase())
    // an id the name rule changes stays the PVE id (a subnet's is `<zone>-<network>-<mask>`)
    if (name !== id && kind !== 'Subnet') s.id = id
    ctx.files.push({
      path: `${folder}/${ctx.options.cluster}/${name}.yaml`,
      kind,
      name,
      document: doc(kind, name, s),
      incomplete: [],
    })
  }
  const each = (list: readonly SdnObject[], f: (o: SdnObject, values: Record<string, string>) => void) => {
    for (const o of list) {
      const values = sdnConfigValues(o)
      if (values) f(o, values)
    }
  }
  each(sdn.controllers, (o, v) => {
    if (v.type === 'evpn') push('SdnController', 'sdncontroller', o.id, spec(v, ['fabric']))
  })
  each(sdn.zones, (o, v) => push('Zone', 'zone', o.id, spec(v, v.type === 'evpn' ? ['mac', 'fabric'] : ['fabric'])))
  each(sdn.vnets, (o, v) => {
    const s = spec(v, ['alias', 'type'])
    const alias = commentText(v.alias, ctx.tag)
    if (alias) s.alias = alias
    push('VNet', 'vnet', o.id, s)
  })
  each(sdn.subnets, (o, v) => push('Subnet', 'subnet', o.id, { ...spec(v, ['type', 'zone']), cidr: subnetCidr(o.id) }))
}
