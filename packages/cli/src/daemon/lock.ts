/**
 * Single-instance lock for the daemon: `<data-dir>/proxops.lock` created exclusively, holding our pid and
 * the start time of our process. A lock whose process is gone is stale and taken over; so is one whose pid
 * now belongs to another program (the daemon died and the pid was reused): the holder must be the same
 * process, not only the same number. A live holder refuses to start.
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

export function acquireLock(dataDir: string, pid = process.pid, probe: ProcessProbe = systemProbe): Lock {
  mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, 'proxops.lock')
  const stamp = probe.startStamp(pid)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
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
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const [pidLine = '', stampLine = ''] = readFileSync(file, 'utf8').split('\n')
      const holder = Number.parseInt(pidLine.trim(), 10)
      const holderStamp = stampLine.trim() === '' ? undefined : stampLine.trim()
      if (Number.isInteger(holder) && holder !== pid && holds(probe, holder, holderStamp)) {
        throw new CliError('LOCKED', `another proxops daemon (pid ${holder}) holds ${file}; stop it first`)
      }
      rmSync(file, { force: true })
    }
  }
  throw new CliError('LOCKED', `cannot take the lock ${file}`)
}
