/**
 * Transport-level faults injected in front of the model: latency, failure bursts (5xx, and the 595/596 codes
 * pveproxy passes through from AnyEvent::HTTP), offline nodes and revoked tokens.
 * Pure state plus matching; the HTTP layer asks it once per request.
 */

export type FaultMethod = 'GET' | 'POST' | 'PUT' | 'DELETE'

/** Which requests a fault applies to: method and/or path (apidoc template, concrete path, or a RegExp on the path). */
export interface RequestMatcher {
  method?: FaultMethod
  path?: string | RegExp
}

export interface FailureBurst extends RequestMatcher {
  /** how many matching requests fail (default 1) */
  count?: number
  /** 400..599, incl. 595 (connection refused / no route) and 596 (timeout / broken pipe); or use `network` */
  status?: number
  /** reason phrase; defaults per status (see defaultReason) */
  message?: string
  /** instead of a status: `reset` closes the connection without an answer, `hang` never answers */
  network?: 'reset' | 'hang'
}

export interface LatencyRule extends RequestMatcher {
  ms: number
}

interface ActiveBurst extends FailureBurst {
  remaining: number
}

export type Failure = { status: number; message: string } | { network: 'reset' | 'hang' }

export interface FaultDecision {
  delayMs: number
  failure?: Failure
}

export function defaultReason(status: number): string {
  if (status === 595) return 'Connection refused'
  if (status === 596) return 'Connection timed out'
  if (status === 597) return 'Broken pipe'
  if (status === 599) return 'Unexpected error'
  if (status === 501) return 'Not Implemented'
  if (status === 502) return 'Bad Gateway'
  if (status === 503) return 'Service Unavailable'
  if (status === 504) return 'Gateway Timeout'
  return 'Internal Server Error'
}

export function matches(m: RequestMatcher, method: string, path: string, template: string | undefined): boolean {
  if (m.method && m.method !== method) return false
  if (m.path === undefined) return true
  if (m.path instanceof RegExp) return m.path.test(path)
  return m.path === path || m.path === template
}

export class FaultState {
  private latency: LatencyRule[] = []
  private bursts: ActiveBurst[] = []
  readonly offlineNodes = new Set<string>()

  /** latency for every request (a number) or for matching ones; `setLatency(0)` clears all rules */
  setLatency(rule: number | LatencyRule): void {
    if (typeof rule === 'number') this.latency = rule > 0 ? [{ ms: rule }] : []
    else this.latency.push(rule)
  }

  failNext(burst: FailureBurst): void {
    if (burst.network !== undefined) {
      if (burst.network !== 'reset' && burst.network !== 'hang')
        throw new Error(`pve-sim: failNext network must be reset or hang, got ${String(burst.network)}`)
      if (burst.status !== undefined) throw new Error('pve-sim: failNext takes either status or network, not both')
    } else if (
      burst.status === undefined ||
      !Number.isInteger(burst.status) ||
      burst.status < 400 ||
      burst.status > 599
    ) {
      throw new Error(`pve-sim: failNext status must be an HTTP error status 400..599, got ${String(burst.status)}`)
    }
    this.bursts.push({ ...burst, remaining: burst.count ?? 1 })
  }

  clear(): void {
    this.latency = []
    this.bursts = []
    this.offlineNodes.clear()
  }

  /** consumes one matching burst slot; latency is the sum of all matching rules */
  decide(method: string, path: string, template: string | undefined): FaultDecision {
    const delayMs = this.latency.filter((r) => matches(r, method, path, template)).reduce((s, r) => s + r.ms, 0)
    const b = this.bursts.find((x) => x.remaining > 0 && matches(x, method, path, template))
    if (!b) return { delayMs }
    b.remaining--
    this.bursts = this.bursts.filter((x) => x.remaining > 0)
    if (b.network) return { delayMs, failure: { network: b.network } }
    const status = b.status as number
    return { delayMs, failure: { status, message: b.message ?? defaultReason(status) } }
  }

  pendingBursts(): number {
    return this.bursts.reduce((s, b) => s + b.remaining, 0)
  }
}
