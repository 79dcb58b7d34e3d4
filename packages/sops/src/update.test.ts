import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fc, test } from '@fast-check/vitest'
import * as age from 'age-encryption'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { decryptSops, parseSops } from './decrypt.js'
import { encryptSops } from './encrypt.js'
import { tmpPathFor } from './fsutil.js'
import { fixtureAgeKeys, fixtures, vectorsForTests } from './test-support/fixtures.js'
import { mergeSopsFile, mergeSopsText } from './update.js'

let dir = ''
let identity = ''
let other = ''
let base = ''
const plain = `secrets:
    proxops-user: root@pam
    proxops-token: tok-canary
"8006": port
cloud-init:
    ssh-keys:
        main: ssh-ed25519 AAAAmain ops@host
note_unencrypted: hello
`

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'proxops-sops-up-'))
  identity = await age.generateIdentity()
  other = await age.generateIdentity()
  const recipients = [await age.identityToRecipient(identity), await age.identityToRecipient(other)]
  base = await encryptSops(plain, { recipients, file: 'secrets.sops.yaml' })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('mergeSopsText', () => {
  test('adds new keys (creating maps), keeps existing values, ciphertexts, order and recipients', async () => {
    const r = await mergeSopsText(
      base,
      [
        { path: ['cloud-init', 'ssh-keys', 'adopted-0123456789abcdef'], value: 'ssh-ed25519 AAAAnew adopted' },
        { path: ['cloud-init', 'ssh-keys', 'main'], value: 'would overwrite' },
        { path: 'cloud-init.passwords.default', value: 'pw' },
        { path: ['brand-new', 'n'], value: 7 },
      ],
      { identities: [identity], file: 'secrets.sops.yaml', now: new Date('2030-01-01T00:00:00Z') },
    )
    expect(r.added).toEqual([
      ['cloud-init', 'ssh-keys', 'adopted-0123456789abcdef'],
      ['cloud-init', 'passwords', 'default'],
      ['brand-new', 'n'],
    ])
    expect(r.existing).toEqual([['cloud-init', 'ssh-keys', 'main']])
    const out = r.text as string
    // unchanged values keep their exact ciphertext (minimal diff); the MAC and lastmodified change
    const oldToken = /proxops-token: (ENC\[[^\]]+\])/.exec(base)?.[1] as string
    expect(out).toContain(oldToken)
    expect(out).toContain('lastmodified: "2030-01-01T00:00:00Z"')
    expect(parseSops(out, 'x.yaml').metadata.age).toEqual(parseSops(base, 'x.yaml').metadata.age)
    // the other recipient can still decrypt, and sees everything
    const doc = await decryptSops(out, { file: 'x.yaml', identities: [other] })
    expect(doc.keys()).toEqual(['secrets', '8006', 'cloud-init', 'note_unencrypted', 'brand-new'])
    expect(doc.keys('cloud-init.ssh-keys')).toEqual(['main', 'adopted-0123456789abcdef'])
    expect(doc.get('cloud-init.ssh-keys.main')?.reveal()).toBe('ssh-ed25519 AAAAmain ops@host')
    expect(doc.get('cloud-init.ssh-keys.adopted-0123456789abcdef')?.reveal()).toBe('ssh-ed25519 AAAAnew adopted')
    expect(doc.get('cloud-init.passwords.default')?.reveal()).toBe('pw')
    expect(doc.get('brand-new.n')?.reveal()).toBe(7)
    expect(out).not.toContain('AAAAnew')
  })

  test('overwrite (proxops-sops set): replaces one value, sealed anew; the others keep their ciphertext and the recipients stay', async () => {
    const r = await mergeSopsText(base, [{ path: 'secrets.proxops-token', value: 'rotated-canary' }], {
      identities: [identity],
      file: 'secrets.sops.yaml',
      overwrite: true,
    })
    const out = r.text as string
    expect(r.added).toEqual([['secrets', 'proxops-token']])
    expect(out).not.toContain('rotated-canary')
    expect(out).not.toContain(/proxops-token: (ENC\[[^\]]+\])/.exec(base)?.[1] as string)
    expect(out).toContain(/proxops-user: (ENC\[[^\]]+\])/.exec(base)?.[1] as string)
    expect(parseSops(out, 'x.yaml').metadata.age).toEqual(parseSops(base, 'x.yaml').metadata.age)
    const doc = await decryptSops(out, { file: 'x.yaml', identities: [other] })
    expect(doc.get('secrets.proxops-token')?.reveal()).toBe('rotated-canary')
    expect(doc.get('secrets.proxops-user')?.reveal()).toBe('root@pam')
    expect(doc.keys('secrets')).toEqual(['proxops-user', 'proxops-token'])
    await expect(
      mergeSopsText(base, [{ path: 'cloud-init.ssh-keys', value: 'x' }], { identities: [identity], overwrite: true }),
    ).rejects.toMatchObject({ message: expect.stringContaining('cannot set a value over a mapping') })
  })

  test('no new names: nothing to write', async () => {
    const r = await mergeSopsText(base, [{ path: 'secrets.proxops-user', value: 'x' }], { identities: [identity] })
    expect(r.text).toBeUndefined()
    expect(r.added).toEqual([])
  })

  test('refuses to add below a scalar, or to touch sops metadata', async () => {
    await expect(
      mergeSopsText(base, [{ path: 'secrets.proxops-user.x', value: 'x' }], { identities: [identity] }),
    ).rejects.toMatchObject({
      code: 'Malformed',
    })
    await expect(
      mergeSopsText(base, [{ path: 'sops.x', value: 'x' }], { identities: [identity] }),
    ).rejects.toMatchObject({ code: 'Malformed' })
  })

  test('a tampered input is refused before anything is added', async () => {
    const tampered = base.replace('note_unencrypted: hello', 'note_unencrypted: hellO')
    await expect(
      mergeSopsText(tampered, [{ path: 'x', value: 'y' }], { identities: [identity] }),
    ).rejects.toMatchObject({ code: 'MacMismatch' })
  })

  test.prop(
    [
      fc.uniqueArray(fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,15}$/), { minLength: 1, maxLength: 5 }),
      fc.string({ maxLength: 30 }),
    ],
    {
      numRuns: 15,
    },
  )('any set of new ssh-key names merges and verifies', async (names, value) => {
    const r = await mergeSopsText(
      base,
      names.map((n) => ({ path: ['cloud-init', 'ssh-keys', n], value })),
      { identities: [identity] },
    )
    const fresh = names.filter((n) => n !== 'main')
    if (fresh.length === 0) return expect(r.text).toBeUndefined()
    const doc = await decryptSops(r.text as string, { identities: [identity] })
    for (const n of fresh) expect(doc.get(['cloud-init', 'ssh-keys', n])?.reveal()).toBe(value)
  })
})

