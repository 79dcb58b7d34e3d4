import type { Add } from '../contract.js'
import { REF_NAME } from '../../names.js'
import { normalisePrune } from '../../manifest/prune-backups.js'
import {
  STORAGE_CFG_ID,
  STORAGE_OPTIONS,
  STORAGE_SECRETS,
  optionHas,
  optionRequired,
  secretRefField,
  type StorageOptionKey,
  type StorageSecretKey,
} from './options.js'
import type { StorageManifest } from './types.js'

/**
 * `spec.id` defaults to `metadata.name` and must be a `pve-storage-id`; every option and secret must exist for the
 * type (check_config's `unexpected property`) and the type's required options must be there (a create needs
 * them); lists are sorted and de-duplicated as PVE prints them; `prune-backups` as validate_prune_backups
 * normalises it.
 */
export function finaliseStorage(m: StorageManifest, add: Add): void {
  const spec = m.spec
  const declared = spec.id !== undefined
  const id = spec.id ?? m.metadata.name
  if (!STORAGE_CFG_ID.test(id))
    add(
      'field-invalid',
      declared ? ['spec', 'id'] : ['metadata', 'name'],
      `${JSON.stringify(id)} cannot be a PVE storage id: a letter, then letters, digits, "-", "_" or ".", ending in a letter or digit${declared ? '' : '; set spec.id'}`,
    )
  spec.id = id
  const type = spec.type
  for (const key of Object.keys(STORAGE_OPTIONS) as StorageOptionKey[]) {
    const has = optionHas(key, type)
    if (spec[key] !== undefined && !has)
      add('field-invalid', ['spec', key], `a ${type} storage has no option ${key} (pve-storage's ${type} plugin)`)
    if (spec[key] === undefined && has && optionRequired(key, type))
      add('field-invalid', ['spec', key], `a ${type} storage needs ${key}`)
  }
  for (const key of Object.keys(STORAGE_SECRETS) as StorageSecretKey[]) {
    const field = secretRefField(key)
    const r = spec[field]
    if (r === undefined) continue
    if (!(STORAGE_SECRETS[key].types as readonly string[]).includes(type))
      add('field-invalid', ['spec', field], `a ${type} storage has no ${key}`)
    else if (!r.startsWith('secrets.') || !REF_NAME.test(r.slice('secrets.'.length)))
      add(
        'ref-invalid',
        ['spec', field],
        `${field} must look like secrets.<name> (lowercase letters, digits, "-"), got ${JSON.stringify(r)}`,
      )
  }
  if (spec['master-pubkey-ref'] !== undefined && spec['encryption-key-ref'] === undefined)
    add(
      'field-invalid',
      ['spec', 'master-pubkey-ref'],
      'master-pubkey needs encryption-key-ref too (PBSPlugin on_add_hook)',
    )
  if (spec.content) spec.content = [...new Set(spec.content)].sort()
  if (spec.nodes) spec.nodes = [...new Set(spec.nodes)].sort()
  const prune = spec['prune-backups'] as Record<string, number | boolean | undefined> | undefined
  if (prune !== undefined) {
    const normalised = normalisePrune(prune, add, ['spec', 'prune-backups'])
    if (normalised) spec['prune-backups'] = normalised
  }
}
