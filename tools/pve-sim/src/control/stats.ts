/**
 * Request log and counters, for tests that prove a read-only path wrote nothing or count retries.
 */

export interface RequestRecord {
  method: string
  /** the apidoc template when the path matched one (`/nodes/{node}/qemu/{vmid}/config`), else the raw path */
  path: string
  /** the concrete path below /api2/json */
  rawPath: string
  status: number
  /** the model's handler ran (a write "served") */
  handled: boolean
}

export interface SimStats {
  readonly requests: readonly RequestRecord[]
  /** POST/PUT/DELETE requests whose handler ran (validation, auth and injected failures excluded) */
  writes(): number
  /** request counts by HTTP status */
  byStatus(): Record<string, number>
  /** requests matching a method and template or path */
  count(method?: string, path?: string): number
  reset(): void
}

export class StatsLog implements SimStats {
  private log: RequestRecord[] = []
  private limit: number

  constructor(limit = 100_000) {
    this.limit = limit
  }

  get requests(): readonly RequestRecord[] {
    return this.log
  }

  record(r: RequestRecord): void {
    this.log.push(r)
    // keep memory bounded for long-running standalone servers
    if (this.log.length > this.limit) this.log.splice(0, this.log.length - this.limit)
  }

  writes(): number {
    return this.log.filter((r) => r.handled && r.method !== 'GET').length
  }

  byStatus(): Record<string, number> {
    const out: Record<string, number> = {}
    for (const r of this.log) out[r.status] = (out[r.status] ?? 0) + 1
    return out
  }

  count(method?: string, path?: string): number {
    return this.log.filter((r) => (!method || r.method === method) && (!path || r.path === path || r.rawPath === path))
      .length
  }

  reset(): void {
    this.log = []
  }
}
