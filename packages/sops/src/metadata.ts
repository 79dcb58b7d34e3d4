// The `sops:` metadata block (stores/stores.go `metadata`), read into a checked structure.
import { SopsError } from './errors.js'
import { normalizeRfc3339 } from './gotext.js'
import { type CryptRule, DEFAULT_RULE, RULE_KINDS } from './rules.js'

export interface AgeStanza {
  recipient: string
  /** ASCII-armored age file whose plaintext is the 32-byte data key. */
  enc: string
}

export interface SopsMetadata {
  age: AgeStanza[]
  /** Other master-key kinds with entries (pgp, kms, …): public, for error messages. */
  otherKeyKinds: string[]
  lastModified: string
  /** lastmodified as Go re-formats it: the AAD of the MAC. */
  macAad: string
  mac: string
  rule: CryptRule
  macOnlyEncrypted: boolean
  version: string | undefined
}

const OTHER_KINDS = ['pgp', 'kms', 'gcp_kms', 'azure_kv', 'hc_vault', 'hckms']

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function ageStanzas(list: unknown, file: string, where: string): AgeStanza[] {
  if (list === undefined || list === null) return []
  if (!Array.isArray(list)) throw new SopsError('Malformed', file, `${where} is not a list`)
  return list.map((entry, i) => {
    if (!isRecord(entry) || typeof entry.recipient !== 'string' || typeof entry.enc !== 'string')
      throw new SopsError('Malformed', file, `${where}[${i}] needs string fields recipient and enc`)
    return { recipient: entry.recipient.trim(), enc: entry.enc }
  })
}

function presentKinds(group: Record<string, unknown>): string[] {
  return OTHER_KINDS.filter((k) => Array.isArray(group[k]) && (group[k] as unknown[]).length > 0)
}

/** Checks and reads the plain JS form of the `sops:` mapping. */
export function readMetadata(raw: unknown, file: string): SopsMetadata {
  if (!isRecord(raw)) throw new SopsError('Malformed', file, 'sops metadata is not a mapping')

  let age = ageStanzas(raw.age, file, 'sops.age')
  let otherKeyKinds = presentKinds(raw)
  if (raw.key_groups !== undefined && raw.key_groups !== null) {
    const groups = raw.key_groups
    if (!Array.isArray(groups)) throw new SopsError('Malformed', file, 'sops.key_groups is not a list')
    if (groups.length > 1)
      throw new SopsError('Unsupported', file, `${groups.length} key groups (Shamir secret sharing) are not supported`)
    const group: unknown = groups[0] ?? {}
    if (!isRecord(group)) throw new SopsError('Malformed', file, 'sops.key_groups[0] is not a mapping')
    age = [...age, ...ageStanzas(group.age, file, 'sops.key_groups[0].age')]
    otherKeyKinds = [...new Set([...otherKeyKinds, ...presentKinds(group)])]
  }

  const { lastmodified, mac } = raw
  if (typeof lastmodified !== 'string') throw new SopsError('Malformed', file, 'sops.lastmodified is missing')
  const macAad = normalizeRfc3339(lastmodified)
  if (macAad === undefined) throw new SopsError('Malformed', file, 'sops.lastmodified is not an RFC 3339 time')
  if (typeof mac !== 'string' || mac === '') throw new SopsError('Malformed', file, 'sops.mac is missing')

  for (const k of ['unencrypted_comment_regex', 'encrypted_comment_regex'])
    if (typeof raw[k] === 'string' && raw[k] !== '')
      throw new SopsError('Unsupported', file, `the ${k} rule is not supported`)
  const rules = RULE_KINDS.filter((k) => typeof raw[k] === 'string' && raw[k] !== '')
  if (rules.length > 1) throw new SopsError('Malformed', file, `several encryption rules are set: ${rules.join(', ')}`)
  const kind = rules[0]
  const rule: CryptRule = kind ? { kind, value: raw[kind] as string } : DEFAULT_RULE

  const macOnly = raw.mac_only_encrypted
  if (macOnly !== undefined && macOnly !== null && typeof macOnly !== 'boolean')
    throw new SopsError('Malformed', file, 'sops.mac_only_encrypted is not a boolean')
  const version = raw.version
  return {
    age,
    otherKeyKinds,
    lastModified: lastmodified,
    macAad,
    mac,
    rule,
    macOnlyEncrypted: macOnly === true,
    version: typeof version === 'string' ? version : version === undefined ? undefined : String(version),
  }
}
