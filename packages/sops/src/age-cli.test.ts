// The age layer of files written here must decrypt with the reference age CLI (Debian's `age`).
// CI installs it (.ci/run); without it the test fails under CI and is skipped elsewhere.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as age from 'age-encryption'
import { describe, expect, test } from 'vitest'
import { parseSops, resolveDataKey } from './decrypt.js'
import { encryptSops } from './encrypt.js'

const hasAge = spawnSync('age', ['--version'], { encoding: 'utf8' }).status === 0

describe('Debian age CLI interoperability', () => {
  if (!hasAge) {
    if (process.env.CI)
      test('the age CLI is installed (required in CI)', () =>
        expect.fail('age CLI not found on PATH; .ci/run installs it'))
    else test.skip('age CLI not installed: apt-get install -y age (skipped outside CI)', () => {})
    return
  }

  test('decrypts the data key stanza of a file we encrypted, for each of two recipients', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'proxops-sops-age-'))
    try {
      const ids = [await age.generateIdentity(), await age.generateIdentity()]
      const recipients = await Promise.all(ids.map((i) => age.identityToRecipient(i)))
      const text = await encryptSops('secret: value\n', { recipients, file: 'f.yaml' })
      const parsed = parseSops(text, 'f.yaml')
      const ours = await resolveDataKey(parsed, { identities: [ids[0] as string] })
      parsed.metadata.age.forEach((stanza, i) => {
        writeFileSync(join(dir, `key${i}.txt`), `${ids[i]}\n`, { mode: 0o600 })
        writeFileSync(join(dir, `enc${i}.age`), stanza.enc)
        const out = execFileSync('age', ['--decrypt', '-i', join(dir, `key${i}.txt`), join(dir, `enc${i}.age`)])
        expect(Buffer.from(out).equals(Buffer.from(ours))).toBe(true)
        expect(out.length).toBe(32)
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a key made by age-keygen decrypts a file encrypted to its recipient', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'proxops-sops-age-'))
    try {
      const keyFile = join(dir, 'keys.txt')
      execFileSync('age-keygen', ['-o', keyFile], { stdio: 'pipe' })
      const recipient = execFileSync('age-keygen', ['-y', keyFile], { encoding: 'utf8' }).trim()
      const text = await encryptSops('a: 1\n', { recipients: [recipient] })
      const stanza = parseSops(text, 'f.yaml').metadata.age[0]
      writeFileSync(join(dir, 'enc.age'), stanza?.enc ?? '')
      const out = execFileSync('age', ['--decrypt', '-i', keyFile, join(dir, 'enc.age')])
      expect(out.length).toBe(32)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
