/**
 * `spec.extra` against PVE's `requires` rules (pve-requires.ts): a create parameter PVE accepts only together with
 * another is one ProxOps cannot send from `spec.extra` (it never sends the partner, a restore's `archive`), so
 * every such key must be reserved, or the create would be a 400 on every cycle.
 */
import { describe, expect, it } from 'vitest'
import { reservedExtraKey } from './extra.js'
import { requiresOf } from './pve-requires.js'

describe('spec.extra and the create requires rules', () => {
  it.each(['qemu', 'lxc'] as const)('every %s create parameter with a requires rule is reserved', (family) => {
    const rules = requiresOf(`POST /nodes/{node}/${family}`)
    expect(Object.keys(rules).length).toBeGreaterThan(0)
    for (const [param, requires] of Object.entries(rules))
      expect(reservedExtraKey(family, param), `${param} (requires ${requires})`).toBeDefined()
  })
})
