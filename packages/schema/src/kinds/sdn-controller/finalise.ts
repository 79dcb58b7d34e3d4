import type { Add } from '../contract.js'
import { CONTROLLER_ID, finaliseSdnId } from '../../manifest/sdn.js'
import type { SdnControllerManifest } from './types.js'

/** parse_sdn_controller_id; EvpnPlugin on_update_hook wants peers (its fabric alternative is not modelled) */
export function finaliseSdnController(m: SdnControllerManifest, add: Add): void {
  finaliseSdnId(m, CONTROLLER_ID, add)
  if (m.spec.peers.length === 0) add('field-invalid', ['spec', 'peers'], 'an evpn controller needs at least one peer')
}
