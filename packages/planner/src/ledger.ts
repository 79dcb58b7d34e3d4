/**
 * The StorageLedger port (ports.ts) over plain data: which storages a cluster entry wrote and the keyed
 * fingerprints (HMAC-SHA256 under the ledger's own key) of the credentials it sent. The CLI keeps the data in its
 * data dir (docs/storage.md#ownership-and-credentials); tests and embedders can keep it in memory. A fingerprint is
 * never the value and cannot be tested against guesses without the key, which never leaves the ledger.
 */
import { createHmac } from 'node:crypto'
import type { StorageLedger } from './ports.js'

/** One cluster entry's part of the ledger: storage id -> the fingerprints of its sensitive properties */
export interface LedgerEntry {
  storages: Record<string, { fingerprints: Record<string, string> }>
}

/**
 * A ledger over `entry` (mutated in place); `changed` is called after every record or forget, so that its keeper
 * can write it out.
 */
export function storageLedger(key: string | Uint8Array, entry: LedgerEntry, changed?: () => void): StorageLedger {
  return {
    owned: () => Object.keys(entry.storages).sort(),
    fingerprint: (storage, k) => entry.storages[storage]?.fingerprints[k],
    digest: (value) => `hmac-sha256:${createHmac('sha256', key).update(value).digest('hex')}`,
    record(storage, fingerprints) {
      const cur = entry.storages[storage] ?? { fingerprints: {} }
      entry.storages[storage] = { fingerprints: { ...cur.fingerprints, ...fingerprints } }
      changed?.()
    },
    forget(storage) {
      if (!(storage in entry.storages)) return
      delete entry.storages[storage]
      changed?.()
    },
  }
}
