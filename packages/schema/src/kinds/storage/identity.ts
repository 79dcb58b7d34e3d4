import { idIdentity, type Identity } from '../contract.js'
import { storageKey } from './references.js'
import type { StorageManifest } from './types.js'

/** A Storage declares the storage.cfg section of its `spec.id`. */
export function storageIdentity(m: StorageManifest): Identity[] {
  return idIdentity(storageKey(m.spec.id), `PVE storage id ${JSON.stringify(m.spec.id)}`, m, 'storage-id-duplicate')
}
