import { PveError, PveTaskFailedError, isPveError } from './errors.js'

export interface BackoffOptions {
  /** retries after the first attempt */
  retries?: number
  baseDelayMs?: number
  maxDelayMs?: number
  /** jitter source in [0, 1); injectable for tests */
  random?: () => number
}

/** Delay before retry `n` (1-based): exponential, capped, with jitter in [50 %, 100 %] of the step. */
export function backoffDelay(n: number, options: BackoffOptions = {}): number {
  const { baseDelayMs = 250, maxDelayMs = 5_000, random = Math.random } = options
  const step = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, n - 1))
  return Math.round(step * (0.5 + random() * 0.5))
}

/** Resolves after `ms`, or rejects with a PVE_ABORTED error as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortedError(signal))
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(abortedError(signal))
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

export function abortedError(signal?: AbortSignal, what = 'operation'): PveError {
  return new PveError('PVE_ABORTED', `${what} aborted`, { cause: signal?.reason })
}

export interface LockRetryOptions extends BackoffOptions {
  signal?: AbortSignal
  /** called before each retry (for logging) */
  onRetry?: (attempt: number, error: PveError, delayMs: number) => void
}

/** Whether an error means "PVE could not get a file or cluster lock in time" (HTTP 500 or a task's exit status). */
export function isLockTimeout(err: unknown): boolean {
  if (isPveError(err, 'PVE_LOCK_TIMEOUT')) return true
  return err instanceof PveTaskFailedError && err.reason === 'PVE_LOCK_TIMEOUT'
}

/**
 * Runs `fn` and repeats it while it fails with a lock timeout (`can't lock file ... got timeout`, or
 * `cfs-lock 'storage-<id>' error: got lock request timeout`), which PVE raises under parallel
 * clone/resize/config on the same guest or storage. Any other error is thrown at once.
 * The caller decides that repeating `fn` is safe; the client never repeats writes by itself.
 */
export async function retryOnLockTimeout<T>(
  fn: (attempt: number) => Promise<T>,
  options: LockRetryOptions = {},
): Promise<T> {
  const { retries = 4, baseDelayMs = 1_000, maxDelayMs = 10_000, signal } = options
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt)
    } catch (err) {
      if (!isLockTimeout(err) || attempt > retries) throw err
      const delay = backoffDelay(attempt, { ...options, baseDelayMs, maxDelayMs })
      options.onRetry?.(attempt, err as PveError, delay)
      await sleep(delay, signal)
    }
  }
}