describe.skipIf(!vectorsForTests())('merging into files written by sops', () => {
  test.each(fixtures('age').map((f) => [f.name, f] as const))(
    '%s: only the new key, lastmodified and mac lines change',
    async (_n, f) => {
      const r = await mergeSopsText(f.text, [{ path: ['complex', 'added'], value: 'new value' }], {
        identities: [fixtureAgeKeys()],
        file: f.name,
      })
      const before = f.text.split('\n')
      const after = (r.text as string).split('\n')
      const minus = (a: string[], b: string[]) => {
        const left = [...b]
        return a.filter((l) => {
          const i = left.indexOf(l)
          if (i < 0) return true
          left.splice(i, 1)
          return false
        })
      }
      const removed = minus(before, after)
      const addedLines = minus(after, before)
      const expected = ['lastmodified', 'mac'].concat(f.name.endsWith('.json') ? [']'] : []) // JSON: the "]" before the new key gains a comma
      expect(removed.map((l) => l.trim().replace(/^"?(\w+)"?:.*$/, '$1')).sort()).toEqual(expected.sort())
      expect(addedLines.length).toBe(removed.length + 1)
      const doc = await decryptSops(r.text as string, { identities: [fixtureAgeKeys()], file: f.name })
      expect(doc.get('complex.added')?.reveal()).toBe('new value')
      expect(doc.get('secret')?.reveal()).toBe('this is a secret')
    },
  )
})

