// The age layer: the 32-byte data key, armored and encrypted to each recipient (age-encryption 0.3.1).
import * as age from 'age-encryption'
import { SopsError } from './errors.js'
import type { AgeIdentity } from './identities.js'
import type { AgeStanza } from './metadata.js'

export const DATA_KEY_SIZE = 32

export async function recipientOf(identity: AgeIdentity, file: string): Promise<string> {
  try {
    return await age.identityToRecipient(identity.key.reveal())
  } catch {
    throw new SopsError('NoIdentity', file, `${identity.source} is not a valid age identity`)
  }
}

const streamOf = (bytes: Uint8Array): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(controller) {
      controller.enqueue(bytes)
      controller.close()
    },
  })

/**
 * The decrypted bytes of age's output stream. Given bytes, age reads its output with `new Response(stream)`, which
 * loads Node's whole fetch stack (20-30 ms of a CLI start) for a 32-byte key; a failed payload check rejects here.
 */
async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = []
  const reader = stream.getReader()
  for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value)
  return new Uint8Array(Buffer.concat(chunks))
}

/** Unwraps the data key with any one matching identity; fails closed with a coded error. */
export async function unwrapDataKey(
  stanzas: readonly AgeStanza[],
  identities: readonly AgeIdentity[],
  file: string,
  /** Places discovery looked at that held no identity, named in an IdentityMismatch. */
  emptySources: readonly string[] = [],
): Promise<Uint8Array> {
  const recipients = stanzas.map((s) => s.recipient)
  if (identities.length === 0) throw new SopsError('NoIdentity', file, 'no age identity found', { recipients })
  const ownList = await Promise.all(identities.map((id) => recipientOf(id, file)))
  const own = new Set(ownList)
  const decrypter = new age.Decrypter()
  for (const id of identities) decrypter.addIdentity(id.key.reveal())
  // Stanzas naming one of our recipients first; the others are still tried (recipient strings are hints).
  const ordered = [...stanzas].sort((a, b) => Number(own.has(b.recipient)) - Number(own.has(a.recipient)))
  for (const stanza of ordered) {
    let key: Uint8Array | undefined
    try {
      key = await readAll(await decrypter.decrypt(streamOf(age.armor.decode(stanza.enc))))
    } catch {
      key = undefined
    }
    if (key === undefined) {
      if (own.has(stanza.recipient))
        throw new SopsError(
          'Malformed',
          file,
          `the age stanza for ${stanza.recipient} does not decrypt with its identity`,
        )
      continue
    }
    if (key.length !== DATA_KEY_SIZE)
      throw new SopsError('Malformed', file, 'the age stanza does not hold a 32-byte data key')
    return key
  }
  // Sources and public recipients only: a user sees at once which key they have and which one the file wants.
  const read = identities.map((id, i) => `${id.source} (${ownList[i] ?? '?'})`).join(', ')
  const empty = emptySources.length > 0 ? `; nothing found in: ${emptySources.join(', ')}` : ''
  throw new SopsError(
    'IdentityMismatch',
    file,
    `none of ${identities.length} age identities matches the file's recipients: ${recipients.join(', ') || '(none)'}; identities read: ${read}${empty}`,
    { recipients },
  )
}

/** Encrypts the data key to one recipient, armored, as sops stores it in `enc`. */
export async function wrapDataKey(dataKey: Uint8Array, recipient: string, file: string): Promise<string> {
  if (!recipient.startsWith('age1'))
    throw new SopsError(
      'Unsupported',
      file,
      `recipient ${recipient.slice(0, 16)}… is not an age X25519 or hybrid recipient`,
    )
  const e = new age.Encrypter()
  try {
    e.addRecipient(recipient)
  } catch {
    throw new SopsError('Malformed', file, `invalid age recipient ${recipient}`)
  }
  return age.armor.encode(await e.encrypt(dataKey))
}
