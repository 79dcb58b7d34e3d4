/**
 * A saved plan is a contract, not a script: `apply --plan` derives the plan again from the repository and
 * live PVE and runs only if the fresh plan is the saved one, byte for byte (both in the redacted form that
 * is written to files). Every action therefore passed the same ownership, allowlist, budget and guard
 * checks as a fresh plan, and no action can exist that a fresh plan would not produce. See docs/safety.md.
 */
import type { LiveInventory } from '../inventory.js'
import type { Plan } from '../plan-types.js'
import { serializePlan } from '../serialize.js'
import { ReconcileError } from './errors.js'

/**
 * The specific refusals of a saved plan, named before the whole contract is compared: another commit, an
 * object whose config digest changed, one that cannot be read now, a create of an object that exists.
 */
export function checkSavedPlan(saved: Plan, commit: string | undefined, live: LiveInventory): void {
  const refuse = (why: string): never => {
    throw new ReconcileError('PLAN_MISMATCH', `cluster ${saved.cluster}: ${why}; run proxops diff --out again`)
  }
  if (saved.commit !== undefined && saved.commit !== commit) {
    refuse(`the saved plan was made at commit ${saved.commit}, the repository is now at ${commit ?? '(none)'}`)
  }
  const guests = new Map(live.guests.map((g) => [g.vmid, g]))
  const unknown = new Set(live.unknownGuests.map((g) => g.vmid))
  for (const action of saved.actions) {
    if (action.vmid === undefined) continue
    const now = guests.get(action.vmid)
    if (unknown.has(action.vmid)) refuse(`${action.address} cannot be read now`)
    if (action.digest !== undefined && now?.digest !== action.digest)
      refuse(`${action.address} changed on PVE since the plan was made (config digest differs)`)
    if ((action.type === 'create' || action.type === 'clone') && now !== undefined)
      refuse(`${action.address} exists on PVE now but the plan creates it`)
  }
}

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
