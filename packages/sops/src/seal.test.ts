/** sealToRecipients / openSealed / sopsRecipients: a token secret sealed to a SOPS file's recipients (docs/access.md). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as age from 'age-encryption'
import { afterEach, expect, it } from 'vitest'
import { encryptSops } from './encrypt.js'
import { identitiesFromStrings } from './identities.js'
import { openSealed, sealToRecipients, sopsRecipients } from './seal.js'

let dir: string | undefined
afterEach(() => dir && rmSync(dir, { recursive: true, force: true }))

it('seals to every recipient of a SOPS file; either key opens it; another key does not', async () => {
  const [a, b, other] = await Promise.all([age.generateIdentity(), age.generateIdentity(), age.generateIdentity()])
  const recipients = await Promise.all([a, b].map((k) => age.identityToRecipient(k)))
  dir = mkdtempSync(join(tmpdir(), 'seal-'))
  const file = join(dir, 'secrets.sops.yaml')
  writeFileSync(file, await encryptSops('secrets:\n  token: x\n', { recipients, file }))
  expect(await sopsRecipients(file)).toEqual(recipients)
  const sealed = await sealToRecipients('canary-5f1e', await sopsRecipients(file), file)
  expect(sealed).toMatch(/^-----BEGIN AGE ENCRYPTED FILE-----/)
  expect(sealed).not.toContain('canary-5f1e')
  for (const k of [a, b]) expect(await openSealed(sealed, identitiesFromStrings([k]), 'f')).toBe('canary-5f1e')
  await expect(openSealed(sealed, identitiesFromStrings([other]), 'f')).rejects.toThrow('no identity opens')
  await expect(sealToRecipients('x', [], 'f')).rejects.toThrow('no age recipient')
})
