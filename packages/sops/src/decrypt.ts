// Decrypting a sops file: metadata → data key (age, or given) → values and MAC (always verified).
import { readFile } from 'node:fs/promises'
import { type Document, isMap, isScalar } from 'yaml'
import { unwrapDataKey } from './age.js'
import { openEnc, parseEnc } from './cipher.js'
import { DecryptedDocument } from './document.js'
import { SopsError, guarded } from './errors.js'
import { type AgeIdentity, type DiscoveryOptions, discoverIdentities, identitiesFromStrings } from './identities.js'
import { type SopsMetadata, readMetadata } from './metadata.js'
import { type SopsFormat, formatFromName, parseDocuments } from './parse.js'
import { compileRule } from './rules.js'
import { decryptTree } from './tree.js'

export interface KeyOptions {
  /** age identities (`AGE-SECRET-KEY-1…` lines, or discovered ones). Used instead of discovery. */
  identities?: readonly (string | AgeIdentity)[]
  /** The 32-byte data key, bypassing the key layer (e.g. for PGP/KMS files whose key you unwrapped). */
  dataKey?: Uint8Array
  /** Discover identities as sops does, from this environment and home directory. */
  discovery?: Omit<DiscoveryOptions, 'recipient'>
}

export interface DecryptOptions extends KeyOptions {
  /** Name used in error messages (and to pick the format). Default `<input>`. */
  file?: string
  format?: SopsFormat
}

/** The parsed, not yet decrypted parts of a sops file. */
export interface ParsedSops {
  file: string
  format: SopsFormat
  docs: Document[]
  metadata: SopsMetadata
}

export function parseSops(text: string, file: string, format: SopsFormat = formatFromName(file)): ParsedSops {
  const docs = parseDocuments(text, file)
  const raw = findMetadata(docs)
  if (raw === undefined) throw new SopsError('NotEncrypted', file, 'no sops metadata: the file is not encrypted')
  return { file, format, docs, metadata: readMetadata(raw, file) }
}

function findMetadata(docs: readonly Document[]): unknown {
  for (const doc of docs) {
    if (!isMap(doc.contents)) continue
    const pair = doc.contents.items.find((p) => isScalar(p.key) && p.key.value === 'sops')
    if (pair) return (pair.value as { toJS?: (d: Document) => unknown } | null)?.toJS?.(doc) ?? pair.value
  }
  return undefined
}

function toIdentities(list: readonly (string | AgeIdentity)[], file: string): AgeIdentity[] {
  try {
    return list.flatMap((x, i) => (typeof x === 'string' ? identitiesFromStrings([x], `identities[${i}]`) : [x]))
  } catch (e) {
    // The detail names sources and line numbers only.
    const detail = e instanceof SopsError ? e.message.slice(e.file.length + 2) : 'unreadable'
    throw new SopsError('NoIdentity', file, `invalid identity (${detail})`)
  }
}

/** Resolves the data key for parsed metadata using the given key options. */
export async function resolveDataKey(p: ParsedSops, opts: KeyOptions): Promise<Uint8Array> {
  const { file, metadata } = p
  if (opts.dataKey) {
    if (opts.dataKey.length !== 32) throw new SopsError('Malformed', file, 'the data key must be 32 bytes')
    return opts.dataKey
  }
  const recipients = metadata.age.map((s) => s.recipient)
  if (metadata.age.length === 0) {
    if (metadata.otherKeyKinds.length > 0)
      throw new SopsError(
        'Unsupported',
        file,
        `no age recipients; the file is encrypted to ${metadata.otherKeyKinds.join(', ')} only`,
      )
    throw new SopsError('Malformed', file, 'no key material in sops metadata')
  }
  if (opts.identities) return unwrapDataKey(metadata.age, toIdentities(opts.identities, file), file)
  if (!opts.discovery)
    throw new SopsError('NoIdentity', file, 'no identities given and no discovery environment', { recipients })

  // SOPS_AGE_KEY_CMD sees SOPS_AGE_RECIPIENT, so sops runs discovery once per recipient; so do we.
  const perRecipient = opts.discovery.env.SOPS_AGE_KEY_CMD !== undefined
  const rounds = perRecipient ? recipients : [undefined]
  let lastError: SopsError | undefined
  for (const recipient of rounds) {
    const found = await discoverIdentities({ ...opts.discovery, ...(recipient ? { recipient } : {}) })
    if (found.identities.length === 0) {
      const looked = [...found.unused, ...found.problems].join('; ')
      lastError = new SopsError('NoIdentity', file, `failed to load age identities (looked at: ${looked})`, {
        recipients,
      })
      continue
    }
    try {
      return await unwrapDataKey(metadata.age, found.identities, file, found.unused)
    } catch (e) {
      if (!(e instanceof SopsError) || e.code !== 'IdentityMismatch') throw e
      lastError = e
    }
  }
  throw lastError ?? new SopsError('NoIdentity', file, 'no age identity found', { recipients })
}

/** Decrypts the values of parsed documents in place and verifies the MAC. */
export function decryptParsed(p: ParsedSops, dataKey: Uint8Array): DecryptedDocument {
  const { file, metadata } = p
  let shouldEncrypt
  try {
    shouldEncrypt = compileRule(metadata.rule)
  } catch {
    throw new SopsError(
      'Unsupported',
      file,
      `the ${metadata.rule.kind} pattern is not a JavaScript-compatible regular expression`,
    )
  }
  const tree = decryptTree(p.docs, { file, dataKey, shouldEncrypt, macOnlyEncrypted: metadata.macOnlyEncrypted })
  const stored = parseEnc(metadata.mac)
  if (!stored || stored.type !== 'str') throw new SopsError('Malformed', file, 'sops.mac is not an ENC[] string value')
  const mac = openEnc(stored, dataKey, metadata.macAad)
  if (!mac)
    throw new SopsError(
      'MacMismatch',
      file,
      'the stored MAC failed authentication (altered mac or lastmodified, or wrong data key)',
    )
  if (Buffer.from(mac).toString('utf8') !== tree.mac)
    throw new SopsError('MacMismatch', file, 'the computed MAC differs from the stored MAC (the file was altered)')
  return new DecryptedDocument({
    file,
    format: p.format,
    docs: p.docs,
    leaves: tree.leaves,
    recipients: metadata.age.map((s) => s.recipient),
    lastModified: metadata.lastModified,
    undecryptedComments: tree.undecryptedComments,
  })
}

/** Decrypts sops text (YAML or JSON). The MAC is always verified; every failure is a SopsError. */
export async function decryptSops(text: string, opts: DecryptOptions = {}): Promise<DecryptedDocument> {
  const file = opts.file ?? '<input>'
  return guarded(file, 'Malformed', async () => {
    const parsed = parseSops(text, file, opts.format ?? formatFromName(file))
    return decryptParsed(parsed, await resolveDataKey(parsed, opts))
  })
}

/** A sops file's text; a file that cannot be read is `Malformed`, naming the file and the system's error code. */
export async function readSopsFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (e) {
    throw new SopsError('Malformed', path, `cannot read file (${String((e as { code?: unknown }).code ?? 'error')})`)
  }
}

/** Reads and decrypts a sops file. */
export async function decryptSopsFile(
  path: string,
  opts: Omit<DecryptOptions, 'file'> = {},
): Promise<DecryptedDocument> {
  return decryptSops(await readSopsFile(path), { ...opts, file: path })
}
