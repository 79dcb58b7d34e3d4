/**
 * Push webhooks of `proxops run` (docs/operations.md, "Push webhooks"): one receiver per cluster and forge, at
 * `/hooks/<cluster>/<github|gitlab|gitea|generic>`, with its secret from the cluster's SOPS file. A push to the
 * branch the daemon follows starts a tick for that cluster (debounced: pushes close together start one); a request
 * that is unsigned, wrongly signed, replayed (a delivery id seen before), too large or one of a flood starts nothing.
 *
 * How each forge signs, from its documentation:
 * - GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, `X-GitHub-Delivery`, `X-GitHub-Event`.
 * - GitLab: `X-Gitlab-Token: <the secret>` (a shared token, no signature), `X-Gitlab-Event-UUID`, `X-Gitlab-Event`.
 * - Gitea and Forgejo: `X-Gitea-Signature` / `X-Forgejo-Signature: <hex HMAC-SHA256>`, `X-Gitea-Delivery` /
 *   `X-Forgejo-Delivery`, `X-Gitea-Event` / `X-Forgejo-Event`.
 * - generic: `X-Signature-256: sha256=<hex HMAC-SHA256 of the body>` and `X-Delivery-Id`; the body's `ref` names
 *   the branch when present (`refs/heads/main`).
 * Every comparison is in constant time.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

export const PROVIDERS = ['github', 'gitlab', 'gitea', 'generic'] as const
export type Provider = (typeof PROVIDERS)[number]

export interface Receiver {
  cluster: string
  provider: Provider
  secret: string
}

export interface Delivery {
  at: string
  delivery?: string
  result: 'started' | 'ignored' | 'refused'
  detail: string
}

type Headers = IncomingMessage['headers']
const header = (h: Headers, name: string): string | undefined => {
  const v = h[name]
  return Array.isArray(v) ? v[0] : v
}
const digest = (v: string | Buffer): Buffer => createHash('sha256').update(v).digest()
/** constant time, whatever the lengths */
export const sameSecret = (a: string, b: string): boolean => timingSafeEqual(digest(a), digest(b))
const hmac = (secret: string, body: Buffer): string => createHmac('sha256', secret).update(body).digest('hex')

export type Verdict =
  { ok: true; delivery: string; event: string; ref: string | undefined } | { ok: false; status: number; error: string }

/** Pure: whether a request is a genuine delivery of `provider` signed with `secret`, and what it says. */
export function verify(provider: Provider, h: Headers, body: Buffer, secret: string): Verdict {
  const sha = (name: string, prefixed: boolean): boolean => {
    const got = header(h, name)
    if (got === undefined) return false
    return sameSecret(got.trim().toLowerCase(), `${prefixed ? 'sha256=' : ''}${hmac(secret, body)}`)
  }
  let signed: boolean
  let delivery: string | undefined
  let event: string | undefined
  switch (provider) {
    case 'github':
      signed = sha('x-hub-signature-256', true)
      delivery = header(h, 'x-github-delivery')
      event = header(h, 'x-github-event')
      break
    case 'gitlab':
      signed = sameSecret(header(h, 'x-gitlab-token') ?? `\0${secret}`, secret)
      delivery = header(h, 'x-gitlab-event-uuid') ?? header(h, 'idempotency-key')
      event = header(h, 'x-gitlab-event') === 'Push Hook' ? 'push' : header(h, 'x-gitlab-event')
      break
    case 'gitea':
      signed = sha(header(h, 'x-forgejo-signature') !== undefined ? 'x-forgejo-signature' : 'x-gitea-signature', false)
      delivery = header(h, 'x-forgejo-delivery') ?? header(h, 'x-gitea-delivery')
      event = header(h, 'x-forgejo-event') ?? header(h, 'x-gitea-event')
      break
    case 'generic':
      signed = sha('x-signature-256', true)
      delivery = header(h, 'x-delivery-id')
      event = 'push'
      break
  }
  if (!signed) return { ok: false, status: 401, error: 'bad or missing signature' }
  if (delivery === undefined || delivery === '' || delivery.length > 200)
    return { ok: false, status: 400, error: 'no delivery id: replays could not be told apart' }
  let ref: string | undefined
  try {
    const doc = body.length > 0 ? (JSON.parse(body.toString('utf8')) as { ref?: unknown }) : {}
    ref = typeof doc.ref === 'string' ? doc.ref : undefined
  } catch {
    return { ok: false, status: 400, error: 'the body is not JSON' }
  }
  return { ok: true, delivery, event: event ?? 'unknown', ref }
}

