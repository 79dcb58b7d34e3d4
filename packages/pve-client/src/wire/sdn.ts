/**
 * pve-network's SDN listings (PVE::API2::Network::SDN::Zones, ::Vnets, ::Subnets, ::Controllers with
 * `pending=1`, which answer PVE::Network::SDN::pending_config) and each node's zone status
 * (PVE::API2::Network::SDN::Nodes::Zones). Values are kept as strings, as a config file writes them.
 */
import { WireError } from './errors.js'

/** the four SDN config files */
export type SdnKind = 'zones' | 'vnets' | 'subnets' | 'controllers'

/**
 * One SDN object of a `pending=1` listing: `values` are the running config's (what the running object has), and
 * `pending` the keys whose config-file value differs (`deleted` for a key the file lost); `state` says whether
 * the whole object is `new`, `changed` or `deleted` in the file. No `state` = the file and the running config agree.
 */
export interface SdnObject {
  id: string
  type?: string
  state?: 'new' | 'changed' | 'deleted'
  values: Record<string, string>
  pending: Record<string, string>
}

export interface SdnZoneStatus {
  zone: string
  status: string
}

const STATES = new Set(['new', 'changed', 'deleted'])
/** what a listing adds that is no option (the id keys, digest) or that sdn_subnets_config derives from the id */
const NOT_OPTIONS = new Set([
  'digest',
  'state',
  'pending',
  'type',
  'zone-type',
  'id',
  'cidr',
  'network',
  'mask',
  'subnet',
])

/** a value as the config file holds it: booleans 1/0, lists (dhcp-range) as `start-end` joined by `;` */
function flat(k: string, x: unknown): string {
  if (typeof x === 'boolean') return x ? '1' : '0'
  if (typeof x === 'number' || typeof x === 'string') return String(x)
  if (Array.isArray(x))
    return x
      .map((e) => flat(k, e))
      .sort()
      .join(';')
  if (x !== null && typeof x === 'object') {
    const o = x as Record<string, unknown>
    // a parsed dhcp-range (get_dhcp_ranges) and its property-string form read the same
    if (k === 'dhcp-range') return `${String(o['start-address'])}-${String(o['end-address'])}`
  }
  throw new WireError('WIRE_SCALAR', 'expected a scalar', k)
}

function flatRange(k: string, x: unknown): string {
  if (k === 'dhcp-range' && typeof x === 'string') {
    const m = /start-address=([^,]+),end-address=([^,]+)|end-address=([^,]+),start-address=([^,]+)/.exec(x)
    if (m) return m[1] !== undefined ? `${m[1]}-${m[2]}` : `${m[4]}-${m[3]}`
  }
  return flat(k, x)
}

/** one `pending=1` listing of `idKey` objects (`zone`, `vnet`, `subnet`, `controller`) */
export function decodeSdnObjects(v: unknown, idKey: string): SdnObject[] {
  const list = `${idKey}s`
  if (!Array.isArray(v)) throw new WireError('WIRE_SCALAR', 'expected a list', list)
  return v.map((item, i) => {
    const at = (field: string) => `${list}[${i}].${field}`
    if (item === null || typeof item !== 'object' || Array.isArray(item))
      throw new WireError('WIRE_SCALAR', 'expected an object', `${list}[${i}]`)
    const o = item as Record<string, unknown>
    const id = o[idKey]
    if (typeof id !== 'string' || id === '') throw new WireError('WIRE_SCALAR', `expected a ${idKey} id`, at(idKey))
    if (o.type != null && typeof o.type !== 'string') throw new WireError('WIRE_SCALAR', 'expected a type', at('type'))
    if (o.state != null && (typeof o.state !== 'string' || !STATES.has(o.state)))
      throw new WireError('WIRE_SCALAR', 'expected new, changed or deleted', at('state'))
    const pendingRaw = o.pending ?? {}
    if (pendingRaw === null || typeof pendingRaw !== 'object' || Array.isArray(pendingRaw))
      throw new WireError('WIRE_SCALAR', 'expected an object', at('pending'))
    const values: Record<string, string> = {}
    try {
      for (const [k, x] of Object.entries(o)) {
        if (k === idKey || NOT_OPTIONS.has(k) || x === null || x === undefined) continue
        if (Array.isArray(x) && x.length === 0) continue
        values[k] = flatRange(k, x)
      }
    } catch (e) {
      if (e instanceof WireError) throw new WireError('WIRE_SCALAR', 'expected a scalar', at(e.field ?? ''))
      throw e
    }
    const pending: Record<string, string> = {}
    for (const [k, x] of Object.entries(pendingRaw as Record<string, unknown>))
      if (x !== null && x !== undefined)
        pending[k] = Array.isArray(x)
          ? x
              .map((e) => flatRange(k, e))
              .sort()
              .join(';')
          : flatRange(k, x)
    return {
      id,
      ...(typeof o.type === 'string' ? { type: o.type } : {}),
      ...(typeof o.state === 'string' ? { state: o.state as SdnObject['state'] } : {}),
      values,
      pending,
    }
  })
}

export function decodeSdnZoneStatus(v: unknown): SdnZoneStatus[] {
  if (!Array.isArray(v)) throw new WireError('WIRE_SCALAR', 'expected a list', 'sdn zones')
  return v.map((item, i) => {
    const o = (item ?? {}) as Record<string, unknown>
    if (typeof o.zone !== 'string' || o.zone === '')
      throw new WireError('WIRE_SCALAR', 'expected a zone id', `zones[${i}].zone`)
    if (typeof o.status !== 'string') throw new WireError('WIRE_SCALAR', 'expected a status', `zones[${i}].status`)
    return { zone: o.zone, status: o.status }
  })
}

/** the config-file view of a pending listing's object: running values with the pending ones applied, and its type */
export function sdnConfigValues(o: SdnObject): Record<string, string> | undefined {
  if (o.state === 'deleted') return undefined
  const out: Record<string, string> = { ...o.values, ...(o.type === undefined ? {} : { type: o.type }) }
  for (const [k, x] of Object.entries(o.pending)) {
    if (x === 'deleted') delete out[k]
    else out[k] = x
  }
  return out
}
