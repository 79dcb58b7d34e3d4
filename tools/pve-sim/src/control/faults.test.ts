import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FaultState } from './faults.js'

describe('fault state', () => {
  it('fails exactly the next N matching requests', () => {
    const f = new FaultState()
    f.failNext({ status: 596, count: 2, method: 'PUT', path: '/nodes/{node}/qemu/{vmid}/config' })
    expect(f.decide('GET', '/nodes/pve1/qemu/100/config', '/nodes/{node}/qemu/{vmid}/config').failure).toBeUndefined()
    expect(f.decide('PUT', '/nodes/pve1/qemu/100/config', '/nodes/{node}/qemu/{vmid}/config').failure).toEqual({
      status: 596,
      message: 'Connection timed out',
    })
    expect(f.decide('PUT', '/nodes/pve1/qemu/101/config', '/nodes/{node}/qemu/{vmid}/config').failure).toMatchObject({
      status: 596,
    })
    expect(f.decide('PUT', '/nodes/pve1/qemu/100/config', '/nodes/{node}/qemu/{vmid}/config').failure).toBeUndefined()
    expect(f.pendingBursts()).toBe(0)
  })

  it('matches concrete paths and regexps; default count 1, custom message', () => {
    const f = new FaultState()
    f.failNext({ status: 500, path: /\/cluster\//, message: 'boom' })
    expect(f.decide('GET', '/version', '/version').failure).toBeUndefined()
    expect(f.decide('GET', '/cluster/resources', '/cluster/resources').failure).toEqual({
      status: 500,
      message: 'boom',
    })
    expect(f.decide('GET', '/cluster/resources', '/cluster/resources').failure).toBeUndefined()
  })

  it('adds up matching latency rules; setLatency(0) clears', () => {
    const f = new FaultState()
    f.setLatency(100)
    f.setLatency({ ms: 50, method: 'GET' })
    expect(f.decide('GET', '/x', undefined).delayMs).toBe(150)
    expect(f.decide('POST', '/x', undefined).delayMs).toBe(100)
    f.setLatency(0)
    expect(f.decide('GET', '/x', undefined).delayMs).toBe(0)
  })

  it('refuses statuses that are not errors, and status together with network', () => {
    expect(() => new FaultState().failNext({ status: 200 })).toThrow(/400\.\.599/)
    expect(() => new FaultState().failNext({})).toThrow(/400\.\.599/)
    expect(() => new FaultState().failNext({ status: 500, network: 'reset' })).toThrow(/not both/)
  })

  it('network failures: reset or hang instead of an answer', () => {
    const f = new FaultState()
    f.failNext({ network: 'reset', path: '/version' })
    expect(f.decide('GET', '/version', '/version').failure).toEqual({ network: 'reset' })
    expect(f.decide('GET', '/version', '/version').failure).toBeUndefined()
  })

  it('a burst of N fails exactly N of the matching requests, the first N (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.array(fc.constantFrom('GET', 'PUT'), { maxLength: 40 }),
        (n, methods) => {
          const f = new FaultState()
          if (n > 0) f.failNext({ status: 500, count: n, method: 'PUT' })
          const failed = methods.map((m) => f.decide(m, '/x', undefined).failure !== undefined)
          const puts = methods.map((m, i) => (m === 'PUT' ? i : -1)).filter((i) => i >= 0)
          const expected = new Set(puts.slice(0, n))
          failed.forEach((x, i) => expect(x).toBe(expected.has(i)))
        },
      ),
      { numRuns: 200 },
    )
  })
})
