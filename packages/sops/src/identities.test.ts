import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as age from 'age-encryption'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { decryptSops } from './decrypt.js'
import { encryptSops } from './encrypt.js'
import { SopsError } from './errors.js'
import { defaultKeysFile, discoverIdentities, parseIdentities, shellSplit } from './identities.js'

let dir = ''
let id1 = ''
let id2 = ''
let enc = '' // encrypted to id1 only

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'proxops-sops-id-'))
  id1 = await age.generateIdentity()
  id2 = await age.generateIdentity()
  enc = await encryptSops('token: t-canary-42\n', { recipients: [await age.identityToRecipient(id1)], file: 's.yaml' })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('parseIdentities', () => {
  test('ignores comments and empty lines; reports bad lines by number only', () => {
    const problems: string[] = []
    const ids = parseIdentities(
      `# created: x\n# public key: age1...\n\n${id1}\nnot-a-key-secretish\n`,
      'keys.txt',
      false,
      problems,
    )
    expect(ids).toHaveLength(1)
    expect(ids[0]?.source).toBe('keys.txt line 4')
    expect(problems).toEqual(['keys.txt line 5: not an age identity'])
    expect(String(ids[0]?.key)).toBe('(sensitive)')
  })

  test('SOPS_AGE_KEY allows several keys per line', () => {
    expect(parseIdentities(`${id1} ${id2}`, 'SOPS_AGE_KEY', true, [])).toHaveLength(2)
  })
})

describe('discoverIdentities (env and home are arguments)', () => {
  test('reads all sources in sops order: SOPS_AGE_KEY, SOPS_AGE_KEY_FILE, SOPS_AGE_KEY_CMD, then keys.txt', async () => {
    const home = join(dir, 'home1')
    mkdirSync(join(home, '.config', 'sops', 'age'), { recursive: true })
    writeFileSync(join(home, '.config', 'sops', 'age', 'keys.txt'), `# comment\n${id2}\n`)
    writeFileSync(join(dir, 'k1.txt'), `${id1}\n`)
    const calls: { argv: readonly string[]; recipient: string | undefined }[] = []
    const r = await discoverIdentities({
      env: { SOPS_AGE_KEY: id1, SOPS_AGE_KEY_FILE: join(dir, 'k1.txt'), SOPS_AGE_KEY_CMD: "get-key --vault 'a b'" },
      homeDir: home,
      recipient: 'age1example',
      runCommand: async (argv, env) => {
        calls.push({ argv, recipient: env.SOPS_AGE_RECIPIENT })
        return `${id2}\n`
      },
    })
    expect(r.identities.map((i) => i.source.split(' ')[0])).toEqual([
      'SOPS_AGE_KEY',
      'SOPS_AGE_KEY_FILE',
      'SOPS_AGE_KEY_CMD',
      join(home, '.config', 'sops', 'age', 'keys.txt'),
    ])
    expect(calls).toEqual([{ argv: ['get-key', '--vault', 'a b'], recipient: 'age1example' }])
    expect(r.problems).toEqual([])
  })

  test('XDG_CONFIG_HOME replaces ~/.config; a relative one is ignored like Go does', () => {
    expect(defaultKeysFile({ XDG_CONFIG_HOME: '/x/cfg' }, '/home/u')).toBe('/x/cfg/sops/age/keys.txt')
    expect(defaultKeysFile({}, '/home/u')).toBe('/home/u/.config/sops/age/keys.txt')
    expect(defaultKeysFile({ XDG_CONFIG_HOME: 'rel' }, '/home/u')).toBeUndefined()
  })

  test('nothing found: empty result listing the places looked at', async () => {
    const r = await discoverIdentities({ env: {}, homeDir: join(dir, 'nohome') })
    expect(r.identities).toEqual([])
    expect(r.unused).toContain('SOPS_AGE_KEY')
    expect(r.unused.some((u) => u.endsWith('keys.txt'))).toBe(true)
  })

  test('a real SOPS_AGE_KEY_CMD runs without a shell and sees SOPS_AGE_RECIPIENT', async () => {
    writeFileSync(join(dir, 'cmdkey.txt'), `${id1}\n`)
    const r = await discoverIdentities({
      env: { PATH: process.env.PATH, SOPS_AGE_KEY_CMD: `cat ${join(dir, 'cmdkey.txt')}` },
      homeDir: dir,
    })
    expect(r.identities).toHaveLength(1)
    const bad = await discoverIdentities({
      env: { PATH: process.env.PATH, SOPS_AGE_KEY_CMD: 'false --secret-arg-canary' },
      homeDir: dir,
    })
    expect(bad.identities).toHaveLength(0)
    expect(bad.problems.join()).toContain('SOPS_AGE_KEY_CMD: command failed')
    expect(bad.problems.join()).not.toContain('secret-arg-canary')
  })

  test('shellSplit follows shlex quoting', () => {
    expect(shellSplit(`a "b c" 'd e' f\\ g "h\\"i"`)).toEqual(['a', 'b c', 'd e', 'f g', 'h"i'])
  })
})

