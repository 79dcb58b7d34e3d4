// Writing sops files: a fresh data key wrapped to each age recipient, values sealed per the rule, the
// MAC over the plaintext, then the `sops:` metadata (age, lastmodified, mac, rule, version).
import { randomBytes } from 'node:crypto'
import { Document, type Scalar, YAMLMap, isMap, isScalar, isSeq } from 'yaml'
import { wrapDataKey } from './age.js'
import { sealEnc } from './cipher.js'
import { decryptParsed, parseSops } from './decrypt.js'
import { SopsError, guarded } from './errors.js'
import { formatLastModified, normalizeRfc3339 } from './gotext.js'
import { type SopsFormat, formatFromName, parseDocuments, serialize } from './parse.js'
import { type CryptRule, DEFAULT_RULE, compileRule } from './rules.js'
import { encryptTree } from './tree.js'

/** The sops release whose file format this package writes (sops reads `version` for information only). */
export const SOPS_FORMAT_VERSION = '3.13.2'

export interface EncryptOptions {
  /** age recipients (`age1…` X25519 or `age1pq1…` hybrid); the data key is wrapped to each. */
  recipients: readonly string[]
  /** Name used in error messages (and to pick the format). Default `<input>`. */
  file?: string
  format?: SopsFormat
  /** Which keys get encrypted. Default: everything except keys ending in `_unencrypted`. */
  rule?: CryptRule
  macOnlyEncrypted?: boolean
  /** Time for `lastmodified` (default: now). */
  now?: Date
  /** A given data key instead of a fresh random one (tests). */
  dataKey?: Uint8Array
}

/** The MAC sealed as sops stores it: the uppercase hex, type str, AAD = lastmodified. */
export function sealMac(mac: string, dataKey: Uint8Array, lastModified: string): string {
  const aad = normalizeRfc3339(lastModified)
  if (aad === undefined) throw new Error('lastmodified is not RFC 3339')
  return sealEnc(Buffer.from(mac, 'utf8'), 'str', dataKey, aad)
}

function metadataNode(
  doc: Document,
  stanzas: { recipient: string; enc: string }[],
  lastModified: string,
  mac: string,
  o: EncryptOptions,
) {
  const rule = o.rule ?? DEFAULT_RULE
  const meta: Record<string, unknown> = { age: stanzas, lastmodified: lastModified, mac, [rule.kind]: rule.value }
  if (o.macOnlyEncrypted) meta.mac_only_encrypted = true
  meta.version = SOPS_FORMAT_VERSION
  const node = doc.createNode(meta) as YAMLMap
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined
    if (key === 'lastmodified') (pair.value as Scalar).type = 'QUOTE_DOUBLE'
    if (key === 'age' && isSeq(pair.value))
      for (const stanza of pair.value.items)
        if (isMap(stanza))
          for (const p of stanza.items)
            if (isScalar(p.key) && p.key.value === 'enc' && isScalar(p.value)) p.value.type = 'BLOCK_LITERAL'
  }
  return node
}

/** Encrypts plaintext YAML or JSON (a top-level mapping) into a sops file's text. */
export async function encryptSops(plaintext: string | Document, opts: EncryptOptions): Promise<string> {
  return guarded(opts.file ?? '<input>', 'Malformed', () => encryptUnguarded(plaintext, opts))
}

async function encryptUnguarded(plaintext: string | Document, opts: EncryptOptions): Promise<string> {
  const file = opts.file ?? '<input>'
  const format = opts.format ?? formatFromName(file)
  if (opts.recipients.length === 0) throw new SopsError('Malformed', file, 'at least one age recipient is required')
  const docs = typeof plaintext === 'string' ? parseDocuments(plaintext, file) : [plaintext.clone()]
  if (docs.length === 0) docs.push(new Document({}))
  if (format === 'json' && docs.length > 1) throw new SopsError('Malformed', file, 'JSON input must be a single object')
  for (const doc of docs) {
    if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) doc.contents = new YAMLMap()
    if (isMap(doc.contents) && doc.contents.items.some((p) => isScalar(p.key) && p.key.value === 'sops'))
      throw new SopsError('Malformed', file, 'the input already has a top-level sops key (already encrypted?)')
  }
  const rule = opts.rule ?? DEFAULT_RULE
  let shouldEncrypt
  try {
    shouldEncrypt = compileRule(rule)
  } catch {
    throw new SopsError('Unsupported', file, `the ${rule.kind} pattern is not a valid regular expression`)
  }

  const dataKey = opts.dataKey ?? new Uint8Array(randomBytes(32))
  if (dataKey.length !== 32) throw new SopsError('Malformed', file, 'the data key must be 32 bytes')
  const mac = encryptTree(docs, { file, dataKey, shouldEncrypt, macOnlyEncrypted: opts.macOnlyEncrypted === true })
  const lastModified = formatLastModified(opts.now ?? new Date())
  const stanzas = []
  for (const recipient of opts.recipients) stanzas.push({ recipient, enc: await wrapDataKey(dataKey, recipient, file) })

  const first = docs[0] as Document
  if (!isMap(first.contents)) throw new SopsError('Malformed', file, 'the top level of a document must be a mapping')
  first.contents.items.push(
    first.createPair('sops', metadataNode(first, stanzas, lastModified, sealMac(mac, dataKey, lastModified), opts)),
  )
  const text = serialize(docs, { format })

  // Fail closed on our own output: it must decrypt and verify with the data key.
  decryptParsed(parseSops(text, file, format), dataKey)
  return text
}
