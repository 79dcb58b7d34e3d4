// The age layer alone: a data key wrapped to a recipient comes back whole, and a stanza whose payload was changed
// fails closed with a coded error (age's payload check runs in the stream age.ts reads itself).
import * as age from 'age-encryption'
import { describe, expect, test } from 'vitest'
import { unwrapDataKey, wrapDataKey } from './age.js'
import { SopsError } from './errors.js'
import { Secret } from './secret.js'

const identityOf = (key: string) => ({ key: new Secret(key, 'str'), source: 'test' })

/** The armored age file with one byte of its payload (after the header) flipped, re-armored. */
function tamper(enc: string): string {
  const bytes = age.armor.decode(enc)
  bytes[bytes.length - 5]! ^= 0x01
  return age.armor.encode(bytes)
}

describe('the age layer', () => {
  test('unwraps the data key it wrapped, byte for byte', async () => {
    const id = await age.generateIdentity()
    const recipient = await age.identityToRecipient(id)
    const key = crypto.getRandomValues(new Uint8Array(32))
    const enc = await wrapDataKey(key, recipient, 'f.yaml')
    expect(await unwrapDataKey([{ recipient, enc }], [identityOf(id)], 'f.yaml')).toEqual(key)
  })

  test('a changed payload is refused, naming the stanza, never a wrong key', async () => {
    const id = await age.generateIdentity()
    const recipient = await age.identityToRecipient(id)
    const enc = tamper(await wrapDataKey(new Uint8Array(32).fill(7), recipient, 'f.yaml'))
    const failure = unwrapDataKey([{ recipient, enc }], [identityOf(id)], 'f.yaml')
    await expect(failure).rejects.toBeInstanceOf(SopsError)
    await expect(failure).rejects.toThrow(`the age stanza for ${recipient} does not decrypt with its identity`)
  })
})
