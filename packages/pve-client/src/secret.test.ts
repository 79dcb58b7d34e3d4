import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { Secret } from './secret.js'

describe('Secret', () => {
  it('never shows its value except through reveal()', () => {
    const canary = 'CANARY-5b1f0c2e-secret'
    const s = new Secret(canary)
    const holder = { auth: { secret: s }, list: [s] }
    for (const shown of [
      String(s),
      `${s}`,
      JSON.stringify(holder),
      inspect(holder, { depth: 10, showHidden: true }),
      s + '',
    ]) {
      expect(shown).not.toContain(canary)
    }
    expect(s.reveal()).toBe(canary)
  })
})
