import type { KindReference } from '../contract.js'
import type { StorageManifest } from './types.js'

/** The identity key of the storage `id` (identity.ts), by which other kinds name it. */
export const storageKey = (id: string): string => `storage:${id}`

/**
 * The storages a spec names in its `storage` fields (a guest's disks, root filesystem, mount points, EFI disk,
 * cloud-init drive; a backup job's target), each a reference to the Storage of this cluster declaring it, if any:
 * a storage created in the same apply comes before what allocates on it. None is no problem (a storage PVE has).
 */
export function namedStorageReferences(spec: unknown, path: KindReference['path']): KindReference<'Storage'>[] {
  const out: KindReference<'Storage'>[] = []
  const walk = (value: unknown, at: KindReference['path']): void => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...at, i]))
    else if (typeof value === 'object' && value !== null)
      for (const [k, v] of Object.entries(value)) {
        if (k === 'storage' && typeof v === 'string')
          out.push({ kind: 'Storage', name: v, via: 'storage', path: [...at, k], identity: storageKey(v) })
        else walk(v, [...at, k])
      }
  }
  walk(spec, path)
  return out
}

/** A Storage names no other manifest. */
export function storageReferences(m: StorageManifest): KindReference<never>[] {
  void m
  return []
}
