// Conformance: the real sops-written files in ../shared/fixtures/sops decrypt to their .plain.json with
// the MAC verified, and any single altered character fails closed with the right code.
import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { decryptSops, parseSops, resolveDataKey } from './decrypt.js'
import { encryptSops } from './encrypt.js'
import { isSopsError } from './errors.js'
import { type Fixture, fixtureAgeKeys, fixtures, vectorsForTests } from './test-support/fixtures.js'

const toJson = (v: unknown) =>
  JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? Number(x) : x))) as unknown

const ageFixtures = fixtures('age')
const dataKeyFixtures = fixtures('datakey')

describe.skipIf(!vectorsForTests())('shared sops fixtures', () => {
  test('are present', () => {
    expect(ageFixtures.length).toBeGreaterThanOrEqual(2)
    expect(dataKeyFixtures.length).toBeGreaterThanOrEqual(5)
  })

  test.each(ageFixtures.map((f) => [f.name, f] as const))('%s decrypts with keys.txt', async (_n, f) => {
    const doc = await decryptSops(f.text, { file: f.name, identities: [fixtureAgeKeys()] })
    expect(toJson(doc.reveal())).toEqual(f.plain)
    expect(doc.recipients).toHaveLength(3)
    expect(toJson(parseYaml(doc.revealText()))).toEqual(f.plain)
  })

  test.each(dataKeyFixtures.map((f) => [f.name, f] as const))('%s decrypts with its data key', async (_n, f) => {
    const doc = await decryptSops(f.text, { file: f.name, dataKey: f.dataKey as Uint8Array })
    expect(toJson(doc.reveal())).toEqual(f.plain)
    expect(doc.undecryptedComments).toBe(0)
    expect(toJson(parseYaml(doc.revealText()))).toEqual(f.plain)
  })

  test('encrypted comments are decrypted into the plaintext view', async () => {
    const f = dataKeyFixtures.find((x) => x.name === 'datakey/comments.enc.yaml') as Fixture
    const text = (await decryptSops(f.text, { file: f.name, dataKey: f.dataKey as Uint8Array })).revealText()
    expect(text).toMatch(/^#/)
    expect(text).not.toContain('ENC[')
  })

  test('PGP-only files without a data key are Unsupported', async () => {
    const f = dataKeyFixtures[0] as Fixture
    await expect(decryptSops(f.text, { file: f.name, identities: [fixtureAgeKeys()] })).rejects.toMatchObject({
      code: 'Unsupported',
    })
  })

  test('a wrong data key fails closed', async () => {
    const f = dataKeyFixtures[0] as Fixture
    await expect(decryptSops(f.text, { file: f.name, dataKey: new Uint8Array(32) })).rejects.toMatchObject({
      code: 'MacMismatch',
    })
  })
})

// --- one flipped character anywhere -------------------------------------------------------------

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

interface Site {
  kind: 'base64' | 'digit' | 'clear'
  /** The tag must stay 16 bytes long to be well formed. */
  tag?: boolean
  start: number
  end: number
}

/** Places where one character can be altered: data/iv/tag of every ENC value (and the mac), lastmodified digits, clear values. */
function sites(text: string): Site[] {
  const out: Site[] = []
  for (const m of text.matchAll(/ENC\[AES256_GCM,data:([^,]*),iv:([^,]+),tag:([^,]+),type:[a-z]+\]/dg)) {
    if (m.indices?.[2]?.[0] !== undefined && m[0].includes('type:comment')) continue // comments are not authenticated by sops
    for (const g of [1, 2, 3]) {
      const r = m.indices?.[g]
      if (r && r[1] > r[0]) out.push({ kind: 'base64', tag: g === 3, start: r[0], end: r[1] })
    }
  }
  const lm = /lastmodified"?: ?["']?(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})/d.exec(text)
  const r = lm?.indices?.[1]
  if (r) out.push({ kind: 'digit', start: r[0], end: r[1] })
  const clear = /(all: )(going to remain in clear text)/d.exec(text)?.indices?.[2]
  if (clear) out.push({ kind: 'clear', start: clear[0], end: clear[1] })
  return out
}

function canonicalB64(s: string): boolean {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0 && Buffer.from(s, 'base64').toString('base64') === s
}

async function withDataKey(f: Fixture): Promise<Uint8Array> {
  if (f.dataKey) return f.dataKey
  return resolveDataKey(parseSops(f.text, f.name), { identities: [fixtureAgeKeys()] })
}

// One of our own files too, with every value type, a clear-text branch and comments.
const ownKey = new Uint8Array(32).fill(11)
const own: Fixture = {
  name: 'own/all-types.yaml',
  path: 'own/all-types.yaml',
  dataKey: ownKey,
  plain: undefined,
  text: await encryptSops(
    `# comment\nstr: a string\n"8006": 1\nint: -42\nfloat: 2.5\nbool: false\nwhen: !!timestamp 2020-01-02T03:04:05Z\nlist:\n  - x\n  - {k: v}\nnested_unencrypted:\n  all: going to remain in clear text\n`,
    { recipients: ['age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p'], dataKey: ownKey },
  ),
}

describe.each([...ageFixtures, ...dataKeyFixtures, own].map((f) => [f.name, f] as const))(
  'tampering with %s',
  (_n, f) => {
    const all = sites(f.text)

    test('has sites to tamper with', () => {
      expect(all.filter((s) => s.kind === 'base64').length).toBeGreaterThanOrEqual(6)
      expect(all.some((s) => s.kind === 'digit')).toBe(true)
    })

    test.prop([fc.nat(), fc.nat(), fc.nat({ max: 63 })], { numRuns: 40 })(
      'one altered character fails closed with the right code',
      async (si, pos, ch) => {
        const dataKey = await withDataKey(f)
        const site = all[si % all.length] as Site
        const at = site.start + (pos % (site.end - site.start))
        const old = f.text[at] as string
        const alphabet = site.kind === 'digit' ? '0123456789' : B64
        let repl = alphabet[ch % alphabet.length] as string
        if (repl === old) repl = alphabet[(ch + 1) % alphabet.length] as string
        const text = f.text.slice(0, at) + repl + f.text.slice(at + 1)

        let expected: string
        if (site.kind === 'base64') {
          const field = text.slice(site.start, site.end)
          const wellFormed = canonicalB64(field) && (!site.tag || Buffer.from(field, 'base64').length === 16)
          expected = wellFormed ? 'MacMismatch' : 'Malformed'
        } else if (site.kind === 'digit') {
          const t = text.slice(site.start, site.end)
          const d = new Date(`${t}Z`)
          expected = !Number.isNaN(d.getTime()) && d.toISOString().startsWith(t) ? 'MacMismatch' : 'Malformed'
        } else expected = 'MacMismatch'

        const err = await decryptSops(text, { file: f.name, dataKey }).then(
          () => undefined,
          (e: unknown) => e,
        )
        expect(isSopsError(err)).toBe(true)
        expect((err as { code: string }).code).toBe(expected)
      },
    )
  },
)
