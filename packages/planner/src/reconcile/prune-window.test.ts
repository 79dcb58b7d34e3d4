import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { PruneWindowBudget } from './prune-window.js'

describe('PruneWindowBudget', () => {
  it('caps deletions within the window and frees them as time passes', () => {
    const w = new PruneWindowBudget({ max: 10, periodMs: 3_600_000 })
    expect(w.cycleBudget('a', 3, 0)).toBe(3)
    w.record('a', 8, 1_000)
    expect(w.cycleBudget('a', 3, 2_000)).toBe(2)
    expect(w.cycleBudget('a', 'unlimited', 2_000)).toBe(2)
    expect(w.cycleBudget('b', 3, 2_000)).toBe(3)
    w.record('a', 2, 2_000)
    expect(w.cycleBudget('a', 3, 3_000)).toBe(0)
    expect(w.cycleBudget('a', 3, 3_601_000)).toBe(3)
    expect(w.cycleBudget('a', 0, 0)).toBe(0)
  })

  it('a deletion leaves the window exactly one period later; one recorded after now does not count yet', () => {
    const w = new PruneWindowBudget({ max: 3, periodMs: 1_000 })
    w.record('a', 1, 5_000)
    expect(w.remaining('a', 5_999)).toBe(2)
    expect(w.remaining('a', 6_000)).toBe(3)
    const later = new PruneWindowBudget({ max: 3, periodMs: 1_000 })
    later.record('a', 2, 5_000)
    // a clock that went back (another host's time): what it has not reached yet does not count
    expect(later.remaining('a', 4_999)).toBe(3)
  })

  it('records nothing for no or a negative count, and never reports a negative remainder', () => {
    const w = new PruneWindowBudget({ max: 2, periodMs: 1_000 })
    w.record('a', 0, 10)
    w.record('a', -3, 10)
    expect(w.remaining('a', 10)).toBe(2)
    w.record('a', 5, 10)
    expect(w.remaining('a', 10)).toBe(0)
    expect(w.cycleBudget('a', 'unlimited', 10)).toBe(0)
    w.record('a', 1, 20)
    expect(w.remaining('a', 1_015)).toBe(1)
  })

  test.prop(
    [
      fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 600_000 })), { maxLength: 40 }),
      fc.integer({ min: 0, max: 20 }),
    ],
    {
      numRuns: 200,
    },
  )('never lets more than max deletions into any window when callers respect cycleBudget', (steps, max) => {
    const period = 300_000
    const w = new PruneWindowBudget({ max, periodMs: period })
    const done: number[] = []
    let now = 0
    for (const [want, gap] of steps) {
      now += gap
      const budget = w.cycleBudget('c', want, now)
      const take = Math.min(want, budget === 'unlimited' ? want : budget)
      expect(budget).not.toBe('unlimited')
      w.record('c', take, now)
      for (let i = 0; i < take; i++) done.push(now)
      const inWindow = done.filter((t) => t > now - period).length
      expect(inWindow).toBeLessThanOrEqual(max)
    }
  })
})
