/**
 * Single-instance lock for the daemon: `<data-dir>/proxops.lock` created exclusively, holding our pid.
 * A lock whose pid is no longer alive is stale and taken over; a live one refuses to start.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { CliError } from '../errors.js'

export interface Lock {
  file: string
  release(): void
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export function acquireLock(dataDir: string, pid = process.pid): Lock {
  mkdirSync(dataDir, { recursive: true })
  const file = path.join(dataDir, 'proxops.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${pid}\n`, { flag: 'wx', mode: 0o600 })
      let released = false
      return {
        file,
        release: () => {
          if (released) return
          released = true
          try {
            if (readFileSync(file, 'utf8').trim() === String(pid)) rmSync(file)
          } catch {
            // already gone
          }
        },
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = Number.parseInt(readFileSync(file, 'utf8').trim(), 10)
      if (Number.isInteger(holder) && holder !== pid && alive(holder)) {
        throw new CliError('LOCKED', `another proxops daemon (pid ${holder}) holds ${file}; stop it first`)
      }
      rmSync(file, { force: true })
    }
  }
  throw new CliError('LOCKED', `cannot take the lock ${file}`)
}
