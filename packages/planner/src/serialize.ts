/**
 * Byte-stable plan JSON: keys sorted at every depth, two-space indent, a trailing newline. Arrays keep
 * their order (plan() already put them in a total order). `parsePlan` checks `format_version`.
 */
import { PlanInputError } from './errors.js'
import { PLAN_FORMAT_VERSION, type Plan } from './plan-types.js'

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k]
      if (v !== undefined) out[k] = canonical(v)
    }
    return out
  }
  return value
}

export function serializePlan(plan: Plan): string {
  return `${JSON.stringify(canonical(plan), null, 2)}\n`
}

/** Reads a saved plan; throws PLAN_FORMAT for anything that is not a plan of this format version. */
export function parsePlan(text: string, source = 'plan'): Plan {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (e) {
    throw new PlanInputError('PLAN_FORMAT', `not JSON (${(e as Error).message.slice(0, 80)})`, source)
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw new PlanInputError('PLAN_FORMAT', 'not a plan object', source)
  const v = (data as { format_version?: unknown }).format_version
  if (v === 1)
    throw new PlanInputError(
      'PLAN_FORMAT',
      `format_version 1 is an earlier ProxOps's plan (its action types are not this version's); a saved plan is short-lived: run \`proxops diff --out\` again`,
      source,
    )
  if (v !== PLAN_FORMAT_VERSION)
    throw new PlanInputError(
      'PLAN_FORMAT',
      `format_version ${JSON.stringify(v)} is not supported (expected ${PLAN_FORMAT_VERSION})`,
      source,
    )
  for (const k of ['cluster', 'actions', 'anomalies', 'skips', 'pending', 'gaps', 'summary', 'policy']) {
    if (!(k in data)) throw new PlanInputError('PLAN_FORMAT', `missing ${k}`, source)
  }
  if (!Array.isArray((data as { actions: unknown }).actions))
    throw new PlanInputError('PLAN_FORMAT', 'actions is not a list', source)
  return data as Plan
}
