import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { Limiter, mapLimit } from './limit.js'

const tick = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

describe('mapLimit', () => {
  test.prop([fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 40 }), fc.integer({ min: 1, max: 10 })], {
    numRuns: 100,
  })('keeps input order and never has more than `limit` calls pending', async (delays, limit) => {
    let pending = 0
    let peak = 0
    const out = await mapLimit(delays, limit, async (d, i) => {
      pending++
      peak = Math.max(peak, pending)
      await tick(d)
      pending--
      return `${i}:${d}`
    })
    expect(out).toEqual(delays.map((d, i) => `${i}:${d}`))
    expect(peak).toBeLessThanOrEqual(limit)
    if (delays.length > 0) expect(peak).toBeGreaterThanOrEqual(1)
  })

  it('runs calls in parallel up to the limit', async () => {
    let peak = 0
    let pending = 0
    await mapLimit([1, 1, 1, 1, 1, 1], 4, async () => {
      peak = Math.max(peak, ++pending)
      await tick(5)
      pending--
    })
    expect(peak).toBe(4)
  })

  it('rejects with the first failure and starts nothing after it', async () => {
    const started: number[] = []
    const run = mapLimit([0, 1, 2, 3, 4, 5], 2, async (x) => {
      started.push(x)
      await tick(x === 1 ? 1 : 10)
      if (x === 1) throw new Error('boom')
      return x
    })
    await expect(run).rejects.toThrow('boom')
    await tick(30)
    expect(started).toEqual([0, 1])
  })

  it('returns an empty list for no items', async () => {
    expect(await mapLimit([], 8, async () => 1)).toEqual([])
  })
})

describe('Limiter', () => {
  it('never lets more than the limit run, and serves waiters', async () => {
    const lim = new Limiter(3)
    let active = 0
    let peak = 0
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        const release = await lim.acquire()
        active++
        peak = Math.max(peak, active)
        await new Promise((r) => setTimeout(r, 2))
        active--
        release()
      }),
    )
    expect(peak).toBe(3)
    expect(lim.active).toBe(0)
  })

  it('an aborted waiter leaves the queue', async () => {
    const lim = new Limiter(1)
    const release = await lim.acquire()
    const ac = new AbortController()
    const waiting = lim.acquire(ac.signal)
    ac.abort()
    await expect(waiting).rejects.toBeDefined()
    release()
    const again = await lim.acquire()
    expect(lim.active).toBe(1)
    again()
  })
})
