import { referenceById, type KindReference } from '../contract.js'
import type { PoolManifest } from './types.js'

/** The identity key of the pool `id` (identity.ts), by which guests, backup jobs and nested pools name it. */
export const poolKey = (id: string): string => `pool:${id}`

/** A reference to the pool `id` written at `path`: the Pool of this cluster declaring it, if any. */
export const poolReference = referenceById('Pool', 'pool', poolKey)

/** A nested pool needs its parent (create_pool wants it). */
export function poolReferences(m: PoolManifest): KindReference<'Pool'>[] {
  const slash = m.spec.id.lastIndexOf('/')
  return slash < 0 ? [] : [poolReference(m.spec.id.slice(0, slash), ['spec', 'id'])]
}