describe('mergeSopsText with rotateDataKey', () => {
  test('re-encrypts everything under a new data key to the same recipients', async () => {
    const r = await mergeSopsText(base, [{ path: 'cloud-init.passwords.default', value: 'pw' }], {
      identities: [identity],
      rotateDataKey: true,
    })
    const out = r.text as string
    const oldToken = /proxops-token: (ENC\[[^\]]+\])/.exec(base)?.[1] as string
    expect(out).not.toContain(oldToken)
    const before = parseSops(base, 'x.yaml').metadata.age
    const after = parseSops(out, 'x.yaml').metadata.age
    expect(after.map((s) => s.recipient)).toEqual(before.map((s) => s.recipient))
    expect(after[0]?.enc).not.toBe(before[0]?.enc)
    for (const id of [identity, other]) {
      const doc = await decryptSops(out, { identities: [id] })
      expect(doc.get('secrets.proxops-token')?.reveal()).toBe('tok-canary')
      expect(doc.get('cloud-init.passwords.default')?.reveal()).toBe('pw')
      expect(doc.keys()).toEqual(['secrets', '8006', 'cloud-init', 'note_unencrypted'])
    }
  })
})

describe('mergeSopsFile', () => {
  test('writes through <file>.proxops-tmp and an atomic rename, keeping the file mode', async () => {
    const file = join(dir, 'a.sops.yaml')
    writeFileSync(file, base, { mode: 0o640 })
    const r = await mergeSopsFile(file, [{ path: 'cloud-init.passwords.default', value: 'pw' }], {
      identities: [identity],
    })
    expect(r.written).toBe(true)
    expect(existsSync(tmpPathFor(file))).toBe(false)
    const doc = await decryptSops(readFileSync(file, 'utf8'), { identities: [identity] })
    expect(doc.get('cloud-init.passwords.default')?.reveal()).toBe('pw')
  })

  test('no new names: the file is not touched', async () => {
    const file = join(dir, 'b.sops.yaml')
    writeFileSync(file, base)
    const r = await mergeSopsFile(file, [{ path: 'secrets.proxops-user', value: 'x' }], { identities: [identity] })
    expect(r.written).toBe(false)
    expect(readFileSync(file, 'utf8')).toBe(base)
  })

  test('a failure before the rename leaves the original untouched and no temporary file', async () => {
    const file = join(dir, 'c.sops.yaml')
    writeFileSync(file, base)
    await expect(
      mergeSopsFile(file, [{ path: 'x', value: 'y' }], {
        identities: [identity],
        beforeRename: async () => {
          throw Object.assign(new Error('disk full'), { code: 'ENOSPC' })
        },
      }),
    ).rejects.toMatchObject({ code: 'WriteFailed', file })
    expect(readFileSync(file, 'utf8')).toBe(base)
    expect(existsSync(tmpPathFor(file))).toBe(false)
  })

  test('a file changed meanwhile is not overwritten', async () => {
    const file = join(dir, 'd.sops.yaml')
    writeFileSync(file, base)
    const concurrent = `${base}# edited by someone else\n`
    await expect(
      mergeSopsFile(file, [{ path: 'x', value: 'y' }], {
        identities: [identity],
        beforeRename: async () => writeFileSync(file, concurrent),
      }),
    ).rejects.toMatchObject({ code: 'WriteFailed' })
    expect(readFileSync(file, 'utf8')).toBe(concurrent)
    expect(existsSync(tmpPathFor(file))).toBe(false)
  })

  test('wrong identity: fails, the original untouched', async () => {
    const file = join(dir, 'e.sops.yaml')
    writeFileSync(file, base)
    const stranger = await age.generateIdentity()
    await expect(mergeSopsFile(file, [{ path: 'x', value: 'y' }], { identities: [stranger] })).rejects.toMatchObject({
      code: 'IdentityMismatch',
    })
    expect(readFileSync(file, 'utf8')).toBe(base)
  })
})
