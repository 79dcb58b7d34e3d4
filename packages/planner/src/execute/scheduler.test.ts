import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { schedule, type Job, type Outcome } from './scheduler.js'

const job = (id: string, extra: Partial<Job> = {}): Job => ({ id, deps: [], after: [], slots: [], ...extra })
const tick = (ms = 1): Promise<void> => new Promise((r) => setTimeout(r, ms))

describe('schedule', () => {
  it('runs a dependant only after its prerequisite succeeded', async () => {
    const order: string[] = []
    const outcomes = await schedule([job('b', { deps: ['a'] }), job('a')], async (j) => {
      order.push(`start ${j.id}`)
      await tick()
      order.push(`end ${j.id}`)
      return { status: 'ok' }
    })
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b'])
    expect([...outcomes.values()].every((o) => o.status === 'ok')).toBe(true)
  })

  it('skips dependants of a failed job as deferred, transitively, and keeps running unrelated jobs', async () => {
    const ran: string[] = []
    const outcomes = await schedule(
      [job('a'), job('b', { deps: ['a'] }), job('c', { deps: ['b'] }), job('x')],
      async (j) => {
        ran.push(j.id)
        return j.id === 'a' ? { status: 'failed', error: 'task failed' } : { status: 'ok' }
      },
    )
    expect(ran.sort()).toEqual(['a', 'x'])
    expect(outcomes.get('b')).toEqual({
      status: 'skipped',
      code: 'deferred',
      reason: 'deferred: prerequisite a failed',
    })
    expect(outcomes.get('c')).toEqual({
      status: 'skipped',
      code: 'deferred',
      reason: 'deferred: prerequisite b was skipped',
    })
    expect(outcomes.get('x')).toEqual({ status: 'ok' })
  })

  it('treats `after` as ordering only: the job runs even when the earlier one failed', async () => {
    const ran: string[] = []
    const outcomes = await schedule([job('a'), job('b', { after: ['a'] })], async (j) => {
      ran.push(j.id)
      return j.id === 'a' ? { status: 'failed', error: 'x' } : { status: 'ok' }
    })
    expect(ran).toEqual(['a', 'b'])
    expect(outcomes.get('b')).toEqual({ status: 'ok' })
  })

  it('turns a thrown error into a failed outcome', async () => {
    const outcomes = await schedule([job('a')], async () => {
      throw new Error('boom')
    })
    expect(outcomes.get('a')).toEqual({ status: 'failed', error: 'boom' })
  })

  it('skips jobs in a cycle or with an unknown prerequisite instead of hanging', async () => {
    const outcomes = await schedule(
      [job('a', { deps: ['b'] }), job('b', { deps: ['a'] }), job('c', { deps: ['nope'] })],
      async () => ({ status: 'ok' }),
    )
    expect(outcomes.get('a')).toMatchObject({ status: 'skipped', code: 'unschedulable', reason: 'dependency cycle' })
    expect(outcomes.get('b')).toMatchObject({ status: 'skipped', code: 'unschedulable' })
    expect(outcomes.get('c')).toMatchObject({ status: 'skipped', reason: 'unknown prerequisite nope' })
  })

  it('stops starting jobs once aborted and reports the rest as cancelled', async () => {
    const controller = new AbortController()
    const ran: string[] = []
    const jobs = ['a', 'b', 'c'].map((id) => job(id, { slots: [{ key: 'node:pve1', limit: 1 }] }))
    const outcomes = await schedule(
      jobs,
      async (j) => {
        ran.push(j.id)
        if (j.id === 'a') controller.abort()
        await tick()
        return { status: 'ok' }
      },
      { signal: controller.signal },
    )
    expect(ran).toEqual(['a'])
    expect(outcomes.get('a')).toEqual({ status: 'ok' })
    expect(outcomes.get('b')).toMatchObject({ status: 'skipped', code: 'cancelled' })
    expect(outcomes.get('c')).toMatchObject({ status: 'skipped', code: 'cancelled' })
  })

  it('never exceeds a slot limit, respects every dependency, and gives every job one outcome (property)', async () => {
    const arb = fc
      .array(
        fc.record({
          node: fc.integer({ min: 0, max: 2 }),
          dep: fc.option(fc.nat(20)),
          after: fc.option(fc.nat(20)),
          fail: fc.boolean(),
          delay: fc.nat(3),
        }),
        {
          minLength: 1,
          maxLength: 20,
        },
      )
      .map((specs) =>
        specs.map((s, i) => ({
          job: job(`j${i}`, {
            // prerequisites only point backwards, like a plan in dependency order
            deps: s.dep !== null && s.dep < i ? [`j${s.dep}`] : [],
            after: s.after !== null && s.after < i ? [`j${s.after}`] : [],
            slots: [{ key: `node:${s.node}`, limit: 2 }],
          }),
          fail: s.fail,
          delay: s.delay,
        })),
      )
    await fc.assert(
      fc.asyncProperty(arb, async (specs) => {
        const inUse = new Map<string, number>()
        const finished = new Set<string>()
        const spec = new Map(specs.map((s) => [s.job.id, s]))
        const outcomes = await schedule(
          specs.map((s) => s.job),
          async (j): Promise<Outcome> => {
            for (const id of [...j.deps, ...j.after]) expect(finished.has(id)).toBe(true)
            const key = j.slots[0]!.key
            inUse.set(key, (inUse.get(key) ?? 0) + 1)
            expect(inUse.get(key)).toBeLessThanOrEqual(2)
            await tick(spec.get(j.id)!.delay)
            inUse.set(key, inUse.get(key)! - 1)
            finished.add(j.id)
            return spec.get(j.id)!.fail ? { status: 'failed', error: 'x' } : { status: 'ok' }
          },
        )
        expect(outcomes.size).toBe(specs.length)
        for (const s of specs) {
          const depFailed = s.job.deps.some((d) => outcomes.get(d)!.status !== 'ok')
          expect(outcomes.get(s.job.id)!.status === 'skipped').toBe(depFailed)
        }
      }),
      { numRuns: 40 },
    )
  })

  it('runs independent jobs in parallel up to the limit', async () => {
    let inFlight = 0
    let peak = 0
    await schedule(
      ['a', 'b', 'c', 'd'].map((id) => job(id, { slots: [{ key: 'node:pve1', limit: 2 }] })),
      async () => {
        inFlight++
        peak = Math.max(peak, inFlight)
        await tick(2)
        inFlight--
        return { status: 'ok' }
      },
    )
    expect(peak).toBe(2)
  })
})
