/**
 * A secret sealed with age to the recipients a SOPS file already uses: how ProxOps keeps a new PVE API token's
 * secret, which PVE shows once (docs/access.md#token-secrets). The file is an armored age file (`age -d -i key`);
 * it holds only the secret.
 */
import * as age from 'age-encryption'
import { readFile } from 'node:fs/promises'
import { parseSops } from './decrypt.js'
import { SopsError } from './errors.js'
import type { AgeIdentity } from './identities.js'

/** The age recipients of a SOPS file (its `sops.age` stanzas), in file order, without repeats. */
export async function sopsRecipients(path: string): Promise<string[]> {
  const parsed = parseSops(await readFile(path, 'utf8'), path)
  return [...new Set(parsed.metadata.age.map((s) => s.recipient))]
}

/** `plaintext` encrypted to every recipient, armored. */
export async function sealToRecipients(
  plaintext: string,
  recipients: readonly string[],
  file: string,
): Promise<string> {
  if (recipients.length === 0) throw new SopsError('NoIdentity', file, 'no age recipient to encrypt to')
  const e = new age.Encrypter()
  for (const r of recipients) {
    try {
      e.addRecipient(r)
    } catch {
      throw new SopsError('Malformed', file, `invalid age recipient ${r}`)
    }
  }
  return age.armor.encode(await e.encrypt(plaintext))
}

/** Opens what sealToRecipients wrote, with any one of the identities. */
export async function openSealed(armored: string, identities: readonly AgeIdentity[], file: string): Promise<string> {
  const d = new age.Decrypter()
  for (const id of identities) d.addIdentity(id.key.reveal())
  try {
    return await d.decrypt(age.armor.decode(armored), 'text')
  } catch {
    throw new SopsError('IdentityMismatch', file, 'no identity opens the sealed file')
  }
}
