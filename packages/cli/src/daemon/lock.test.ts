import { describe, expect, it } from 'vitest'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { acquireLock } from './lock.js'

describe('acquireLock', () => {
  it('is exclusive while held, released on demand, and takes over a stale lock', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'proxops-lock-'))
    const lock = acquireLock(dir)
    // another live process (our parent) holding it refuses
    writeFileSync(lock.file, `${process.ppid}\n`)
    expect(() => acquireLock(dir, process.pid + 100000)).toThrow(/another proxops daemon \(pid \d+\) holds/)
    writeFileSync(lock.file, `${process.pid}\n`)
    lock.release()
    expect(existsSync(lock.file)).toBe(false)
    // a dead pid is stale
    writeFileSync(path.join(dir, 'proxops.lock'), '999999999\n')
    const again = acquireLock(dir)
    expect(existsSync(again.file)).toBe(true)
    again.release()
  })
})
