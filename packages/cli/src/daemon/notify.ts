/**
 * Delivery of the daemon's notifications (notify-events.ts) to a generic JSON webhook, ntfy, a Slack-compatible
 * incoming webhook or a Matrix room. Each message passes the redactor first, so no secret ProxOps knows reaches a
 * chat; targets' own secrets (a Slack URL, a token) come from the cluster's SOPS file. A failed delivery (no answer,
 * 5xx, 429) is retried with a doubling backoff; more than `perMinute` messages a minute to one target are dropped
 * and logged.
 */
import type { NotifyEvent } from './notify-events.js'

export const NOTIFY_TYPES = ['webhook', 'ntfy', 'slack', 'matrix'] as const
export type NotifyType = (typeof NOTIFY_TYPES)[number]

export interface NotifyTarget {
  type: NotifyType
  /** the webhook URL, ntfy topic URL, Slack incoming-webhook URL, or the Matrix homeserver */
  url: string
  /** bearer token (ntfy, webhook) or Matrix access token */
  token?: string
  /** Matrix room id (`!abc:example.org`) */
  room?: string
}

export interface Sent {
  method: string
  url: string
  headers: Record<string, string>
  body: string
}

/** The request one target gets for one event. Pure. */
export function requestFor(t: NotifyTarget, e: NotifyEvent, at: string, txn: string): Sent {
  const auth: Record<string, string> = t.token !== undefined ? { authorization: `Bearer ${t.token}` } : {}
  const text = `ProxOps: ${e.message}`
  switch (t.type) {
    case 'webhook':
      return {
        method: 'POST',
        url: t.url,
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({
          source: 'proxops',
          event: e.kind,
          cluster: e.cluster,
          object: e.object ?? null,
          message: e.message,
          at,
        }),
      }
    case 'ntfy':
      return {
        method: 'POST',
        url: t.url,
        headers: {
          'content-type': 'text/plain; charset=utf-8',
          title: `ProxOps ${e.cluster}: ${e.kind}`,
          tags: e.kind === 'cycle-failed' || e.kind === 'blocked' ? 'warning' : 'information_source',
          priority: e.kind === 'cycle-failed' ? '4' : '3',
          ...auth,
        },
        body: e.message,
      }
    case 'slack':
      return {
        method: 'POST',
        url: t.url,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      }
    case 'matrix':
      return {
        method: 'PUT',
        url: `${t.url.replace(/\/+$/, '')}/_matrix/client/v3/rooms/${encodeURIComponent(t.room ?? '')}/send/m.room.message/${encodeURIComponent(txn)}`,
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ msgtype: 'm.text', body: text }),
      }
  }
}

export interface NotifierOptions {
  targets: readonly NotifyTarget[]
  /** masks every secret ProxOps knows (the CLI's redactor) */
  mask: (text: string) => string
  now: () => number
  /** ms before each retry; default 1 s, 2 s, 4 s */
  backoffMs?: readonly number[]
  perMinute?: number
  send?: (r: Sent) => Promise<number>
  log?: (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void
}

const fetchSend = async (r: Sent): Promise<number> => {
  const res = await fetch(r.url, {
    method: r.method,
    headers: r.headers,
    body: r.body,
    signal: AbortSignal.timeout(10_000),
  })
  await res.arrayBuffer().catch(() => undefined)
  return res.status
}

export class Notifier {
  readonly #o: NotifierOptions
  readonly #sent = new Map<number, number[]>()
  readonly #inFlight = new Set<Promise<void>>()
  #txn = 0

  constructor(o: NotifierOptions) {
    this.#o = o
  }

  /** Queues every event to every target; returns at once. */
  notify(events: readonly NotifyEvent[]): void {
    for (const event of events) {
      const e = { ...event, message: this.#o.mask(event.message) }
      this.#o.targets.forEach((t, i) => {
        const minute = this.#o.now() - 60_000
        const times = (this.#sent.get(i) ?? []).filter((x) => x > minute)
        if (times.length >= (this.#o.perMinute ?? 20)) {
          this.#o.log?.('warn', 'notification dropped: rate limit', {
            event: 'proxops.notify',
            target: t.type,
            kind: e.kind,
          })
          return
        }
        times.push(this.#o.now())
        this.#sent.set(i, times)
        const p = this.#deliver(t, e).finally(() => this.#inFlight.delete(p))
        this.#inFlight.add(p)
      })
    }
  }

  /** Waits for what is being delivered (at shutdown). */
  async drain(): Promise<void> {
    await Promise.all([...this.#inFlight])
  }

  async #deliver(t: NotifyTarget, e: NotifyEvent): Promise<void> {
    const send = this.#o.send ?? fetchSend
    const request = requestFor(t, e, new Date(this.#o.now()).toISOString(), `proxops-${this.#o.now()}-${this.#txn++}`)
    const backoff = this.#o.backoffMs ?? [1000, 2000, 4000]
    for (let attempt = 0; ; attempt++) {
      // no answer at all counts as status 0: retried
      const status = await send(request).catch(() => 0)
      if (status >= 200 && status < 300) {
        this.#o.log?.('info', 'notification sent', { event: 'proxops.notify', target: t.type, kind: e.kind, attempt })
        return
      }
      const retry = status === 0 || status === 429 || status >= 500
      if (!retry || attempt >= backoff.length) {
        this.#o.log?.('warn', 'notification failed', { event: 'proxops.notify', target: t.type, kind: e.kind, status })
        return
      }
      await new Promise((r) => setTimeout(r, backoff[attempt]))
    }
  }
}
