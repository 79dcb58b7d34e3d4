import { referenceById, type KindReference } from '../contract.js'
import type { ZoneManifest } from './types.js'

/** The identity key of the SDN zone `id`, by which vnets name it. */
export const zoneKey = (id: string): string => `sdn-zone:${id}`

/** A reference to the zone `id` written at `path`: the Zone of this cluster declaring it, if any. */
export const zoneReference = referenceById('Zone', 'zone', zoneKey)

/** The identity key of the SDN controller `id` */
export const controllerKey = (id: string): string => `sdn-controller:${id}`

/** An EVPN zone needs its controller (EvpnPlugin on_update_hook: it must exist and be evpn). */
export function zoneReferences(m: ZoneManifest): KindReference<'SdnController'>[] {
  const c = m.spec.controller
  return c === undefined
    ? []
    : [{ kind: 'SdnController', name: c, via: 'controller', path: ['spec', 'controller'], identity: controllerKey(c) }]
}
