import { idIdentity, type Identity } from '../contract.js'
import { poolKey } from './references.js'
import type { PoolManifest } from './types.js'

/** A Pool declares the PVE pool of its `spec.id` (user.cfg's `pool:` line). */
export function poolIdentity(m: PoolManifest): Identity[] {
  return idIdentity(poolKey(m.spec.id), `PVE pool id ${JSON.stringify(m.spec.id)}`, m, 'pool-id-duplicate')
}
