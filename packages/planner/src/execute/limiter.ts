/**
 * Small concurrency primitives shared by observe() and execute(): a counting semaphore and a bounded
 * parallel map. No timers, no hidden state beyond the queue.
 */

export class Semaphore {
  private active = 0
  private readonly waiters: (() => void)[] = []

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`concurrency limit must be an integer >= 1, got ${limit}`)
  }

  /** true when a slot is free right now (used by the scheduler to pick runnable jobs without waiting) */
  get available(): boolean {
    return this.active < this.limit
  }

  tryAcquire(): boolean {
    if (this.active >= this.limit) return false
    this.active++
    return true
  }

  async acquire(): Promise<void> {
    if (this.tryAcquire()) return
    await new Promise<void>((resolve) => this.waiters.push(resolve))
  }

  release(): void {
    const next = this.waiters.shift()
    // hand the slot straight to the next waiter, so `active` stays counted
    if (next) next()
    else this.active--
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire()
    try {
      return await fn()
    } finally {
      this.release()
    }
  }
}

/** Maps `items` through `fn` with at most `limit` calls in flight; results keep the input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const semaphore = new Semaphore(limit)
  return Promise.all(items.map((item, index) => semaphore.run(() => fn(item, index))))
}
