import type { Identity } from '../contract.js'
import { storageKey } from './references.js'
import type { StorageManifest } from './types.js'

/** A Storage declares the storage.cfg section of its `spec.id`. */
export function storageIdentity(m: StorageManifest): Identity[] {
  return [
    {
      key: storageKey(m.spec.id),
      label: `PVE storage id ${JSON.stringify(m.spec.id)}`,
      path: m.spec.id === m.metadata.name ? ['metadata', 'name'] : ['spec', 'id'],
      code: 'storage-id-duplicate',
    },
  ]
}
