/**
 * Bounded concurrency, the one implementation every library uses: the client's in-flight limit, observe()'s
 * read limit and the repository loader's file-system limit. No timers, no hidden state beyond the queue.
 */

/** A counting semaphore: at most `limit` holders; waiters are served in arrival order; waiting is abortable. */
export class Limiter {
  readonly limit: number
  #active = 0
  readonly #queue: (() => void)[] = []

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`concurrency limit must be an integer >= 1, got ${limit}`)
    this.limit = limit
  }

  get active(): number {
    return this.#active
  }

  /** Waits for a slot; the returned function gives it back (calling it twice is harmless). */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted()
    if (this.#active < this.limit) {
      this.#active++
      return this.#releaser()
    }
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = () => {
        const i = this.#queue.indexOf(grant)
        if (i >= 0) this.#queue.splice(i, 1)
        reject(signal?.reason)
      }
      this.#queue.push(grant)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
    return this.#releaser()
  }

  /** Runs `fn` in a slot. */
  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal)
    try {
      return await fn()
    } finally {
      release()
    }
  }

  #releaser(): () => void {
    let done = false
    return () => {
      if (done) return
      done = true
      const next = this.#queue.shift()
      // hand the slot straight to the next waiter, so #active never dips below the true count
      if (next) next()
      else this.#active--
    }
  }
}

/**
 * Calls `fn` on every item with at most `limit` calls pending at once and returns the results in input
 * order. Rejects with the first failure (calls already started still finish; no new ones start).
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`concurrency limit must be an integer >= 1, got ${limit}`)
  const out = new Array<R>(items.length)
  let next = 0
  let failed = false
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++
      try {
        out[i] = await fn(items[i]!, i)
      } catch (err) {
        failed = true
        throw err
      }
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  return out
}
