import type { Identity } from '../contract.js'
import { sdnIdentity } from '../../manifest/sdn.js'
import { zoneKey } from './references.js'
import type { ZoneManifest } from './types.js'

/** A Zone declares the SDN zone of its `spec.id` (`/etc/pve/sdn/zones.cfg`). */
export function zoneIdentity(m: ZoneManifest): Identity[] {
  return sdnIdentity(zoneKey(m.spec.id), 'zone', m)
}
