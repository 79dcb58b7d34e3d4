/**
 * The overrides the guards' messages name (kit/guard-overrides.ts): an operator reads them to lift a guard, so
 * each names a flag or configuration key that exists (docs/cli.md, docs/configuration.md).
 */
import { readFileSync } from 'node:fs'
import { describe, expect, test } from 'vitest'
import { DISRUPTION_OVERRIDE, PRUNE_BUDGET_OVERRIDE, allowEmptyOverride } from './guard-overrides.js'

const doc = (name: string) => readFileSync(new URL(`../../../../docs/${name}`, import.meta.url), 'utf8')

describe('guard overrides', () => {
  test('say what to pass or set, word for word', () => {
    expect(allowEmptyOverride('VM')).toBe('pass --allow-empty VM to accept')
    expect(PRUNE_BUDGET_OVERRIDE).toBe(
      'raise it with --prune-budget or reconcile.prune-budget; the daemon also caps it by reconcile.prune-window',
    )
    expect(DISRUPTION_OVERRIDE).toBe(
      "raise it with the guest's proxops/disruption annotation or the cluster's disruption",
    )
  })

  test('name flags and keys the reference documents', () => {
    const cli = doc('cli.md')
    const config = doc('configuration.md')
    for (const flag of ['--allow-empty', '--prune-budget']) expect(cli).toContain(flag)
    for (const key of ['prune-budget', 'prune-window']) expect(config).toContain(key)
  })
})
