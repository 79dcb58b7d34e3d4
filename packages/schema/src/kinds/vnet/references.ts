import { referenceById, type KindReference } from '../contract.js'
import { zoneReference } from '../zone/references.js'
import type { VNetManifest } from './types.js'

/** The identity key of the vnet `id`, by which subnets and guest NICs name it. */
export const vnetKey = (id: string): string => `sdn-vnet:${id}`

/** A reference to the vnet `id` written at `path`: the VNet of this cluster declaring it, if any. */
export const vnetReference = referenceById('VNet', 'vnet', vnetKey)

/** A vnet needs its zone (the zone plugin's vnet_update_hook looks it up). */
export function vnetReferences(m: VNetManifest): KindReference<'Zone'>[] {
  return [zoneReference(m.spec.zone, ['spec', 'zone'])]
}
