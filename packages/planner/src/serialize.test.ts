import { describe, expect, it } from 'vitest'
import { PlanInputError } from './errors.js'
import { desired, inventory, liveVm, policy, vm } from './fixtures.test.helpers.js'
import { plan } from './plan/plan.js'
import { parsePlan, serializePlan } from './serialize.js'

describe('serializePlan / parsePlan', () => {
  const p = plan(desired(vm('web', 100, { memory: 4096 })), inventory([liveVm(100, 'web')]), policy())

  it('writes format_version, sorted keys at every depth and a trailing newline', () => {
    const text = serializePlan(p)
    expect(text.endsWith('}\n')).toBe(true)
    const top = Object.keys(JSON.parse(text) as object)
    expect(top).toEqual([...top].sort())
    expect(top).toContain('format_version')
    const action = (JSON.parse(text) as { actions: Record<string, unknown>[] }).actions[0] as Record<string, unknown>
    expect(Object.keys(action)).toEqual(Object.keys(action).sort())
  })

  it('round-trips: parse(serialize(p)) serialises to the same bytes', () => {
    expect(serializePlan(parsePlan(serializePlan(p)))).toBe(serializePlan(p))
  })

  it('refuses other format versions, non-JSON and non-plans with PLAN_FORMAT naming the source', () => {
    const bad = (text: string) => {
      try {
        parsePlan(text, 'plan.json')
      } catch (e) {
        expect(e).toBeInstanceOf(PlanInputError)
        expect((e as PlanInputError).code).toBe('PLAN_FORMAT')
        expect((e as PlanInputError).message).toContain('plan.json')
        return
      }
      throw new Error('accepted')
    }
    bad('{')
    bad('[]')
    bad(JSON.stringify({ ...JSON.parse(serializePlan(p)), format_version: 3 }))
    bad(JSON.stringify({ format_version: 2, cluster: 'x' }))
  })

  it('a version-1 plan (action types with kinds in them) is refused with the advice to run diff again', () => {
    const v1 = JSON.stringify({ ...JSON.parse(serializePlan(p)), format_version: 1 })
    expect(() => parsePlan(v1, 'plan.json')).toThrow(
      /plan\.json: format_version 1 is an earlier ProxOps's plan .*run `proxops diff --out` again/,
    )
  })
})
