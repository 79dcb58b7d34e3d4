import type { Add } from '../contract.js'
import { finaliseSdnId, VNET_ID } from '../../manifest/sdn.js'
import type { VNetManifest } from './types.js'

/** parse_sdn_vnet_id: at most 8 characters, a letter first (the zone's tag rules: loader checks, sdn-checks.ts) */
export function finaliseVNet(m: VNetManifest, add: Add): void {
  finaliseSdnId(m, VNET_ID, add)
}
