/**
 * A saved plan is a contract, not a script: `apply --plan` derives the plan again from the repository and
 * live PVE and runs only if the fresh plan is the saved one, byte for byte (both in the redacted form that
 * is written to files). Every action therefore passed the same ownership, allowlist, budget and guard
 * checks as a fresh plan, and no action can exist that a fresh plan would not produce. See docs/safety.md.
 */
import { serializePlan, type Plan } from '@proxops/planner'

/** Where two plans first differ, for the error message; undefined when they are the same plan. */
export function planDifference(saved: Plan, fresh: Plan): string | undefined {
  if (serializePlan(saved) === serializePlan(fresh)) return undefined
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))
  if (saved.cluster !== fresh.cluster) return `it is for cluster "${saved.cluster}"`
  if (!same(saved.policy, fresh.policy))
    return 'it was made with another policy (prune budget, disruption or ownership tag)'
  const count = Math.max(saved.actions.length, fresh.actions.length)
  for (let i = 0; i < count; i++) {
    const a = saved.actions[i]
    const b = fresh.actions[i]
    if (same(a, b)) continue
    if (a === undefined) return `a fresh plan has action ${i + 1} (${b?.address} ${b?.type}) that the saved plan lacks`
    if (b === undefined) return `action ${i + 1} (${a.address} ${a.type}) is not in a fresh plan`
    if (a.address !== b.address || a.type !== b.type)
      return `action ${i + 1} is ${a.address} ${a.type} in the saved plan but ${b.address} ${b.type} in a fresh plan`
    return `action ${i + 1} (${a.address} ${a.type}) differs from a fresh plan`
  }
  for (const key of ['anomalies', 'skips', 'pending', 'gaps', 'summary'] as const) {
    if (!same(saved[key], fresh[key])) return `its ${key} differ from a fresh plan`
  }
  return 'it differs from a fresh plan'
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
  )
}
