import type { Add } from '../contract.js'
import { NEW_POOL_ID } from './schema.js'
import type { PoolManifest } from './types.js'

/** `spec.id` defaults to `metadata.name`; the effective id must be one create_pool accepts */
export function finalisePool(m: PoolManifest, add: Add): void {
  const spec: Partial<PoolManifest['spec']> = m.spec
  const declared = spec.id !== undefined
  const id = spec.id ?? m.metadata.name
  if (!NEW_POOL_ID.test(id)) {
    const problem = `${JSON.stringify(id)} cannot be a PVE pool id: letters, digits, ".", "-" and "_", in at most three "/"-separated levels each starting with a letter`
    add(
      'field-invalid',
      declared ? ['spec', 'id'] : ['metadata', 'name'],
      declared ? problem : `${problem}; set spec.id`,
    )
  }
  m.spec.id = id
}
