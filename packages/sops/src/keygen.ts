// An age key file as `age-keygen -o FILE` writes it, for `proxops init`: created only where there is none (never
// overwritten), readable by its owner only. An existing file is read for its public key instead.
import * as age from 'age-encryption'
import { mkdir, open, readFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { SopsError } from './errors.js'
import { parseIdentities } from './identities.js'

export interface AgeKeyFile {
  /** the public key (`age1…`) of the file's first identity, or of the new key */
  recipient: string
  /** false: a new key, written by `write()` */
  exists: boolean
  /** writes the new key's file (nothing for one that exists); fails if a file appeared there meanwhile */
  write(): Promise<void>
}

/**
 * The age key file at `path`: an existing one is read for its public key; where there is none, a new X25519 key,
 * written only when the caller says so (after its other checks passed).
 */
export async function ageKeyFile(path: string, now: Date = new Date()): Promise<AgeKeyFile> {
  let text: string | undefined
  try {
    text = await readFile(path, 'utf8')
  } catch (e) {
    if ((e as { code?: unknown }).code !== 'ENOENT')
      throw new SopsError(
        'NoIdentity',
        path,
        `cannot read the age key file (${String((e as { code?: unknown }).code)})`,
      )
  }
  if (text !== undefined) {
    const problems: string[] = []
    const [first] = parseIdentities(text, path, false, problems)
    if (first === undefined)
      throw new SopsError(
        'NoIdentity',
        path,
        `holds no age identity${problems.length ? `: ${problems.join('; ')}` : ''}`,
      )
    return { recipient: await age.identityToRecipient(first.key.reveal()), exists: true, write: async () => {} }
  }
  const identity = await age.generateX25519Identity()
  const recipient = await age.identityToRecipient(identity)
  const write = async (): Promise<void> => {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 })
    // `wx`: a file that appeared meanwhile is never replaced
    const handle = await open(path, 'wx', 0o600)
    try {
      await handle.writeFile(`# created: ${now.toISOString()}\n# public key: ${recipient}\n${identity}\n`)
    } finally {
      await handle.close()
    }
  }
  return { recipient, exists: false, write }
}