export interface WebhookOptions {
  receivers: readonly Receiver[]
  /** the branch the daemon follows: a push to another starts nothing */
  branch: string
  /** starts a tick for these clusters */
  start(clusters: readonly string[], why: string): void
  now: () => number
  maxBytes?: number
  debounceMs?: number
  /** requests per receiver per minute before 429 */
  perMinute?: number
  log?: (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void
}

export const hookPath = (r: Pick<Receiver, 'cluster' | 'provider'>): string => `/hooks/${r.cluster}/${r.provider}`

/** The POST routes of the receivers, and each one's last deliveries (newest first, for /status). */
export function webhookRoutes(o: WebhookOptions): {
  routes: Map<string, (req: IncomingMessage) => Promise<{ status: number; body: unknown }>>
  deliveries: (path: string) => readonly Delivery[]
  close(): void
} {
  const maxBytes = o.maxBytes ?? 1024 * 1024
  const perMinute = o.perMinute ?? 60
  const seen = new Map<string, number>() // delivery key -> when first seen
  const recent = new Map<string, Delivery[]>()
  const hits = new Map<string, number[]>()
  const pending = new Set<string>()
  let timer: NodeJS.Timeout | undefined
  const remember = (path: string, d: Delivery): void => {
    const list = [d, ...(recent.get(path) ?? [])].slice(0, 10)
    recent.set(path, list)
  }
  const routes = new Map<string, (req: IncomingMessage) => Promise<{ status: number; body: unknown }>>()
  for (const r of o.receivers) {
    const path = hookPath(r)
    routes.set(path, async (req) => {
      const at = new Date(o.now()).toISOString()
      const refuse = (status: number, error: string, delivery?: string) => {
        remember(path, { at, ...(delivery ? { delivery } : {}), result: 'refused', detail: error })
        o.log?.('warn', 'webhook refused', { event: 'proxops.webhook', path, status, error })
        return { status, body: { error } }
      }
      // a flood is cut before its bodies are read
      const minute = o.now() - 60_000
      const times = (hits.get(path) ?? []).filter((t) => t > minute)
      times.push(o.now())
      hits.set(path, times)
      if (times.length > perMinute) {
        req.resume()
        return refuse(429, `more than ${perMinute} requests a minute`)
      }
      const declared = Number(header(req.headers, 'content-length') ?? '0')
      if (declared > maxBytes) {
        req.resume()
        return refuse(413, `larger than ${maxBytes} bytes`)
      }
      const chunks: Buffer[] = []
      let size = 0
      let tooLarge = false
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length
        if (size > maxBytes) tooLarge = true
        else chunks.push(chunk)
      }
      if (tooLarge) return refuse(413, `larger than ${maxBytes} bytes`)
      const v = verify(r.provider, req.headers, Buffer.concat(chunks), r.secret)
      if (!v.ok) return refuse(v.status, v.error)
      const key = `${path}\0${v.delivery}`
      if (seen.has(key)) return refuse(409, `delivery ${v.delivery} was received before (a replay)`, v.delivery)
      seen.set(key, o.now())
      // bounded: the oldest ids go first
      if (seen.size > 10_000) seen.delete(seen.keys().next().value as string)
      if (v.event !== 'push') {
        remember(path, { at, delivery: v.delivery, result: 'ignored', detail: `event ${v.event}` })
        return { status: 200, body: { ignored: `event ${v.event} starts nothing` } }
      }
      if (v.ref !== undefined && v.ref !== `refs/heads/${o.branch}`) {
        remember(path, { at, delivery: v.delivery, result: 'ignored', detail: `${v.ref} feeds no cluster` })
        return { status: 200, body: { ignored: `${v.ref} is not refs/heads/${o.branch}` } }
      }
      remember(path, { at, delivery: v.delivery, result: 'started', detail: `push to ${v.ref ?? o.branch}` })
      o.log?.('info', 'webhook: a push starts a tick', {
        event: 'proxops.webhook',
        path,
        delivery: v.delivery,
        cluster: r.cluster,
      })
      // pushes close together start one tick
      pending.add(r.cluster)
      timer ??= setTimeout(() => {
        timer = undefined
        const clusters = [...pending]
        pending.clear()
        o.start(clusters, 'push webhook')
      }, o.debounceMs ?? 200)
      return { status: 202, body: { accepted: true, cluster: r.cluster, delivery: v.delivery } }
    })
  }
  return {
    routes,
    deliveries: (path) => recent.get(path) ?? [],
    close: () => clearTimeout(timer),
  }
}
