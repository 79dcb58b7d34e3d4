/**
 * The storage ledger in the operator's data dir (`<data-dir>/storage-ledger.json`, docs/storage.md#ownership-and-
 * credentials): per cluster entry, the storages ProxOps created or changed and the keyed fingerprints of the
 * credentials it sent, with the HMAC key beside them (32 random bytes made on the first apply). It holds no
 * secret value. `diff` reads it and never writes it (without the file it plans with an empty ledger); `apply`
 * creates it and writes it after every storage write (mode 0600, written whole and renamed).
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { storageLedger } from '@proxops/planner'

type LedgerEntry = Parameters<typeof storageLedger>[1]
type StorageLedger = ReturnType<typeof storageLedger>
import { CliError } from '../errors.js'

export const LEDGER_FILE = 'storage-ledger.json'

interface LedgerFile {
  version: 1
  key: string
  clusters: Record<string, LedgerEntry>
}

function readLedger(file: string): LedgerFile | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new CliError('CONFIG_INVALID', `cannot read ${file}: ${(error as Error).message}`)
  }
  try {
    const parsed = JSON.parse(text) as Partial<LedgerFile>
    if (parsed.version !== 1 || typeof parsed.key !== 'string' || !/^[0-9a-f]{64}$/.test(parsed.key))
      throw new Error('no version 1 with a key')
    if (typeof parsed.clusters !== 'object' || parsed.clusters === null) throw new Error('no "clusters" object')
    for (const entry of Object.values(parsed.clusters))
      if (typeof entry?.storages !== 'object' || entry.storages === null) throw new Error('a cluster without storages')
    return parsed as LedgerFile
  } catch (error) {
    throw new CliError(
      'CONFIG_INVALID',
      `${file} is not a valid storage ledger (${(error as Error).message}); fix it, or remove it (ProxOps then owns no storage until it writes one again)`,
    )
  }
}

function writeLedger(file: string, ledger: LedgerFile): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, `${JSON.stringify(ledger, null, 2)}\n`, { mode: 0o600 })
  renameSync(tmp, file)
}

/** The ledger of one cluster entry: persistent when `write` (apply), read-only otherwise (diff, status). */
export function openStorageLedger(dataDir: string, cluster: string, write: boolean): StorageLedger {
  const file = path.join(dataDir, LEDGER_FILE)
  const ledger = readLedger(file) ?? { version: 1, key: randomBytes(32).toString('hex'), clusters: {} }
  const entry = (ledger.clusters[cluster] ??= { storages: {} })
  return storageLedger(Buffer.from(ledger.key, 'hex'), entry, write ? () => writeLedger(file, ledger) : undefined)
}
