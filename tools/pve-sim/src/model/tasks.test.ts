import { describe, expect, it } from 'vitest'
import { Rng } from './rng.js'
import { TaskManager } from './tasks.js'

describe('TaskManager', () => {
  // PVE's fork_worker returns the UPID to the caller before the worker's code runs; a task's work may
  // name its own UPID (e.g. a lock held by that task), however short the task is
  it('never runs a task inside dispatch(): a zero-length task whose work reads its UPID ends OK', () => {
    let now = 1_000_000
    const tasks = new TaskManager(new Rng(1), () => now, 0)
    let seen: string | undefined
    const upid: string = tasks.dispatch('pve1', 'vzstart', '100', 'root@pam', { run: () => (seen = upid) }, 1000)
    expect(tasks.peek(upid)?.status).toBe('running')
    now += 1
    const done = tasks.get(upid)
    expect(done?.exitstatus).toBe('OK')
    expect(seen).toBe(upid)
  })

  it('finishes earlier due tasks before a new one starts, in the order they end', () => {
    let now = 1_000_000
    const tasks = new TaskManager(new Rng(2), () => now, 10)
    const order: string[] = []
    tasks.dispatch('pve1', 'qmstart', '101', 'root@pam', { durationMs: 20, run: () => order.push('b') }, 1000)
    tasks.dispatch('pve1', 'qmstart', '100', 'root@pam', { durationMs: 5, run: () => order.push('a') }, 1000)
    now += 30
    tasks.dispatch('pve1', 'qmstart', '102', 'root@pam', { run: () => order.push('c') }, 1000)
    expect(order).toEqual(['a', 'b'])
  })
})
