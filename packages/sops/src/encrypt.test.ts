import { test } from '@fast-check/vitest'
import * as age from 'age-encryption'
import { beforeAll, describe, expect } from 'vitest'
import { parseDocument } from 'yaml'
import { decryptSops, parseSops } from './decrypt.js'
import { encryptSops } from './encrypt.js'
import { fromPlain, modelArb, toJsonText, toYamlText } from './test-support/model.js'

let identity = ''
let recipient = ''
const dataKey = new Uint8Array(32).map((_, i) => i * 7 + 1)

beforeAll(async () => {
  identity = await age.generateIdentity()
  recipient = await age.identityToRecipient(identity)
})

describe('encrypt then decrypt', () => {
  test.prop([modelArb(false)], { numRuns: 50 })(
    'random YAML documents come back identical, in order, MAC verified',
    async (model) => {
      const enc = await encryptSops(toYamlText(model), { recipients: [recipient], file: 'r.yaml', dataKey })
      const doc = await decryptSops(enc, { file: 'r.yaml', dataKey })
      expect(fromPlain(doc.node([]) ?? { kind: 'null' })).toEqual(model)
    },
  )

  test.prop([modelArb(true)], { numRuns: 50 })(
    'random JSON documents come back identical, in order, MAC verified',
    async (model) => {
      const enc = await encryptSops(toJsonText(model), { recipients: [recipient], file: 'r.json', dataKey })
      expect(() => JSON.parse(enc) as unknown).not.toThrow()
      const doc = await decryptSops(enc, { file: 'r.json', dataKey })
      expect(fromPlain(doc.node([]) ?? { kind: 'null' })).toEqual(model)
    },
  )

  test('with the age identity, and JSON key order kept ("8006" stays after "b")', async () => {
    const enc = await encryptSops('{"b": 1, "8006": "pve", "a": [1.5, {"c": true}], "e": ""}', {
      recipients: [recipient],
      file: 'x.json',
    })
    expect(enc.indexOf('"b"')).toBeLessThan(enc.indexOf('"8006"'))
    const doc = await decryptSops(enc, { file: 'x.json', identities: [identity] })
    expect(doc.keys()).toEqual(['b', '8006', 'a', 'e'])
    expect(doc.get('8006')?.reveal()).toBe('pve')
    expect(doc.get('e')?.reveal()).toBe('')
    expect(JSON.parse(enc).e).toBe('') // empty strings stay unencrypted, as sops does
  })

  test('several recipients: each identity alone decrypts; hybrid recipients work', async () => {
    const other = await age.generateIdentity()
    const hybrid = await age.generateHybridIdentity()
    const recipients = [recipient, await age.identityToRecipient(other), await age.identityToRecipient(hybrid)]
    const enc = await encryptSops('a: 1\n', { recipients, file: 'm.yaml' })
    expect(parseSops(enc, 'm.yaml').metadata.age.map((s) => s.recipient)).toEqual(recipients)
    for (const id of [identity, other, hybrid]) {
      const doc = await decryptSops(enc, { file: 'm.yaml', identities: [id] })
      expect(doc.get('a')?.reveal()).toBe(1)
    }
  })

  test('comments are encrypted and come back', async () => {
    const enc = await encryptSops('# comment-canary-1\na: x # comment-canary-2\nb:\n  # comment-canary-3\n  c: y\n', {
      recipients: [recipient],
      dataKey,
    })
    expect(enc).not.toContain('comment-canary')
    expect(enc).toMatch(/#ENC\[AES256_GCM,.*type:comment\]/)
    const doc = await decryptSops(enc, { dataKey })
    expect(doc.undecryptedComments).toBe(0)
    const text = doc.revealText()
    for (const n of [1, 2, 3]) expect(text).toContain(`comment-canary-${n}`)
  })

  test('metadata: age stanzas, lastmodified, mac, default rule, version', async () => {
    const enc = await encryptSops('a: 1\n', { recipients: [recipient], now: new Date('2026-01-02T03:04:05.678Z') })
    const meta = parseDocument(enc).get('sops') as { toJSON(): Record<string, unknown> }
    const m = meta.toJSON()
    expect(Object.keys(m)).toEqual(['age', 'lastmodified', 'mac', 'unencrypted_suffix', 'version'])
    expect(m.lastmodified).toBe('2026-01-02T03:04:05Z')
    expect(m.unencrypted_suffix).toBe('_unencrypted')
    expect(String(m.mac)).toMatch(/^ENC\[AES256_GCM,data:.+,type:str\]$/)
    expect(enc).toContain('-----BEGIN AGE ENCRYPTED FILE-----')
  })
})

describe('encryption rules', () => {
  const plain =
    'data:\n  password: p1\nstringData:\n  token: t1\nother:\n  name: n1\nport_enc: 8006\nnote_unencrypted: clear\n'

  test.each([
    [
      { kind: 'encrypted_regex', value: '^(data|stringData)$' },
      ['data.password', 'stringData.token'],
      ['other.name', 'port_enc', 'note_unencrypted'],
    ],
    [
      { kind: 'unencrypted_regex', value: '^(other|note.*)$' },
      ['data.password', 'stringData.token', 'port_enc'],
      ['other.name', 'note_unencrypted'],
    ],
    [{ kind: 'encrypted_suffix', value: '_enc' }, ['port_enc'], ['data.password', 'other.name', 'note_unencrypted']],
    [
      { kind: 'unencrypted_suffix', value: '_unencrypted' },
      ['data.password', 'other.name', 'port_enc'],
      ['note_unencrypted'],
    ],
  ] as const)('%j', async (rule, encrypted, clear) => {
    const enc = await encryptSops(plain, { recipients: [recipient], rule, dataKey })
    const raw = parseDocument(enc, { intAsBigInt: true })
    for (const p of encrypted) expect(String(raw.getIn(p.split('.')))).toMatch(/^ENC\[/)
    for (const p of clear) expect(String(raw.getIn(p.split('.')))).not.toMatch(/^ENC\[/)
    expect(raw.getIn(['sops', rule.kind])).toBe(rule.value)
    const doc = await decryptSops(enc, { dataKey })
    expect(doc.get('port_enc')?.reveal()).toBe(8006)
    expect(doc.get('data.password')?.reveal()).toBe('p1')
  })

  test('mac_only_encrypted: clear values are outside the MAC, encrypted ones inside', async () => {
    const enc = await encryptSops('secret: s\nnote_unencrypted: a\n', {
      recipients: [recipient],
      dataKey,
      macOnlyEncrypted: true,
    })
    expect(enc).toContain('mac_only_encrypted: true')
    const edited = enc.replace('note_unencrypted: a', 'note_unencrypted: b')
    expect((await decryptSops(edited, { dataKey })).get('note_unencrypted')?.reveal()).toBe('b')
    const full = await encryptSops('secret: s\nnote_unencrypted: a\n', { recipients: [recipient], dataKey })
    await expect(
      decryptSops(full.replace('note_unencrypted: a', 'note_unencrypted: b'), { dataKey }),
    ).rejects.toMatchObject({
      code: 'MacMismatch',
    })
  })
})

describe('encrypt rejects what sops rejects', () => {
  test.each([
    ['8006: pve\n', 'Malformed'], // unquoted int key: sops only supports string keys
    ['- a\n- b\n', 'Malformed'], // top-level sequence
    ['a: &x 1\nb: *x\n', 'Unsupported'], // aliases
    ['a: [1\n', 'Malformed'], // not YAML
    ['sops: {}\n', 'Malformed'], // already encrypted
  ])('%j -> %s', async (text, code) => {
    await expect(encryptSops(text, { recipients: [recipient], dataKey })).rejects.toMatchObject({ code })
  })

  test('bad recipients', async () => {
    await expect(encryptSops('a: 1\n', { recipients: [] })).rejects.toMatchObject({ code: 'Malformed' })
    await expect(encryptSops('a: 1\n', { recipients: ['age1notvalid'] })).rejects.toMatchObject({ code: 'Malformed' })
    await expect(encryptSops('a: 1\n', { recipients: ['ssh-ed25519 AAAA'] })).rejects.toMatchObject({
      code: 'Unsupported',
    })
  })
})
