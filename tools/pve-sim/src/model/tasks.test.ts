import { describe, expect, it } from 'vitest'
import { Rng } from './rng.js'
import { dumpLogfile, TaskManager } from './tasks.js'

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

describe('held tasks (control: a test releases a task instead of racing the clock)', () => {
  it('a held type stays running past its end, also through finishNow, and ends at the next settle once released', () => {
    let now = 1_000_000
    const tasks = new TaskManager(new Rng(3), () => now, 10)
    let ran = 0
    const upid = tasks.dispatch('pve1', 'qmmove', '100', 'root@pam', { run: () => ran++ }, 1000)
    tasks.setBehaviour('qmmove', { hold: true })
    now += 10_000
    expect(tasks.get(upid)?.status).toBe('running')
    tasks.finishNow(tasks.peek(upid)!)
    expect(tasks.peek(upid)?.status).toBe('running')
    // another type is not held
    const other = tasks.dispatch('pve1', 'qmstart', '101', 'root@pam', { run: () => {} }, 1000)
    now += 20
    expect(tasks.get(other)?.exitstatus).toBe('OK')
    tasks.setBehaviour('qmmove', undefined)
    expect(tasks.get(upid)?.exitstatus).toBe('OK')
    expect(ran).toBe(1)
  })
})

describe('dumpLogfile (pve-common PVE::Tools::dump_logfile)', () => {
  const lines = ['a', 'b', 'c']
  it('numbers lines from 1 and counts every line as the total', () => {
    expect(dumpLogfile(lines, 1, 1)).toEqual({ total: 3, page: [{ n: 2, t: 'b' }] })
  })
  it('limit 0 reads to the end (read_until_end)', () => {
    expect(dumpLogfile(lines, 1, 0)).toEqual({
      total: 3,
      page: [
        { n: 2, t: 'b' },
        { n: 3, t: 'c' },
      ],
    })
  })
  it('a start past the end reads nothing, the total still counts the lines', () => {
    expect(dumpLogfile(lines, 5, 50)).toEqual({ total: 3, page: [] })
  })
  it('an empty log is one `no content` line numbered 1 with a total of 1, wherever start points', () => {
    expect(dumpLogfile([], 7, 0)).toEqual({ total: 1, page: [{ n: 1, t: 'no content' }] })
  })
})
