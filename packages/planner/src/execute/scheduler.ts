/**
 * A small DAG scheduler: runs jobs in list order as soon as their prerequisites have finished and a slot
 * is free under every limit the job names. Generic on purpose (execute() maps plan actions onto it), so its
 * rules are testable on their own:
 *   - `deps`: hard prerequisites; a job whose dep did not end `ok` is skipped as deferred, never run
 *   - `after`: ordering only; the job waits for them to finish, whatever their outcome
 *   - `slots`: keys with limits (e.g. `node:pve1` at 2); a job holds one unit of each while it runs
 *   - once `signal` aborts, no new job starts; jobs not started end `skipped` (cancelled)
 *   - a job that is not ready and never can be (a cycle, an unknown prerequisite) ends skipped, never hangs
 */

export interface Job {
  id: string
  deps: readonly string[]
  after: readonly string[]
  slots: readonly { key: string; limit: number }[]
}

export type Outcome =
  { status: 'ok' } | { status: 'failed'; error: string } | { status: 'skipped'; code: SkipReasonCode; reason: string }

export type SkipReasonCode = 'deferred' | 'cancelled' | 'unschedulable' | 'refused' | 'disruption'

export interface ScheduleOptions {
  signal?: AbortSignal
  /** called when a job ends without running (deferred, cancelled, unschedulable) */
  onSkip?: (job: Job, outcome: Outcome & { status: 'skipped' }) => void
}

export async function schedule(
  jobs: readonly Job[],
  run: (job: Job) => Promise<Outcome>,
  options: ScheduleOptions = {},
): Promise<Map<string, Outcome>> {
  const ids = new Set(jobs.map((j) => j.id))
  if (ids.size !== jobs.length) throw new Error('schedule: duplicate job ids')
  const outcomes = new Map<string, Outcome>()
  const waiting = [...jobs]
  const running = new Map<string, Promise<void>>()
  const used = new Map<string, number>()

  const finish = (job: Job, outcome: Outcome): void => {
    outcomes.set(job.id, outcome)
    if (outcome.status === 'skipped') options.onSkip?.(job, outcome)
  }

  for (;;) {
    let progressed = false
    for (let i = 0; i < waiting.length; i++) {
      const job = waiting[i]!
      if (options.signal?.aborted) {
        finish(job, { status: 'skipped', code: 'cancelled', reason: 'cancelled before it started' })
      } else {
        const unknown = [...job.deps, ...job.after].find((id) => !ids.has(id))
        if (unknown !== undefined) {
          finish(job, { status: 'skipped', code: 'unschedulable', reason: `unknown prerequisite ${unknown}` })
        } else {
          if (![...job.deps, ...job.after].every((id) => outcomes.has(id))) continue
          const failedDep = job.deps.find((id) => outcomes.get(id)!.status !== 'ok')
          if (failedDep !== undefined) {
            const dep = outcomes.get(failedDep)!
            const what = dep.status === 'failed' ? 'failed' : 'was skipped'
            finish(job, { status: 'skipped', code: 'deferred', reason: `deferred: prerequisite ${failedDep} ${what}` })
          } else {
            if (!job.slots.every((s) => (used.get(s.key) ?? 0) < s.limit)) continue
            for (const s of job.slots) used.set(s.key, (used.get(s.key) ?? 0) + 1)
            running.set(
              job.id,
              run(job)
                .catch((error: unknown): Outcome => ({
                  status: 'failed',
                  error: error instanceof Error ? error.message : String(error),
                }))
                .then((outcome) => {
                  for (const s of job.slots) used.set(s.key, used.get(s.key)! - 1)
                  running.delete(job.id)
                  finish(job, outcome)
                }),
            )
          }
        }
      }
      waiting.splice(i, 1)
      i--
      progressed = true
    }
    if (waiting.length === 0 && running.size === 0) break
    if (running.size > 0) {
      await Promise.race(running.values())
      continue
    }
    if (!progressed) {
      // nothing runs and nothing can start: the rest waits on each other (a cycle)
      for (const job of waiting) finish(job, { status: 'skipped', code: 'unschedulable', reason: 'dependency cycle' })
      break
    }
  }
  return outcomes
}
