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
    expect(s.reveal()).toBe('hunter2-canary')
    expect(Object.keys(s)).not.toContain('value')
  })
})
