// Adding keys to an existing sops file (for `adopt --adopt-secrets`, `proxops-sops add`) or replacing one value
// (`proxops-sops set`): the data key and the key stanzas are kept (so the file stays encrypted to exactly its
// existing recipients, like `sops set`), other values keep their ciphertext, only the new values are sealed, then
// lastmodified and the MAC are renewed. Without `overwrite` existing names are never replaced; no new names means
// no write.
import { type Document, Pair, Scalar, YAMLMap, isMap, isScalar } from 'yaml'
import { aadFor, sealEnc } from './cipher.js'
import { type KeyOptions, decryptParsed, parseSops, readSopsFile, resolveDataKey } from './decrypt.js'
import { type KeyPath, toKeyPath } from './document.js'
import { encryptSops, sealMac } from './encrypt.js'
import { SopsError, guarded } from './errors.js'
import { type AtomicWriteOptions, writeFileAtomic } from './fsutil.js'
import { formatLastModified } from './gotext.js'
import { type SopsFormat, detectStyle, formatFromName, parseDocuments, serialize } from './parse.js'
import { compileRule } from './rules.js'
import { decryptTree } from './tree.js'
import { leafFromScalar } from './values.js'

export interface SecretAddition {
  path: KeyPath
  /** Integers become sops `int`, other numbers `float`. */
  value: string | number | bigint | boolean
}

export interface MergeOptions extends KeyOptions {
  file?: string
  format?: SopsFormat
  now?: Date
  /**
   * Re-encrypt everything under a fresh data key wrapped to the file's existing age recipients, instead of
   * keeping the data key and the existing ciphertext (the default, like `sops set`). Refused for files that
   * also carry non-age keys, which would be lost.
   */
  rotateDataKey?: boolean
  /**
   * Replace a value that exists (`proxops-sops set`, like `sops set`) instead of leaving it; a mapping is never
   * replaced by a value.
   */
  overwrite?: boolean
}

export interface MergeTextResult {
  /** The new file text, or undefined when every key already existed (nothing to write). */
  text: string | undefined
  added: string[][]
  /** Paths that already existed and were left as they are. */
  existing: string[][]
}

export interface MergeResult {
  written: boolean
  added: string[][]
  existing: string[][]
}

function setScalar(map: YAMLMap, key: string, value: string, file: string, type?: Scalar.Type): void {
  const pair = map.items.find((p) => isScalar(p.key) && p.key.value === key)
  if (!pair || !isScalar(pair.value)) throw new SopsError('Malformed', file, `sops.${key} is not a scalar`)
  pair.value.value = value
  if (type) pair.value.type = type
}

function scalarFor(value: SecretAddition['value']): Scalar {
  const v = typeof value === 'number' && Number.isInteger(value) ? BigInt(value) : value
  return new Scalar(v)
}

/** Inserts `value` at `path` unless the path exists (or replaces its value, `overwrite`); returns the new scalar. */
function insert(
  doc: Document,
  path: readonly string[],
  value: SecretAddition['value'],
  file: string,
  overwrite = false,
): Scalar | undefined {
  if (path.length === 0 || path[0] === 'sops')
    throw new SopsError('Malformed', file, 'invalid key path for an addition', { path })
  const root = doc.contents
  if (!isMap(root)) throw new SopsError('Malformed', file, 'the top level of a document must be a mapping')
  let map: YAMLMap = root
  for (let i = 0; i < path.length; i++) {
    const key = path[i] as string
    const pair: Pair | undefined = map.items.find((p) => isScalar(p.key) && p.key.value === key)
    const last = i === path.length - 1
    if (pair) {
      if (last && !overwrite) return undefined
      if (last) {
        if (isMap(pair.value))
          throw new SopsError('Malformed', file, 'cannot set a value over a mapping', { path: path.slice(0, i + 1) })
        const node = scalarFor(value)
        pair.value = node
        return node
      }
      if (!isMap(pair.value))
        throw new SopsError('Malformed', file, 'cannot add below a value that is not a mapping', {
          path: path.slice(0, i + 1),
        })
      map = pair.value
      continue
    }
    const node: Scalar | YAMLMap = last ? scalarFor(value) : new YAMLMap()
    const newPair = new Pair(new Scalar(key), node)
    // New top-level keys go before the sops metadata, where sops keeps its block.
    const at = i === 0 ? map.items.findIndex((p) => isScalar(p.key) && p.key.value === 'sops') : -1
    if (at >= 0) map.items.splice(at, 0, newPair)
    else map.items.push(newPair)
    if (last) return node as Scalar
    map = node as YAMLMap
  }
  return undefined
}

/** Adds keys to sops text; the input is decrypted and its MAC verified first. */
export async function mergeSopsText(
  text: string,
  additions: readonly SecretAddition[],
  opts: MergeOptions = {},
): Promise<MergeTextResult> {
  return guarded(opts.file ?? '<input>', 'Malformed', () => mergeUnguarded(text, additions, opts))
}

