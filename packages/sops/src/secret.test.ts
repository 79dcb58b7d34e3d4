import { inspect } from 'node:util'
import { describe, expect, test } from 'vitest'
import { Secret } from './secret.js'

describe('Secret', () => {
  test('prints as (sensitive) everywhere; reveal() is explicit', () => {
    const s = new Secret('hunter2-canary', 'str')
    expect(String(s)).toBe('(sensitive)')
    expect(`${s}`).toBe('(sensitive)')
    expect(JSON.stringify({ s })).toBe('{"s":"(sensitive)"}')
    expect(inspect(s)).toBe('(sensitive)')
    expect(inspect({ nested: [s] }, { depth: 5 })).not.toContain('hunter2')
    expect(`${[s]}`).not.toContain('hunter2')
    // an explicit toString() too (a logger may call it directly)
    expect(s.toString()).toBe('(sensitive)')
    expect(s.reveal()).toBe('hunter2-canary')
    expect(Object.keys(s)).not.toContain('value')
  })

  test('keeps its type and whether the file encrypted it, cannot be changed, and reveals numbers as text', () => {
    const n = new Secret(42, 'int')
    expect([n.type, n.encrypted, n.revealString(), n.reveal()]).toEqual(['int', true, '42', 42])
    expect(n + '').toBe('(sensitive)')
    const clear = new Secret('visible', 'str', false)
    expect(clear.encrypted).toBe(false)
    expect(Object.isFrozen(clear)).toBe(true)
  })
})
