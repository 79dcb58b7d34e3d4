/**
 * The Storage field table, planner side: each option of the schema's table (STORAGE_OPTIONS, from pve-storage's
 * plugin `options`) in the string form storage.cfg and `GET /storage` hold it, so that a create, the per-key compare
 * and adopt read the same facts.
 */
import {
  STORAGE_OPTIONS,
  STORAGE_SECRETS,
  STORAGE_TYPES,
  optionHas,
  secretRefField,
  type StorageManifest,
  type StorageOptionKey,
  type StorageSecretKey,
  type StorageType,
} from '@proxops/schema'
import type { LiveStorageConfig } from '../../inventory.js'
import { sortedPairs } from '../../kit/text.js'

export const OPTION_KEYS = Object.keys(STORAGE_OPTIONS) as StorageOptionKey[]
export const SECRET_KEYS = Object.keys(STORAGE_SECRETS) as StorageSecretKey[]

/** what storage.cfg means when a key is absent, where PVE's default is known to be 0 and `GET /storage` omits it */
const ABSENT: Partial<Record<StorageOptionKey, string>> = { disable: '0', shared: '0' }

/** a comma list sorted as ProxOps prints it (`content`, `nodes`) */
const sortedList = (text: string): string =>
  [...new Set(text.split(/[,;\s]+/).filter((x) => x !== ''))].sort().join(',')

/** `keep-daily=7,keep-last=3`: keys sorted */
const sortedPropertyString = (text: string): string =>
  text
    .split(',')
    .filter((t) => t !== '')
    .sort()
    .join(',')

/** One declared option in PVE's string form. */
export function encodeOption(key: StorageOptionKey, value: unknown): string {
  const form = STORAGE_OPTIONS[key].form
  if (form === 'list') return [...(value as string[])].sort().join(',')
  if (form === 'bool') return value === true ? '1' : '0'
  if (form === 'prune') return sortedPairs(value as Record<string, number>)
  return String(value)
}

/** A live option in encodeOption's form; undefined when unset. */
export function liveOption(live: LiveStorageConfig, key: StorageOptionKey): string | undefined {
  const v = live.values[key]
  if (v === undefined) return ABSENT[key]
  const form = STORAGE_OPTIONS[key].form
  if (form === 'list') return key === 'content' && v === 'none' ? '' : sortedList(v)
  if (form === 'prune') return sortedPropertyString(v)
  return v
}

/** The declared options of a manifest, in table order: key and PVE value. */
export function declaredOptions(m: StorageManifest): { key: StorageOptionKey; value: string }[] {
  const out: { key: StorageOptionKey; value: string }[] = []
  const spec = m.spec as Record<string, unknown>
  for (const key of OPTION_KEYS) if (spec[key] !== undefined) out.push({ key, value: encodeOption(key, spec[key]) })
  return out
}

/** The declared credential references: sensitive key and SOPS reference. */
export function declaredSecrets(m: StorageManifest): { key: StorageSecretKey; ref: string }[] {
  const spec = m.spec as Record<string, unknown>
  return SECRET_KEYS.flatMap((key) => {
    const ref = spec[secretRefField(key)]
    return typeof ref === 'string' ? [{ key, ref }] : []
  })
}

/** The manifest value of a live option (adopt): the table's form read backwards. */
export function decodeOption(key: StorageOptionKey, text: string): unknown {
  const form = STORAGE_OPTIONS[key].form
  if (form === 'list') return text === 'none' || text === '' ? [] : sortedList(text).split(',')
  if (form === 'bool') return text === '1'
  if (form === 'int') return Number(text)
  if (form === 'prune') {
    const prune: Record<string, number | boolean> = {}
    for (const token of text.split(',')) {
      const [k = '', v = ''] = token.split('=')
      if (k !== '') prune[k] = k === 'keep-all' ? v === '1' : Number(v)
    }
    return prune
  }
  return text
}

export const isStorageType = (t: string): t is StorageType => (STORAGE_TYPES as readonly string[]).includes(t)

/** the option keys a live section holds that the table has for its type */
export const modelled = (type: StorageType, key: string): key is StorageOptionKey =>
  (OPTION_KEYS as string[]).includes(key) && optionHas(key as StorageOptionKey, type)

/** shared by type (nfs, cifs, pbs, rbd) or by `shared 1`: one volume namespace for every node */
export const sharedStorage = (live: LiveStorageConfig): boolean =>
  ['nfs', 'cifs', 'pbs', 'rbd', 'cephfs'].includes(live.type) || live.values.shared === '1'
