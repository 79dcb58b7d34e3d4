// sops value types through decryption: str, int, float, bool, bytes, time, and their MAC bytes.
import { describe, expect, test } from 'vitest'
import { aadFor, sealEnc } from './cipher.js'
import { decryptSops } from './decrypt.js'
import { encryptSops } from './encrypt.js'

const dataKey = new Uint8Array(32).fill(13)
const recipient = 'age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p'

describe('value types', () => {
  test('each type decrypts to its JS value and type', async () => {
    const enc = await encryptSops(
      's: text\ni: 9007199254740993\nf: 0.1\nb: true\nt: !!timestamp 2020-01-02T03:04:05.120+01:00\nbig: -9223372036854775808\n',
      { recipients: [recipient], dataKey },
    )
    expect(enc).toMatch(/i: ENC\[[^\]]*type:int\]/)
    expect(enc).toMatch(/f: ENC\[[^\]]*type:float\]/)
    expect(enc).toMatch(/b: ENC\[[^\]]*type:bool\]/)
    expect(enc).toMatch(/t: ENC\[[^\]]*type:time\]/)
    const doc = await decryptSops(enc, { dataKey })
    expect(doc.get('s')?.type).toBe('str')
    expect(doc.get('i')?.reveal()).toBe(9007199254740993n) // beyond 2^53: kept exact as bigint
    expect(doc.get('f')?.reveal()).toBe(0.1)
    expect(doc.get('b')?.reveal()).toBe(true)
    expect(doc.get('t')?.reveal()).toBe('2020-01-02T03:04:05.12+01:00')
    expect(doc.get('t')?.type).toBe('time')
    expect(doc.get('big')?.reveal()).toBe(-9223372036854775808n)
  })

  test('a bytes value (as other sops stores write them) decrypts, and its raw bytes are in the MAC', async () => {
    const enc = await encryptSops('blob: hello\n', { recipients: [recipient], dataKey })
    const bytes = sealEnc(Buffer.from('hello'), 'bytes', dataKey, aadFor(['blob']))
    const doc = await decryptSops(enc.replace(/blob: ENC\[[^\]]*\]/, `blob: ${bytes}`), { dataKey })
    expect(doc.get('blob')?.type).toBe('bytes')
    expect(doc.get('blob')?.reveal()).toBe('hello')
  })

  test('bool plaintext is True/False as sops writes it; Go ParseBool forms are read', async () => {
    const enc = await encryptSops('x: false\n', { recipients: [recipient], dataKey })
    for (const form of ['0', 'f', 'FALSE', 'False']) {
      const v = sealEnc(Buffer.from(form), 'bool', dataKey, 'x:')
      expect((await decryptSops(enc.replace(/x: ENC\[[^\]]*\]/, `x: ${v}`), { dataKey })).get('x')?.reveal()).toBe(
        false,
      )
    }
    const wrong = sealEnc(Buffer.from('no'), 'bool', dataKey, 'x:')
    await expect(decryptSops(enc.replace(/x: ENC\[[^\]]*\]/, `x: ${wrong}`), { dataKey })).rejects.toMatchObject({
      code: 'Malformed',
    })
  })

  test('a non-canonical float plaintext is normalised for the MAC like Go (3.140 -> 3.14)', async () => {
    const enc = await encryptSops('x: 3.14\n', { recipients: [recipient], dataKey })
    const v = sealEnc(Buffer.from('3.140'), 'float', dataKey, 'x:')
    expect((await decryptSops(enc.replace(/x: ENC\[[^\]]*\]/, `x: ${v}`), { dataKey })).get('x')?.reveal()).toBe(3.14)
  })

  test('a clear value in an encrypted path is refused (a hand-added plaintext key)', async () => {
    const enc = await encryptSops('x: 1\n', { recipients: [recipient], dataKey })
    await expect(decryptSops(`added: plain\n${enc}`, { dataKey })).rejects.toMatchObject({
      code: 'Malformed',
      path: ['added'],
    })
  })
})
