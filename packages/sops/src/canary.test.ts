// Canary: no decrypted (or to-be-encrypted) value ever appears in an error, a log line or an
// exception, whatever fails. Every failure path below is driven with values containing CANARY.
import { inspect } from 'node:util'
import * as age from 'age-encryption'
import { afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import { sealEnc } from './cipher.js'
import { readCredentials } from './credentials.js'
import { decryptSops } from './decrypt.js'
import { encryptSops } from './encrypt.js'
import { mergeSopsText } from './update.js'

const CANARY = /canary-|CANARYBROKEN/i // (not /canary/: stacks name this test file)
const dataKey = new Uint8Array(32).fill(9)
let identity = ''
let recipient = ''
let enc = ''
const plain = `secrets:
    proxops-token: canary-token-1
    number: 424242
cloud-init:
    passwords:
        default: canary-password-2
# canary-comment-3
list:
    - canary-item-4
note_unencrypted: visible
`

const seen: string[] = []
function record(e: unknown): void {
  seen.push(String(e), inspect(e, { depth: 10 }), (e as Error)?.stack ?? '', JSON.stringify(e) ?? '')
  const cause = (e as { cause?: unknown })?.cause
  if (cause) record(cause)
}
async function failing(p: Promise<unknown> | (() => unknown)): Promise<void> {
  try {
    await (typeof p === 'function' ? p() : p)
  } catch (e) {
    record(e)
    return
  }
  throw new Error('expected a failure')
}

beforeAll(async () => {
  identity = await age.generateIdentity()
  recipient = await age.identityToRecipient(identity)
  enc = await encryptSops(plain, { recipients: [recipient], dataKey, file: 's.yaml' })
})

afterEach(() => vi.restoreAllMocks())

describe('canary', () => {
  test('no decrypted value reaches errors, logs or console output', async () => {
    const logs: string[] = []
    for (const m of ['log', 'info', 'warn', 'error', 'debug'] as const)
      vi.spyOn(console, m).mockImplementation(
        (...args: unknown[]) => void logs.push(args.map((a) => inspect(a)).join(' ')),
      )
    const writes: string[] = []
    vi.spyOn(process.stderr, 'write').mockImplementation(
      (chunk: string | Uint8Array) => (writes.push(String(chunk)), true),
    )

    expect(enc).not.toMatch(CANARY)
    const flip = (s: string, from: RegExp) =>
      s.replace(from, (m) => m.slice(0, -3) + (m.at(-3) === 'A' ? 'B' : 'A') + m.slice(-2))

    // tampering: value, tag, mac, lastmodified, clear value
    await failing(decryptSops(flip(enc, /proxops-token: ENC\[AES256_GCM,data:[^,]{4}/), { dataKey }))
    await failing(
      decryptSops(
        enc.replace(/(default: ENC\[[^\]]*tag:)(.)/, (_m, a: string, c: string) => a + (c === 'A' ? 'B' : 'A')),
        { dataKey },
      ),
    )
    await failing(decryptSops(flip(enc, /mac: ENC\[AES256_GCM,data:[^,]{8}/), { dataKey }))
    await failing(decryptSops(enc.replace(/lastmodified: "(\d{3})\d/, 'lastmodified: "$19'), { dataKey }))
    await failing(decryptSops(enc.replace('note_unencrypted: visible', 'note_unencrypted: visiblE'), { dataKey }))
    // a type that does not parse (type is not authenticated): int holding text
    await failing(decryptSops(enc.replace(/(proxops-token: ENC\[[^\]]*type:)str/, '$1int'), { dataKey }))
    // an int-typed value whose plaintext is not a number
    const badInt = enc.replace(
      /number: ENC\[[^\]]*\]/,
      `number: ${sealEnc(Buffer.from('canary-not-int'), 'int', dataKey, 'secrets:number:')}`,
    )
    await failing(decryptSops(badInt, { dataKey }))
    // keys
    await failing(decryptSops(enc, { dataKey: new Uint8Array(32) }))
    await failing(decryptSops(enc, { identities: [await age.generateIdentity()] }))
    await failing(decryptSops(enc, { identities: ['AGE-SECRET-KEY-1CANARYBROKEN'] }))
    // plaintext input errors (encrypt and merge)
    await failing(encryptSops('a: [canary-unclosed\n', { recipients: [recipient] }))
    await failing(encryptSops('a: canary-a\nb: 99999999999999999999999999\n', { recipients: [recipient] }))
    await failing(encryptSops('top: 1\n8006: canary-b\n', { recipients: [recipient] }))
    await failing(mergeSopsText(enc, [{ path: 'secrets.proxops-token.deeper', value: 'canary-new' }], { dataKey }))
    // credentials
    const doc = await decryptSops(enc, { dataKey, file: 's.yaml' })
    const creds = readCredentials(doc, { cluster: 'c1' })
    await failing(() => creds.requireSecret('missing', 'secrets.pve.token'))
    await failing(() => creds.resolveRef('cloud-init.ssh-keys.none'))

    // printing the results by accident
    console.log(doc, creds, doc.get('secrets.proxops-token'), { nested: doc.get('list') })
    console.log(`${doc.get('cloud-init.passwords.default')}`, JSON.stringify(doc))
    // but reading explicitly works
    expect(doc.get('secrets.proxops-token')?.reveal()).toBe('canary-token-1')
    expect(doc.revealText()).toContain('canary-comment-3')

    expect(seen.length).toBeGreaterThan(40)
    for (const s of [...seen, ...logs, ...writes]) expect(s).not.toMatch(CANARY)
    expect(logs.join('\n')).toContain('(sensitive)')
  })
})
