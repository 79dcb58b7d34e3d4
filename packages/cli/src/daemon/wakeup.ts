/**
 * Asks the daemon's loop for a tick now (`POST /reconcile`, `proxops reconcile`, a push webhook) instead of at the
 * end of its poll interval. Requests made while a tick runs are kept: the next tick starts as soon as it ends.
 * Requests for some clusters add up; one for every cluster covers them all.
 */
export type Wanted = 'all' | ReadonlySet<string>

export class Wakeup {
  #pending: Set<string> | 'all' | undefined
  #wake: (() => void) | undefined

  /** a tick now, for these clusters (absent: every cluster) */
  request(clusters?: readonly string[]): void {
    if (clusters === undefined || this.#pending === 'all') this.#pending = 'all'
    else this.#pending = new Set([...(this.#pending ?? []), ...clusters])
    this.#wake?.()
  }

  /** what was asked since the last take (undefined: nothing: a timed tick, every cluster) */
  take(): Wanted | undefined {
    const p = this.#pending
    this.#pending = undefined
    return p
  }

  /** Resolves after `ms`, on `signal`, or at a request (at once when one is pending). */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    if (this.#pending !== undefined || signal.aborted) return Promise.resolve()
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', done)
        this.#wake = undefined
        resolve()
      }
      const timer = setTimeout(done, ms)
      signal.addEventListener('abort', done, { once: true })
      this.#wake = done
    })
  }
}
