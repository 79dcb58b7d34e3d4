import type { KindReference } from '../contract.js'
import type { StorageManifest } from './types.js'

/** The identity key of the storage `id` (identity.ts), by which other kinds name it. */
export const storageKey = (id: string): string => `storage:${id}`

/** A Storage names no other manifest. */
export function storageReferences(m: StorageManifest): KindReference<never>[] {
  void m
  return []
}
