import { describe, expect, it } from 'vitest'
import { Wakeup } from './wakeup.js'

describe('Wakeup', () => {
  it('a request ends the wait at once; requests add up; one for every cluster covers them all', async () => {
    const w = new Wakeup()
    const stop = new AbortController()
    let woke = false
    const waiting = w.wait(3_600_000, stop.signal).then(() => (woke = true))
    w.request(['lab'])
    await waiting
    expect(woke).toBe(true)
    w.request(['edge'])
    expect(w.take()).toEqual(new Set(['lab', 'edge']))
    expect(w.take()).toBeUndefined()
    w.request(['lab'])
    w.request()
    w.request(['edge'])
    expect(w.take()).toBe('all')
  })

  it('a request made while no one waits is kept: the next wait returns at once; a stop ends it too', async () => {
    const w = new Wakeup()
    const stop = new AbortController()
    w.request()
    await w.wait(3_600_000, stop.signal)
    expect(w.take()).toBe('all')
    const waiting = w.wait(3_600_000, stop.signal)
    stop.abort()
    await waiting
    expect(w.take()).toBeUndefined()
  })
})
