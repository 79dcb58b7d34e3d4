import * as age from 'age-encryption'
import { beforeAll, describe, expect, test } from 'vitest'
import { parseDocument } from 'yaml'
import { decryptSops } from './decrypt.js'
import { encryptSops } from './encrypt.js'
import { readMetadata } from './metadata.js'

let identity = ''
let enc = ''
const dataKey = new Uint8Array(32).fill(5)

beforeAll(async () => {
  identity = await age.generateIdentity()
  enc = await encryptSops('a: 1\nb: two\n', {
    recipients: [await age.identityToRecipient(identity)],
    dataKey,
    file: 'm.yaml',
  })
})

/** Edits the (unauthenticated) sops block of `enc`. */
function editMeta(edit: (meta: Record<string, unknown>) => void): string {
  const doc = parseDocument(enc)
  const meta = (doc.get('sops') as { toJSON(): Record<string, unknown> }).toJSON()
  edit(meta)
  doc.set('sops', meta)
  return doc.toString()
}

describe('sops metadata', () => {
  test('a single key group in key_groups is read like top-level age', async () => {
    const text = editMeta((m) => {
      m.key_groups = [{ age: m.age }]
      delete m.age
    })
    expect((await decryptSops(text, { identities: [identity] })).get('b')?.reveal()).toBe('two')
  })

  test('several key groups (Shamir) are Unsupported', async () => {
    const text = editMeta((m) => {
      m.key_groups = [{ age: m.age }, { age: m.age }]
      m.shamir_threshold = 2
      delete m.age
    })
    await expect(decryptSops(text, { identities: [identity] })).rejects.toMatchObject({ code: 'Unsupported' })
  })

  test('PGP/KMS-only files are Unsupported unless a data key is given', async () => {
    const text = editMeta((m) => {
      m.pgp = [{ fp: 'ABC', enc: 'x', created_at: '2020-01-01T00:00:00Z' }]
      m.kms = [{ arn: 'arn:aws:kms:x', enc: 'y' }]
      delete m.age
    })
    await expect(decryptSops(text, { identities: [identity] })).rejects.toThrow(/pgp, kms/)
    expect((await decryptSops(text, { dataKey })).get('a')?.reveal()).toBe(1)
  })

  test.each(['unencrypted_comment_regex', 'encrypted_comment_regex'])('%s is Unsupported', async (k) => {
    const text = editMeta((m) => {
      m[k] = 'x'
    })
    await expect(decryptSops(text, { dataKey })).rejects.toMatchObject({ code: 'Unsupported' })
  })

  test('several rules are Malformed, like sops', async () => {
    const text = editMeta((m) => {
      m.encrypted_suffix = '_enc'
    })
    await expect(decryptSops(text, { dataKey })).rejects.toMatchObject({ code: 'Malformed' })
  })

  test('missing mac or lastmodified is Malformed; a missing sops block is NotEncrypted', async () => {
    await expect(
      decryptSops(
        editMeta((m) => delete m.mac),
        { dataKey },
      ),
    ).rejects.toMatchObject({ code: 'Malformed' })
    await expect(
      decryptSops(
        editMeta((m) => delete m.lastmodified),
        { dataKey },
      ),
    ).rejects.toMatchObject({ code: 'Malformed' })
    await expect(decryptSops('a: 1\n', { dataKey })).rejects.toMatchObject({ code: 'NotEncrypted' })
    await expect(decryptSops('', { dataKey })).rejects.toMatchObject({ code: 'NotEncrypted' })
  })

  test('a regex rule with a Go (?i) flag works; a JS-incompatible one is Unsupported', async () => {
    const text = await encryptSops('Secret: s\nplain: p\n', {
      recipients: [await age.identityToRecipient(identity)],
      dataKey,
      rule: { kind: 'encrypted_regex', value: '(?i)^secret$' },
    })
    expect(text).toMatch(/Secret: ENC\[/)
    expect(text).toContain('plain: p')
    expect((await decryptSops(text, { dataKey })).get('Secret')?.reveal()).toBe('s')
    const bad = text.replace('(?i)^secret$', '(?P<x>a)(?i')
    await expect(decryptSops(bad, { dataKey })).rejects.toMatchObject({ code: 'Unsupported' })
  })

  test('readMetadata normalises lastmodified for the MAC AAD', () => {
    const m = readMetadata({ age: [], lastmodified: '2024-03-25T22:08:10.5+00:00', mac: 'ENC[x]' }, 'f')
    expect(m.macAad).toBe('2024-03-25T22:08:10Z')
    expect(m.rule).toEqual({ kind: 'unencrypted_suffix', value: '_unencrypted' })
  })

  test('multi-document YAML: every document is walked, metadata in the first', async () => {
    const text = await encryptSops('a: 1\n---\nb: secret-b\n', {
      recipients: [await age.identityToRecipient(identity)],
      dataKey,
    })
    expect(text).not.toContain('secret-b')
    const doc = await decryptSops(text, { dataKey })
    expect(doc.documentCount).toBe(2)
    expect(doc.revealDocuments()).toEqual([{ a: 1 }, { b: 'secret-b' }])
    expect(doc.revealText()).toBe('a: 1\n---\nb: secret-b\n')
  })
})
