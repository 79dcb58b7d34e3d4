import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { backoffDelay, retryOnLockTimeout, sleep } from './retry.js'
import { PveError, PveTaskFailedError } from './errors.js'

const lockTimeout = () => new PveError('PVE_LOCK_TIMEOUT', "can't lock file 'x' - got timeout")

describe('backoff', () => {
  test.prop([fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 0.999999, noNaN: true })], { numRuns: 200 })(
    'is exponential, capped and jittered within [50%, 100%] of the step',
    (n, r) => {
      const d = backoffDelay(n, { baseDelayMs: 100, maxDelayMs: 3_000, random: () => r })
      const step = Math.min(3_000, 100 * 2 ** (n - 1))
      expect(d).toBeGreaterThanOrEqual(Math.floor(step * 0.5))
      expect(d).toBeLessThanOrEqual(step)
    },
  )

  it('sleep is cancellable', async () => {
    const ac = new AbortController()
    const p = sleep(10_000, ac.signal)
    ac.abort()
    await expect(p).rejects.toMatchObject({ code: 'PVE_ABORTED' })
  })
})

describe('retryOnLockTimeout', () => {
  it('repeats lock timeouts (HTTP or task) and returns the first success', async () => {
    let calls = 0
    const result = await retryOnLockTimeout(
      async () => {
        calls++
        if (calls === 1) throw lockTimeout()
        if (calls === 2) {
          const e = new PveTaskFailedError('PVE_TASK_FAILED', 'task failed')
          e.reason = 'PVE_LOCK_TIMEOUT'
          throw e
        }
        return 'done'
      },
      { baseDelayMs: 1, maxDelayMs: 2 },
    )
    expect(result).toBe('done')
    expect(calls).toBe(3)
  })

  it('gives up after the retries and never repeats other errors', async () => {
    let calls = 0
    await expect(
      retryOnLockTimeout(
        async () => {
          calls++
          throw lockTimeout()
        },
        { retries: 2, baseDelayMs: 1 },
      ),
    ).rejects.toMatchObject({
      code: 'PVE_LOCK_TIMEOUT',
    })
    expect(calls).toBe(3)
    calls = 0
    await expect(
      retryOnLockTimeout(async () => {
        calls++
        throw new PveError('PVE_LOCKED', 'VM is locked (clone)')
      }),
    ).rejects.toMatchObject({
      code: 'PVE_LOCKED',
    })
    expect(calls).toBe(1)
  })

  it('is cancellable while waiting', async () => {
    const ac = new AbortController()
    const p = retryOnLockTimeout(
      async () => {
        throw lockTimeout()
      },
      { baseDelayMs: 10_000, signal: ac.signal },
    )
    setTimeout(() => ac.abort(), 10)
    await expect(p).rejects.toMatchObject({ code: 'PVE_ABORTED' })
  })
})
