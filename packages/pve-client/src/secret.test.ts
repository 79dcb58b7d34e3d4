import { inspect } from 'node:util'
import { describe, expect, it } from 'vitest'
import { asSecret, Secret } from './secret.js'

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

describe('Secret, as an operator reads it', () => {
  it('prints as the one marker everywhere, says whether it is empty, and is wrapped once', () => {
    const s = new Secret('CANARY-5b1f0c2e-secret')
    // an explicit toString() too (a logger may call it directly)
    expect(s.toString()).toBe('(sensitive)')
    expect([String(s), `${s}`, s + '', JSON.stringify({ s }), inspect(s)]).toEqual([
      '(sensitive)',
      '(sensitive)',
      '(sensitive)',
      '{"s":"(sensitive)"}',
      '(sensitive)',
    ])
    expect(s.empty).toBe(false)
    expect(new Secret('').empty).toBe(true)
    expect(asSecret(s)).toBe(s)
    const wrapped = asSecret('plain-value')
    expect(wrapped).toBeInstanceOf(Secret)
    expect(wrapped.reveal()).toBe('plain-value')
  })
})