describe('decrypt: identity errors', () => {
  test('discovery finds the key in ~/.config/sops/age/keys.txt', async () => {
    const home = join(dir, 'home2')
    mkdirSync(join(home, '.config', 'sops', 'age'), { recursive: true })
    writeFileSync(join(home, '.config', 'sops', 'age', 'keys.txt'), `# public key: whatever\n${id1}\n`)
    const doc = await decryptSops(enc, { file: 's.yaml', discovery: { env: {}, homeDir: home } })
    expect(doc.get('token')?.reveal()).toBe('t-canary-42')
  })

  test('NoIdentity when nothing is found or given', async () => {
    await expect(
      decryptSops(enc, { file: 's.yaml', discovery: { env: {}, homeDir: join(dir, 'nohome') } }),
    ).rejects.toMatchObject({
      code: 'NoIdentity',
      file: 's.yaml',
    })
    await expect(decryptSops(enc, { file: 's.yaml' })).rejects.toMatchObject({ code: 'NoIdentity' })
    await expect(decryptSops(enc, { file: 's.yaml', identities: ['AGE-SECRET-KEY-1BROKEN'] })).rejects.toMatchObject({
      code: 'NoIdentity',
    })
  })

  test('IdentityMismatch lists the recipients and never the key', async () => {
    const err = await decryptSops(enc, { file: 's.yaml', identities: [id2] }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(SopsError)
    const e = err as SopsError
    expect(e.code).toBe('IdentityMismatch')
    const r1 = await age.identityToRecipient(id1)
    expect(e.recipients).toEqual([r1])
    expect(e.message).toContain(r1)
    expect(e.message).toContain('s.yaml')
    expect(e.message).not.toContain(id2)
    expect(e.message).not.toContain('AGE-SECRET-KEY')
  })

  test('IdentityMismatch names the sources read, the keys they hold and the places that held none', async () => {
    const home = join(dir, 'home-decoy')
    const keysTxt = join(home, '.config', 'sops', 'age', 'keys.txt')
    mkdirSync(join(home, '.config', 'sops', 'age'), { recursive: true })
    writeFileSync(keysTxt, `${id2}\n`)
    const err = await decryptSops(enc, { file: 's.yaml', discovery: { env: {}, homeDir: home } }).catch(
      (e: unknown) => e,
    )
    expect(err).toMatchObject({ code: 'IdentityMismatch' })
    const message = (err as SopsError).message
    expect(message).toContain(`identities read: ${keysTxt} line 1 (${await age.identityToRecipient(id2)})`)
    expect(message).toContain(`matches the file's recipients: ${await age.identityToRecipient(id1)}`)
    expect(message).toContain('nothing found in: SOPS_AGE_KEY, SOPS_AGE_KEY_FILE, SOPS_AGE_KEY_CMD')
    expect(message).not.toContain('AGE-SECRET-KEY')
  })

  test('any one matching identity among several is enough', async () => {
    const doc = await decryptSops(enc, { file: 's.yaml', identities: [id2, id1] })
    expect(doc.get('token')?.reveal()).toBe('t-canary-42')
  })

  test('NotEncrypted for a plaintext file', async () => {
    await expect(decryptSops('secrets:\n  a: b\n', { file: 'plain.yaml', identities: [id1] })).rejects.toMatchObject({
      code: 'NotEncrypted',
      file: 'plain.yaml',
    })
  })
})
