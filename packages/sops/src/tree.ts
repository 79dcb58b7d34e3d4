// The tree operations on parsed documents (sops.go Tree.Decrypt / Tree.Encrypt): every leaf in file
// order, the MAC over their plaintext, and encrypted comments. They mutate the documents in place.
import { createHash } from 'node:crypto'
import type { Document, Scalar } from 'yaml'
import { aadFor, looksEncrypted, openEnc, parseEnc, sealEnc } from './cipher.js'
import { SopsError } from './errors.js'
import type { LeafType, LeafValue } from './secret.js'
import type { PathPredicate } from './rules.js'
import { type Leaf, leafFromPlaintext, leafFromScalar, plaintextOf } from './values.js'
import { walkDocuments } from './walk.js'

/** sha256("sops"): fed first when mac_only_encrypted is set (sops.go MACOnlyEncryptedInitialization). */
const MAC_ONLY_ENCRYPTED_INIT = Buffer.from('8a3fd2ad54ce66527b1034f3d147be0b0b975b3bf44f72c6fdadec8176f27d69', 'hex')

export interface TreeOptions {
  file: string
  dataKey: Uint8Array
  shouldEncrypt: PathPredicate
  macOnlyEncrypted: boolean
}

/** A leaf's sops type, its value as a JS value, and whether the file keeps it encrypted. */
export interface LeafInfo {
  type: LeafType
  value: LeafValue
  encrypted: boolean
}

export interface DecryptedTree {
  /** Uppercase hex SHA-512, as sops computes it. */
  mac: string
  /** Every leaf scalar (encrypted ones now hold their plaintext). */
  leaves: Map<Scalar, LeafInfo>
  /** Encrypted comments that did not decrypt (left as they are; sops only warns). */
  undecryptedComments: number
}

function newMacHash(macOnlyEncrypted: boolean) {
  const h = createHash('sha512')
  if (macOnlyEncrypted) h.update(MAC_ONLY_ENCRYPTED_INIT)
  return h
}

/** Candidate AADs for a comment: its own path, then its ancestors (YAML parsers attach comments differently). */
function commentAads(path: readonly string[]): string[] {
  const out: string[] = []
  for (let n = path.length; n >= 0; n--) out.push(aadFor(path.slice(0, n)))
  return out
}

/** Decrypts all values in place and computes the MAC. Authentication failures are MacMismatch. */
export function decryptTree(docs: readonly Document[], o: TreeOptions): DecryptedTree {
  const hash = newMacHash(o.macOnlyEncrypted)
  const leaves = new Map<Scalar, LeafInfo>()
  let undecryptedComments = 0
  walkDocuments(docs, o.file, {
    leaf(scalar, path) {
      const encrypted = o.shouldEncrypt(path)
      let leaf: Leaf | undefined
      if (!encrypted) {
        leaf = leafFromScalar(scalar.value, scalar.source)
        if (!leaf)
          throw new SopsError('Malformed', o.file, 'unsupported clear-text value (integer out of range?)', { path })
      } else if (scalar.value === '') {
        leaf = leafFromScalar('') // sops leaves empty strings unencrypted
      } else {
        if (typeof scalar.value !== 'string' || !looksEncrypted(scalar.value))
          throw new SopsError('Malformed', o.file, 'value is not encrypted although the rules say it should be', {
            path,
          })
        const enc = parseEnc(scalar.value)
        if (!enc || enc.type === 'comment') throw new SopsError('Malformed', o.file, 'malformed ENC[] value', { path })
        const plain = openEnc(enc, o.dataKey, aadFor(path))
        if (!plain)
          throw new SopsError('MacMismatch', o.file, 'value failed authentication (altered value, iv, tag or key)', {
            path,
          })
        leaf = leafFromPlaintext(plain, enc.type)
        if (!leaf)
          throw new SopsError('Malformed', o.file, `decrypted value does not parse as type ${enc.type}`, { path })
        scalar.value = leaf.value
        scalar.type = undefined
        scalar.tag = undefined
      }
      if (!leaf) return
      if (!o.macOnlyEncrypted || encrypted) hash.update(leaf.macBytes)
      leaves.set(scalar, { type: leaf.type, value: leaf.value, encrypted })
    },
    comment(slot) {
      if (!o.shouldEncrypt(slot.path)) return
      let changed = false
      const lines = slot
        .get()
        .split('\n')
        .map((line) => {
          const enc = looksEncrypted(line.trim()) ? parseEnc(line.trim()) : undefined
          if (!enc || enc.type !== 'comment') return line
          for (const aad of commentAads(slot.path)) {
            const plain = openEnc(enc, o.dataKey, aad)
            if (plain) {
              changed = true
              return Buffer.from(plain).toString('utf8')
            }
          }
          undecryptedComments++
          return line
        })
      if (changed) slot.set(lines.join('\n'))
    },
  })
  return { mac: hash.digest('hex').toUpperCase(), leaves, undecryptedComments }
}

/** Encrypts all leaves (per the rule) and comments in place; returns the MAC of the plaintext. */
export function encryptTree(docs: readonly Document[], o: TreeOptions): string {
  const hash = newMacHash(o.macOnlyEncrypted)
  walkDocuments(docs, o.file, {
    leaf(scalar, path) {
      const encrypted = o.shouldEncrypt(path)
      if (typeof scalar.value === 'string' && looksEncrypted(scalar.value))
        throw new SopsError('Malformed', o.file, 'value is already encrypted', { path })
      const leaf = leafFromScalar(scalar.value, scalar.source)
      if (!leaf)
        throw new SopsError('Malformed', o.file, 'unsupported value (integer out of range or bad timestamp)', { path })
      if (!o.macOnlyEncrypted || encrypted) hash.update(leaf.macBytes)
      if (!encrypted || leaf.value === '') return
      scalar.value = sealEnc(plaintextOf(leaf), leaf.type, o.dataKey, aadFor(path))
      scalar.type = 'PLAIN'
      scalar.tag = undefined
    },
    comment(slot) {
      if (!o.shouldEncrypt(slot.path)) return
      const lines = slot
        .get()
        .split('\n')
        .map((line) => {
          if (line === '' || looksEncrypted(line.trim())) return line
          return sealEnc(Buffer.from(line, 'utf8'), 'comment', o.dataKey, aadFor(slot.path))
        })
      slot.set(lines.join('\n'))
    },
  })
  return hash.digest('hex').toUpperCase()
}
