import { PveError } from './errors.js'

/** A counting semaphore: at most `limit` holders; waiters are served in arrival order; waiting is abortable. */
export class Limiter {
  readonly limit: number
  #active = 0
  readonly #queue: (() => void)[] = []

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new PveError('PVE_CONFIG', 'maxInFlight must be a positive integer')
    this.limit = limit
  }

  get active(): number {
    return this.#active
  }

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
