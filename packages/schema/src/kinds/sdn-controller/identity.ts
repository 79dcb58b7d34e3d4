import type { Identity } from '../contract.js'
import { sdnIdentity } from '../../manifest/sdn.js'
import { controllerKey } from '../zone/references.js'
import type { SdnControllerManifest } from './types.js'

/** An SdnController declares the controller of its `spec.id` (`/etc/pve/sdn/controllers.cfg`). */
export function sdnControllerIdentity(m: SdnControllerManifest): Identity[] {
  return sdnIdentity(controllerKey(m.spec.id), 'controller', m)
}
