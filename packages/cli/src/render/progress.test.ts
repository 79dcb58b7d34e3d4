import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { PassThrough } from 'node:stream'
import type { ProgressEvent } from '@proxops/planner'
import { paint } from './color.js'
import { fixturePlan } from './fixtures.test-support.js'
import { applyProgress, noticeLine, renderBlock, retryLine, type BlockState } from './progress.js'

const p = paint(false)
const action = fixturePlan().actions[0]!

function state(over: Partial<BlockState> = {}): BlockState {
  return { cluster: 'lab', total: 5, running: new Map(), ok: 0, failed: 0, skipped: 0, ...over }
}

describe('the live block', () => {
  it('shows the counts and each running action with its elapsed time', () => {
    const running = new Map([
      ['a', { label: 'VM/pve1/100(web) create', since: 1_000 }],
      ['b', { label: 'VM/pve2/101(db) update', since: 4_000, note: 'retry 2 of 4' }],
    ])
    expect(renderBlock(state({ running, ok: 1, failed: 1 }), 16_500, p)).toBe(
      [
        'Applying to cluster lab: 1 done, 1 failed, 0 skipped, 2 running, 1 queued',
        '  VM/pve1/100(web) create  16s',
        '  VM/pve2/101(db) update  13s  (retry 2 of 4)',
      ].join('\n'),
    )
    expect(renderBlock(state(), 0, p)).toBe('Applying to cluster lab: 0 done, 0 failed, 0 skipped, 0 running, 5 queued')
  })
  test.prop([fc.nat(20), fc.nat(20), fc.nat(20), fc.nat(20), fc.nat(20)])(
    'its counts add up to the plan',
    (ok, failed, skipped, running, queued) => {
      const map = new Map(Array.from({ length: running }, (_, i) => [String(i), { label: `a${i}`, since: 0 }]))
      const total = ok + failed + skipped + running + queued
      const head = renderBlock(state({ total, ok, failed, skipped, running: map }), 0, p).split('\n')[0]!
      const numbers = [...head.matchAll(/(\d+) (done|failed|skipped|running|queued)/g)].map((m) => Number(m[1]))
      expect(numbers).toEqual([ok, failed, skipped, running, queued])
      expect(numbers.reduce((a, b) => a + b, 0)).toBe(total)
    },
  )
})

describe('retries and waits', () => {
  it('are one line each, naming the request once', () => {
    expect(
      noticeLine({
        type: 'retry',
        method: 'GET',
        path: '/cluster/resources',
        attempt: 2,
        attempts: 3,
        delayMs: 250,
        reason: 'GET /cluster/resources: 503 Service Unavailable',
      }),
    ).toBe('  retry   GET /cluster/resources (attempt 2 of 3 in 0.3s): 503 Service Unavailable')
    expect(noticeLine({ type: 'waiting', method: 'POST', path: '/x', elapsedMs: 5000, timeoutMs: 30_000 })).toBe(
      '  waiting POST /x: no answer for 5s (gives up at 30s)',
    )
    expect(
      retryLine({ type: 'retry', action, attempt: 3, attempts: 4, delayMs: 2000, reason: "update: can't lock file" }),
    ).toBe(`  retry   ${action.address} ${action.type} (attempt 3 of 4 in 2s): update: can't lock file`)
  })
})

describe('without a terminal', () => {
  it('writes plain lines, through the redactor', async () => {
    const stream = new PassThrough()
    let text = ''
    stream.on('data', (c: Buffer) => (text += c.toString()))
    const view = await applyProgress({
      cluster: 'lab',
      total: 1,
      stream,
      paint: p,
      now: () => 0,
      clean: (t) => t.replace('secret', '(sensitive)'),
    })
    const events: ProgressEvent[] = [
      { type: 'action-started', action },
      { type: 'retry', action, attempt: 2, attempts: 4, delayMs: 1000, reason: 'locked secret' },
    ]
    for (const e of events) view.onProgress(e)
    view.onNotice({ type: 'waiting', method: 'GET', path: '/version', elapsedMs: 5000, timeoutMs: 30_000 })
    view.close()
    expect(text.split('\n')).toEqual([
      `  start   ${action.address} ${action.type}`,
      `  retry   ${action.address} ${action.type} (attempt 2 of 4 in 1s): locked (sensitive)`,
      '  waiting GET /version: no answer for 5s (gives up at 30s)',
      '',
    ])
  })
})
