import type { Identity } from '../contract.js'
import { idPath } from '../../manifest/sdn.js'
import { zoneKey } from './references.js'
import type { ZoneManifest } from './types.js'

/** A Zone declares the SDN zone of its `spec.id` (`/etc/pve/sdn/zones.cfg`). */
export function zoneIdentity(m: ZoneManifest): Identity[] {
  return [
    {
      key: zoneKey(m.spec.id),
      label: `PVE SDN zone id ${JSON.stringify(m.spec.id)}`,
      path: idPath(m),
      code: 'sdn-id-duplicate',
    },
  ]
}
