/**
 * The daemon's sliding-window prune budget (docs/safety.md, section 2): at most `max` deletions per
 * cluster within any `periodMs`, on top of the per-cycle budget. Pure bookkeeping; the clock is passed in.
 */
import type { PruneBudget, PruneWindow } from '../config/types.js'

export class PruneWindowBudget {
  readonly #window: PruneWindow
  readonly #history = new Map<string, number[]>()

  constructor(window: PruneWindow) {
    this.#window = window
  }

  /** Deletions still allowed for `cluster` at `now`. */
  remaining(cluster: string, now: number): number {
    const recent = this.#recent(cluster, now)
    return Math.max(0, this.#window.max - recent.length)
  }

  /** The per-cycle budget capped by the window: what plan() may use this cycle. */
  cycleBudget(cluster: string, configured: PruneBudget, now: number): PruneBudget {
    const left = this.remaining(cluster, now)
    return configured === 'unlimited' ? left : Math.min(configured, left)
  }

  /** Records `count` deletions carried out at `now`. */
  record(cluster: string, count: number, now: number): void {
    if (count <= 0) return
    const recent = this.#recent(cluster, now)
    for (let i = 0; i < count; i++) recent.push(now)
    this.#history.set(cluster, recent)
  }

  #recent(cluster: string, now: number): number[] {
    const since = now - this.#window.periodMs
    const recent = (this.#history.get(cluster) ?? []).filter((t) => t > since && t <= now)
    this.#history.set(cluster, recent)
    return recent
  }
}
