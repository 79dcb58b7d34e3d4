/**
 * The daemon's locks in the data dir, each a file created exclusively, holding our pid and the start time of our
 * process: `proxops.lock` (the leader: one daemon writes, a second one waits as a standby) and `cycle.lock` (one
 * writer at a time: the leader's tick or a manual `apply`). A lock whose process is gone (a SIGKILL included) is
 * stale and taken over; so is one whose pid now belongs to another program (the daemon died and the pid was
 * reused): the holder must be the same process, not only the same number.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { CliError } from '../errors.js'

export interface Lock {
  file: string
  release(): void
}

/** How the lock tells processes apart; the default reads /proc (Linux). Injectable for tests. */
export interface ProcessProbe {
  /** whether a process with this pid exists */
  alive(pid: number): boolean
  /** an opaque start stamp of the process (Linux: `starttime` of /proc/<pid>/stat), undefined when unknown */
  startStamp(pid: number): string | undefined
  /** its command line, undefined when unknown */
  commandLine(pid: number): string | undefined
}

export const systemProbe: ProcessProbe = {
  alive(pid) {
    try {
      process.kill(pid, 0)
      return true
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM'
    }
  },
  startStamp(pid) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      // the command name (field 2) may hold spaces and ')': fields are counted from the last ')'
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return fields[19] // field 22, starttime
    } catch {
      return undefined
    }
  },
  commandLine(pid) {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim()
    } catch {
      return undefined
    }
  },
}

/** Whether the process the lock names is still the daemon that wrote it. */
function holds(probe: ProcessProbe, pid: number, stamp: string | undefined): boolean {
  if (!probe.alive(pid)) return false
  const now = probe.startStamp(pid)
  if (stamp !== undefined && now !== undefined) return stamp === now
  // a lock without a stamp (older ProxOps) or a system without /proc: the command line, else the pid alone
  const cmd = probe.commandLine(pid)
  return cmd === undefined || /proxops/i.test(cmd)
}

/** The daemon's leader lock: held for the daemon's life; a second daemon on the data dir waits as a standby. */
export const LEADER_LOCK = 'proxops.lock'
/** The write lock: held by the daemon while a tick runs and by a manual `apply`, so that one writes at a time. */
export const CYCLE_LOCK = 'cycle.lock'

/** A lock another live process holds. */
export interface Held {
  file: string
  holder: number
}

function claim(file: string, pid: number, stamp: string | undefined): Lock {
  writeFileSync(file, `${pid}\n${stamp ?? ''}\n`, { flag: 'wx', mode: 0o600 })
  let released = false
  return {
    file,
    release: () => {
      if (released) return
      released = true
      try {
        if (readFileSync(file, 'utf8').split('\n')[0]?.trim() === String(pid)) rmSync(file)
      } catch {
        // already gone
      }
    },
  }
}

/** The live holder of `file`, or undefined when the file is gone or stale (its process died or is another one). */
function liveHolder(file: string, pid: number, probe: ProcessProbe): number | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
  const [pidLine = '', stampLine = ''] = text.split('\n')
  const holder = Number.parseInt(pidLine.trim(), 10)
  const holderStamp = stampLine.trim() === '' ? undefined : stampLine.trim()
  return Number.isInteger(holder) && holder !== pid && holds(probe, holder, holderStamp) ? holder : undefined
}

/**
 * Takes `<dataDir>/<name>` when it is free or stale; else says who holds it. A stale lock (its holder died, a
 * SIGKILL included) is broken under `<name>.break`, taken exclusively as well, so two processes that both find it
 * stale cannot both remove it and both create their own.
 */
export function tryLock(
  dataDir: string,
  name: string,
  pid = process.pid,
  probe: ProcessProbe = systemProbe,
): Lock | Held {
  mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, name)
  const stamp = probe.startStamp(pid)
  try {
    return claim(file, pid, stamp)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const holder = liveHolder(file, pid, probe)
  if (holder !== undefined) return { file, holder }
  const breakFile = `${file}.break`
  if (liveHolder(breakFile, pid, probe) === undefined) rmSync(breakFile, { force: true })
  let breaker: Lock
  try {
    breaker = claim(breakFile, pid, stamp)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    // another process is breaking it right now: it is the one that takes it
    return { file, holder: liveHolder(breakFile, pid, probe) ?? 0 }
  }
  try {
    // under the break lock: still stale (nobody took it meanwhile), so it is ours to remove
    const now = liveHolder(file, pid, probe)
    if (now !== undefined) return { file, holder: now }
    rmSync(file, { force: true })
    return claim(file, pid, stamp)
  } finally {
    breaker.release()
  }
}

export const isHeld = (lock: Lock | Held): lock is Held => 'holder' in lock

/** The daemon's leader lock, or an error naming its holder (a daemon that cannot wait as a standby). */
export function acquireLock(dataDir: string, pid = process.pid, probe: ProcessProbe = systemProbe): Lock {
  const lock = tryLock(dataDir, LEADER_LOCK, pid, probe)
  if (isHeld(lock))
    throw new CliError('LOCKED', `another proxops daemon (pid ${lock.holder}) holds ${lock.file}; stop it first`)
  return lock
}

/**
 * Waits for `name` until `waitMs` has passed (checking every `stepMs`); `onWait` hears once who holds it. Resolves
 * to the lock, or to who still holds it when the time is up or `signal` aborts.
 */
export async function waitForLock(
  dataDir: string,
  name: string,
  o: { waitMs: number; stepMs?: number; signal?: AbortSignal; onWait?: (held: Held) => void; now?: () => number },
): Promise<Lock | Held> {
  const now = o.now ?? Date.now
  const until = now() + o.waitMs
  let told = false
  for (;;) {
    const lock = tryLock(dataDir, name)
    if (!isHeld(lock) || now() >= until || o.signal?.aborted) return lock
    if (!told) o.onWait?.(lock)
    told = true
    await new Promise((resolve) => setTimeout(resolve, Math.min(o.stepMs ?? 200, Math.max(1, until - now()))))
  }
}
