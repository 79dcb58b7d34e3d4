/**
 * Read-back after an SDN action: after a write, the object is in the config files with the values sent; after
 * the apply, the objects this plan wrote carry no pending edit (the running config matches the files).
 */
import { sdnConfigValues, type SdnObject } from '@proxops/pve-client/wire'
import type { Action } from '../../plan-types.js'
import type { LiveReader } from '../../ports.js'
import { subnetCidr } from './plan.js'

async function find(reader: LiveReader, address: string): Promise<SdnObject | undefined> {
  const [kind, id, ...rest] = address.split('/')
  if (kind === 'Subnet') {
    const cidr = rest.join('/')
    return (await reader.sdnSubnets(id ?? '')).find((o) => subnetCidr(o.id) === cidr)
  }
  const list = kind === 'Zone' ? 'zones' : kind === 'VNet' ? 'vnets' : 'controllers'
  return (await reader.sdn(list)).find((o) => o.id === id)
}

export async function confirmSdn(action: Action, reader: LiveReader): Promise<string | undefined> {
  if (action.kind === 'SdnApply') {
    // the writes this apply ends: their objects' pending edits are now running
    for (const id of action.dependsOn) {
      const o = await find(reader, id.replace(/#[^#]*$/, ''))
      if (o && (o.state !== undefined || Object.keys(o.pending).length > 0))
        return `${id.replace(/#[^#]*$/, '')} still has pending SDN edits after the apply`
    }
    return undefined
  }
  const r = action.requests[0]
  if (r?.call !== 'sdnWrite') return undefined
  const o = await find(reader, action.address)
  const cfg = o ? sdnConfigValues(o) : undefined
  if (!cfg) return `${action.address} is not in the SDN config`
  for (const d of action.diffs)
    if (d.key !== undefined && d.key !== 'type' && d.key !== 'vnet' && cfg[d.key] !== d.after)
      return `${action.address} has ${d.key}=${String(cfg[d.key])}, not ${String(d.after)}`
  return undefined
}
