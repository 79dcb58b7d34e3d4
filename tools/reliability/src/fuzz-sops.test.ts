/**
 * Fuzzing SOPS files: a real encrypted file with bytes or fields corrupted must fail closed with a
 * coded SopsError, never decrypt to something else, never throw anything uncoded, and never echo a
 * secret value in the error.
 */
import { fc, test } from '@fast-check/vitest'
import { beforeAll, describe, expect } from 'vitest'
import { generateIdentity, identityToRecipient } from 'age-encryption'
import { decryptSops, encryptSops, isSopsError } from '@proxops/sops'
import { runs } from './soak.js'

const CANARY = 'canary-sops-7f3e9c1d'
const PLAIN = `pve:\n  token: ${CANARY}\n  user: root@pam\n"8006":\n  - one\n  - 2\nnested:\n  flag: true\n  ratio: 0.5\n`
let identity = ''
let encrypted = ''

beforeAll(async () => {
  identity = await generateIdentity()
  encrypted = await encryptSops(PLAIN, {
    recipients: [await identityToRecipient(identity)],
    file: 'secrets.sops.yaml',
    now: new Date('2026-01-01T00:00:00Z'),
  })
})

const ORIGINAL = { pve: { token: CANARY, user: 'root@pam' }, '8006': ['one', 2], nested: { flag: true, ratio: 0.5 } }

/** every leaf value with its key path, list indices left out (what SOPS authenticates) */
function leaves(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => leaves(v, path))
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => leaves(v, `${path}:${k}`))
  return [`${path}=${JSON.stringify(value)}`]
}

async function attempt(text: string): Promise<'ok' | string> {
  try {
    const doc = await decryptSops(text, { identities: [identity], file: 'secrets.sops.yaml' })
    // a successful decrypt must carry the original values at the original key paths. SOPS authenticates values and
    // their key paths (list indices are not part of a value's AAD), not the shape: an edit that wraps a mapping in a
    // one-item list still decrypts, as with the Go implementation (docs/GAPS.md, SOPS section)
    expect(leaves(doc.reveal())).toEqual(leaves(ORIGINAL))
    return 'ok'
  } catch (e) {
    expect(isSopsError(e), `uncoded error: ${String(e)}`).toBe(true)
    const msg = `${(e as Error).message} ${(e as Error).stack ?? ''}`
    expect(msg).not.toContain(CANARY)
    expect(msg).not.toContain(identity)
    return (e as { code: string }).code
  }
}

describe('SOPS file fuzzing', () => {
  test.prop([fc.nat(), fc.integer({ min: 1, max: 255 })], { numRuns: runs(400) })(
    'one changed character anywhere fails closed or is harmless',
    async (at, delta) => {
      const i = at % encrypted.length
      const ch = encrypted.charCodeAt(i)
      const mutated =
        encrypted.slice(0, i) + String.fromCharCode(32 + ((ch - 32 + delta) % 95)) + encrypted.slice(i + 1)
      await attempt(mutated)
    },
  )

  // Removing metadata that is only a hint (a recipient string, the version) may still decrypt; what must never
  // happen is a decrypt to anything but the original document (asserted in attempt()).
  test.prop([fc.nat(), fc.nat({ max: 200 })], { numRuns: runs(200) })(
    'truncated files fail closed with a code or decrypt to the original',
    async (at, len) => {
      const i = at % encrypted.length
      await attempt(encrypted.slice(0, i) + encrypted.slice(i + len + 1))
    },
  )

  test.prop([fc.string({ maxLength: 400 })], { numRuns: runs(1000) })(
    'arbitrary text is rejected with a code',
    async (text) => {
      const r = await attempt(text)
      expect(r).not.toBe('ok')
    },
  )

  test.prop(
    [fc.constantFrom('mac', 'lastmodified', 'version', 'age', 'enc', 'recipient'), fc.string({ maxLength: 30 })],
    { numRuns: runs(200) },
  )('replaced metadata fields fail closed', async (field, value) => {
    const re = new RegExp(`(${field}:\\s*)(\\S.*)`)
    if (!re.test(encrypted)) return
    const mutated = encrypted.replace(re, (_m, k: string) => `${k}${JSON.stringify(value)}`)
    if (mutated === encrypted) return
    const r = await attempt(mutated)
    if (field === 'mac' || field === 'enc') expect(r).not.toBe('ok')
  })
})
