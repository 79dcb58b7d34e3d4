import type { Identity } from '../contract.js'
import { idPath } from '../../manifest/sdn.js'
import { controllerKey } from '../zone/references.js'
import type { SdnControllerManifest } from './types.js'

/** An SdnController declares the controller of its `spec.id` (`/etc/pve/sdn/controllers.cfg`). */
export function sdnControllerIdentity(m: SdnControllerManifest): Identity[] {
  return [
    {
      key: controllerKey(m.spec.id),
      label: `PVE SDN controller id ${JSON.stringify(m.spec.id)}`,
      path: idPath(m),
      code: 'sdn-id-duplicate',
    },
  ]
}
