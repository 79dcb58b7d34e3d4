import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { CYCLE_LOCK, acquireLock, isHeld, systemProbe, tryLock, waitForLock, type ProcessProbe } from './lock.js'

const tmp = (): string => mkdtempSync(path.join(os.tmpdir(), 'proxops-lock-'))

describe('acquireLock', () => {
  it('is exclusive while held, released on demand, and takes over a stale lock', () => {
    const dir = tmp()
    const lock = acquireLock(dir)
    expect(readFileSync(lock.file, 'utf8').split('\n')[0]).toBe(String(process.pid))
    // another live proxops process holding it refuses (the stamp in the file is that process's)
    const holder: ProcessProbe = {
      alive: () => true,
      startStamp: (pid) => `t${pid}`,
      commandLine: () => 'node proxops run',
    }
    writeFileSync(lock.file, `4242\nt4242\n`)
    expect(() => acquireLock(dir, 4343, holder)).toThrow(/another proxops daemon \(pid 4242\) holds/)
    writeFileSync(lock.file, `${process.pid}\n`)
    lock.release()
    expect(existsSync(lock.file)).toBe(false)
    // a dead pid is stale
    writeFileSync(path.join(dir, 'proxops.lock'), '999999999\n')
    const again = acquireLock(dir)
    expect(existsSync(again.file)).toBe(true)
    again.release()
  })

  it('breaks a stale lock under its break lock: while another process breaks it, it is not taken', () => {
    const dir = tmp()
    const file = path.join(dir, CYCLE_LOCK)
    const probe: ProcessProbe = {
      alive: (pid) => pid !== 999,
      startStamp: (pid) => `t${pid}`,
      commandLine: () => 'node proxops apply',
    }
    writeFileSync(file, '999\nt999\n')
    // a live process (4242) is breaking the stale lock right now: the breaker takes it, we do not
    writeFileSync(`${file}.break`, '4242\nt4242\n')
    expect(tryLock(dir, CYCLE_LOCK, 4343, probe)).toEqual({ file, holder: 4242 })
    expect(readFileSync(file, 'utf8')).toBe('999\nt999\n')
    // a break lock left by a dead process is itself stale
    writeFileSync(`${file}.break`, '999\nt999\n')
    const lock = tryLock(dir, CYCLE_LOCK, 4343, probe)
    expect(isHeld(lock)).toBe(false)
    expect(readFileSync(file, 'utf8')).toBe('4343\nt4343\n')
    expect(existsSync(`${file}.break`)).toBe(false)
    expect(tryLock(dir, CYCLE_LOCK, 4444, probe)).toEqual({ file, holder: 4343 })
  })

  it('waitForLock: gets a lock released meanwhile, or says who still holds it when the time is up', async () => {
    const dir = tmp()
    const file = path.join(dir, CYCLE_LOCK)
    const other = spawn('sleep', ['30'], { stdio: 'ignore' })
    await new Promise((r) => other.once('spawn', r))
    try {
      writeFileSync(file, `${other.pid}\n${systemProbe.startStamp(other.pid as number) ?? ''}\n`)
      const waits: number[] = []
      const held = await waitForLock(dir, CYCLE_LOCK, { waitMs: 50, stepMs: 10, onWait: (h) => waits.push(h.holder) })
      expect(held).toEqual({ file, holder: other.pid })
      expect(waits).toEqual([other.pid])
      setTimeout(() => other.kill('SIGKILL'), 30)
      const lock = await waitForLock(dir, CYCLE_LOCK, { waitMs: 20_000, stepMs: 10 })
      expect(isHeld(lock)).toBe(false)
      expect(readFileSync(file, 'utf8').split('\n')[0]).toBe(String(process.pid))
    } finally {
      other.kill()
    }
  })

  it('takes over a lock whose pid now belongs to a process that started later (pid reuse)', () => {
    const dir = tmp()
    const probe: ProcessProbe = {
      alive: () => true,
      startStamp: (pid) => (pid === 4242 ? 'later' : 'mine'),
      commandLine: () => 'node proxops run',
    }
    writeFileSync(path.join(dir, 'proxops.lock'), '4242\nearlier\n')
    const lock = acquireLock(dir, 4343, probe)
    expect(readFileSync(lock.file, 'utf8')).toBe('4343\nmine\n')
    lock.release()
  })

  it('a lock without a stamp is held only by a process whose command line is proxops', () => {
    const dir = tmp()
    const other: ProcessProbe = { alive: () => true, startStamp: () => undefined, commandLine: () => 'sleep 100' }
    writeFileSync(path.join(dir, 'proxops.lock'), '4242\n')
    acquireLock(dir, 4343, other).release()
    const daemon: ProcessProbe = { ...other, commandLine: () => '/usr/bin/node /opt/proxops/dist/bin.js run' }
    writeFileSync(path.join(dir, 'proxops.lock'), '4242\n')
    expect(() => acquireLock(dir, 4343, daemon)).toThrow(/pid 4242/)
  })

  it.runIf(existsSync('/proc/self/stat'))(
    'reads a real process: start stamps differ between processes and are stable',
    async () => {
      const child = spawn('sleep', ['30'], { stdio: 'ignore' })
      try {
        await new Promise((r) => child.once('spawn', r))
        const pid = child.pid as number
        expect(systemProbe.alive(pid)).toBe(true)
        expect(systemProbe.startStamp(pid)).toMatch(/^\d+$/)
        expect(systemProbe.startStamp(pid)).toBe(systemProbe.startStamp(pid))
        expect(systemProbe.commandLine(pid)).toBe('sleep 30')
        // a lock naming the sleep's pid with another stamp (the daemon that died) is taken over
        const dir = tmp()
        writeFileSync(path.join(dir, 'proxops.lock'), `${pid}\n1\n`)
        acquireLock(dir).release()
      } finally {
        child.kill()
      }
    },
  )
})
