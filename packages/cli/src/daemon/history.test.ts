import { describe, expect } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { CycleHistory, summarise } from './history.js'
import { cycle } from './status-page.test-support.js'

describe('CycleHistory', () => {
  test.prop([fc.integer({ min: 1, max: 8 }), fc.array(fc.constantFrom('lab', 'edge'), { maxLength: 40 })])(
    'keeps the newest `limit` cycles of each cluster, the newest first, and nothing else',
    (limit, clusters) => {
      const history = new CycleHistory(limit)
      const all = clusters.map((cluster, i) =>
        cycle({ cluster, finishedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() }),
      )
      for (const c of all) history.record(c)
      for (const cluster of ['lab', 'edge']) {
        const expected = all
          .filter((c) => c.cluster === cluster)
          .reverse()
          .slice(0, limit)
          .map(summarise)
        expect(history.of(cluster)).toEqual(expected)
      }
    },
  )

  test.prop([fc.integer({ max: 0 })])('refuses a limit below 1', (limit) => {
    expect(() => new CycleHistory(limit)).toThrow(RangeError)
  })
})