async function mergeUnguarded(
  text: string,
  additions: readonly SecretAddition[],
  opts: MergeOptions,
): Promise<MergeTextResult> {
  const file = opts.file ?? '<input>'
  const format = opts.format ?? formatFromName(file)
  const parsed = parseSops(text, file, format)
  const dataKey = await resolveDataKey(parsed, opts)
  const plain = decryptParsed(parseSops(text, file, format), dataKey) // verifies every value and the MAC
  const { metadata } = parsed
  if (metadata.age.length === 0) throw new SopsError('Unsupported', file, 'the file has no age recipients to keep')
  if (opts.rotateDataKey) return mergeRotating(plain.revealText(), parsed, additions, opts)
  const shouldEncrypt = compileRule(metadata.rule)
  const first = parsed.docs[0] as Document

  const added: string[][] = []
  const existing: string[][] = []
  for (const a of additions) {
    const path = [...toKeyPath(a.path)]
    const scalar = insert(first, path, a.value, file, opts.overwrite)
    if (!scalar) {
      existing.push(path)
      continue
    }
    added.push(path)
    const leaf = leafFromScalar(scalar.value)
    if (!leaf) throw new SopsError('Malformed', file, 'unsupported value for an addition', { path })
    if (shouldEncrypt(path) && leaf.value !== '') {
      scalar.value = sealEnc(leaf.macBytes, leaf.type, dataKey, aadFor(path))
      scalar.type = 'PLAIN'
    }
  }
  if (added.length === 0) return { text: undefined, added, existing }

  // The MAC over the new plaintext, computed on a copy (decryptTree works in place).
  const copy = parsed.docs.map((d) => d.clone())
  const { mac } = decryptTree(copy, { file, dataKey, shouldEncrypt, macOnlyEncrypted: metadata.macOnlyEncrypted })
  const lastModified = formatLastModified(opts.now ?? new Date())
  const sopsNode = (first.contents as YAMLMap).items.find((p) => isScalar(p.key) && p.key.value === 'sops')?.value
  if (!isMap(sopsNode))
    throw new SopsError('Malformed', file, 'sops metadata must be in the first document to update it')
  setScalar(sopsNode, 'lastmodified', lastModified, file, 'QUOTE_DOUBLE')
  setScalar(sopsNode, 'mac', sealMac(mac, dataKey, lastModified), file)
  const out = serialize(parsed.docs, { format, ...detectStyle(text, format) })

  // Fail closed on our own output: it must verify and hold every addition.
  const check = decryptParsed(parseSops(out, file, format), dataKey)
  for (const path of added)
    if (!check.has(path))
      throw new SopsError('Malformed', file, 'internal check failed: an addition is missing', { path })
  return { text: out, added, existing }
}

/** The rotateDataKey variant: add to the plaintext, then encrypt anew to the same age recipients. */
async function mergeRotating(
  plainText: string,
  parsed: ReturnType<typeof parseSops>,
  additions: readonly SecretAddition[],
  opts: MergeOptions,
): Promise<MergeTextResult> {
  const { file, format, metadata } = parsed
  if (metadata.otherKeyKinds.length > 0)
    throw new SopsError(
      'Unsupported',
      file,
      `rotating the data key would drop the ${metadata.otherKeyKinds.join(', ')} keys`,
    )
  const docs = parseDocuments(plainText, file)
  const added: string[][] = []
  const existing: string[][] = []
  for (const a of additions) {
    const path = [...toKeyPath(a.path)]
    ;(insert(docs[0] as Document, path, a.value, file, opts.overwrite) ? added : existing).push(path)
  }
  if (added.length === 0) return { text: undefined, added, existing }
  const out = await encryptSops(serialize(docs, { format }), {
    recipients: metadata.age.map((s) => s.recipient),
    file,
    format,
    rule: metadata.rule,
    macOnlyEncrypted: metadata.macOnlyEncrypted,
    ...(opts.now ? { now: opts.now } : {}),
  })
  return { text: out, added, existing }
}

/**
 * Adds keys to a sops file in place: `<file>.proxops-tmp` then an atomic rename. Existing keys are
 * never overwritten; nothing is written when there is nothing new; on any failure the original is
 * untouched.
 */
export async function mergeSopsFile(
  path: string,
  additions: readonly SecretAddition[],
  opts: Omit<MergeOptions, 'file'> & Pick<AtomicWriteOptions, 'beforeRename'> = {},
): Promise<MergeResult> {
  const text = await readSopsFile(path)
  const r = await mergeSopsText(text, additions, { ...opts, file: path })
  if (r.text === undefined) return { written: false, added: r.added, existing: r.existing }
  await writeFileAtomic(path, r.text, {
    expectedCurrent: text,
    ...(opts.beforeRename ? { beforeRename: opts.beforeRename } : {}),
  })
  return { written: true, added: r.added, existing: r.existing }
}
