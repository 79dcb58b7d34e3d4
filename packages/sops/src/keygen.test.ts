import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as age from 'age-encryption'
import { afterAll, describe, expect, it } from 'vitest'
import { ageKeyFile } from './keygen.js'
import { identitiesFromStrings } from './identities.js'

const dir = mkdtempSync(join(tmpdir(), 'proxops-keygen-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('ageKeyFile', () => {
  it('makes a key, writes it when told (mode 0600, in a new 0700 directory), then only reads it', async () => {
    const file = join(dir, 'new', 'sops', 'keys.txt')
    const made = await ageKeyFile(file)
    expect(made.exists).toBe(false)
    expect(existsSync(file)).toBe(false)
    await made.write()
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(dir, 'new', 'sops')).mode & 0o777).toBe(0o700)
    const text = readFileSync(file, 'utf8')
    expect(text).toContain(`# public key: ${made.recipient}\n`)
    const [identity] = identitiesFromStrings([text])
    expect(await age.identityToRecipient(identity!.key.reveal())).toBe(made.recipient)
    expect(await ageKeyFile(file)).toMatchObject({ recipient: made.recipient, exists: true })
    await expect(made.write()).rejects.toMatchObject({ code: 'EEXIST' })
    expect(readFileSync(file, 'utf8')).toBe(text)
  })

  it('never overwrites a file without a key: it is an error naming the file', async () => {
    const file = join(dir, 'notes.txt')
    writeFileSync(file, 'not a key\n')
    await expect(ageKeyFile(file)).rejects.toMatchObject({ message: expect.stringContaining(file) })
    expect(readFileSync(file, 'utf8')).toBe('not a key\n')
  })
})
