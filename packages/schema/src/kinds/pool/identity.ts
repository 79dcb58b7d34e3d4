import type { Identity } from '../contract.js'
import { poolKey } from './references.js'
import type { PoolManifest } from './types.js'

/** A Pool declares the PVE pool of its `spec.id` (user.cfg's `pool:` line). */
export function poolIdentity(m: PoolManifest): Identity[] {
  return [
    {
      key: poolKey(m.spec.id),
      label: `PVE pool id ${JSON.stringify(m.spec.id)}`,
      path: m.spec.id === m.metadata.name ? ['metadata', 'name'] : ['spec', 'id'],
      code: 'pool-id-duplicate',
    },
  ]
}
