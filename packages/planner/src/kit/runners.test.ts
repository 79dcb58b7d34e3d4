import { describe, expect, it } from 'vitest'
import { backupJobRunners } from '../kinds/backup-job/run.js'
import type { PveWriter } from '../ports.js'
import { ActionFailure, write, type ActionContext, type RequestRun } from './runners.js'

// what PVE's cfs_lock_file answers when another writer holds the cluster file's lock (PVE::Cluster::cfs_lock)
const LOCKED = "cfs-lock 'file-jobs_cfg' error: got lock request timeout"

function context(over: Partial<ActionContext> = {}): ActionContext & { retries: string[]; slept: number[] } {
  const retries: string[] = []
  const slept: number[] = []
  return {
    writer: {} as PveWriter,
    reader: {} as ActionContext['reader'],
    secrets: undefined,
    taskTimeoutMs: 1000,
    downloadTimeoutMs: 1000,
    lockRetries: 3,
    lockRetryDelayMs: 10,
    confirmAttempts: 1,
    confirmDelayMs: 0,
    progressIntervalMs: 60_000,
    taskPollIntervalMs: 0,
    sleep: (ms) => {
      slept.push(ms)
      return Promise.resolve()
    },
    now: () => 0,
    onRetry: (attempt, delayMs, reason) => retries.push(`${attempt} ${delayMs} ${reason}`),
    ...over,
    retries,
    slept,
  }
}

/** a send that fails `n` times with `message`, then answers */
function failing(n: number, message: string): { send: () => Promise<unknown>; calls: () => number } {
  let calls = 0
  return {
    send: () => (++calls <= n ? Promise.reject(new Error(message)) : Promise.resolve(null)),
    calls: () => calls,
  }
}

describe('write: one synchronous PVE write', () => {
  it("retries PVE's lock timeout with bounded backoff and says so before each wait", async () => {
    const ctx = context()
    const s = failing(2, LOCKED)
    await write('create pool web', ctx, s.send)
    expect(s.calls()).toBe(3)
    expect(ctx.slept).toEqual([10, 20])
    expect(ctx.retries).toEqual([`2 10 create pool web: ${LOCKED}`, `3 20 create pool web: ${LOCKED}`])
  })

  it('gives up after lockRetries with PVE text, and never retries a refusal', async () => {
    const ctx = context({ lockRetries: 1 })
    const locked = failing(5, LOCKED)
    await expect(write('update', ctx, locked.send)).rejects.toThrow(new ActionFailure(`update failed: ${LOCKED}`))
    expect(locked.calls()).toBe(2)
    const refused = failing(5, "pool 'web' already exists")
    await expect(write('create pool web', context(), refused.send)).rejects.toThrow(
      "create pool web failed: pool 'web' already exists",
    )
    expect(refused.calls()).toBe(1)
  })

  it('a backup job write is retried on a lock timeout as a pool write is (one helper for both)', async () => {
    const s = failing(1, LOCKED)
    const ctx = context({ writer: { createBackupJob: s.send } as unknown as PveWriter })
    const run: RequestRun = { ctx, tasks: [], secrets: [], notes: [] }
    await backupJobRunners.createBackupJob({ call: 'createBackupJob', params: { id: 'nightly' } }, run)
    expect(s.calls()).toBe(2)
    expect(ctx.retries).toHaveLength(1)
  })
})
