// The sops value layer (aes/cipher.go): ENC[AES256_GCM,data:…,iv:…,tag:…,type:…] with a 32-byte IV,
// the 16-byte tag stored apart from the ciphertext, and the key path as additional data.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

export type EncType = 'str' | 'int' | 'float' | 'bool' | 'bytes' | 'time' | 'comment'
const TYPES: readonly string[] = ['str', 'int', 'float', 'bool', 'bytes', 'time', 'comment']

export interface EncValue {
  data: Uint8Array
  iv: Uint8Array
  tag: Uint8Array
  type: EncType
}

const ENC_RE = /^ENC\[AES256_GCM,data:([^,\]]*),iv:([^,\]]+),tag:([^,\]]+),type:([a-z]+)\]$/
const B64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
export const IV_SIZE = 32
const TAG_SIZE = 16

export function looksEncrypted(s: string): boolean {
  return s.startsWith('ENC[AES256_GCM,')
}

/** Strict base64: canonical padding and zero trailing bits, so every flipped character is noticed. */
function decodeB64(s: string): Uint8Array | undefined {
  if (!B64_RE.test(s)) return undefined
  const bytes = Buffer.from(s, 'base64')
  return bytes.toString('base64') === s ? new Uint8Array(bytes) : undefined
}

/** Parses an ENC[...] string; undefined when it is not one (or not well formed). */
export function parseEnc(s: string): EncValue | undefined {
  const m = ENC_RE.exec(s)
  if (!m) return undefined
  const [, d = '', i = '', t = '', type = ''] = m
  const data = decodeB64(d)
  const iv = decodeB64(i)
  const tag = decodeB64(t)
  if (!data || !iv || !tag || iv.length === 0 || tag.length !== TAG_SIZE || !TYPES.includes(type)) return undefined
  return { data, iv, tag, type: type as EncType }
}

export function formatEnc(v: EncValue): string {
  const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64')
  return `ENC[AES256_GCM,data:${b64(v.data)},iv:${b64(v.iv)},tag:${b64(v.tag)},type:${v.type}]`
}

/** AES-256-GCM open; undefined when authentication fails. */
export function openEnc(v: EncValue, key: Uint8Array, aad: string): Uint8Array | undefined {
  try {
    const d = createDecipheriv('aes-256-gcm', key, v.iv, { authTagLength: TAG_SIZE })
    d.setAAD(Buffer.from(aad, 'utf8'))
    d.setAuthTag(v.tag)
    return new Uint8Array(Buffer.concat([d.update(v.data), d.final()]))
  } catch {
    return undefined
  }
}

/** AES-256-GCM seal with a fresh random 32-byte IV. */
export function sealEnc(plaintext: Uint8Array, type: EncType, key: Uint8Array, aad: string): string {
  const iv = randomBytes(IV_SIZE)
  const c = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_SIZE })
  c.setAAD(Buffer.from(aad, 'utf8'))
  const data = Buffer.concat([c.update(plaintext), c.final()])
  return formatEnc({ data, iv, tag: c.getAuthTag(), type })
}

/** The AAD for a value or comment: map keys on the path joined with ':' plus a trailing ':'. */
export function aadFor(path: readonly string[]): string {
  return `${path.join(':')}:`
}
