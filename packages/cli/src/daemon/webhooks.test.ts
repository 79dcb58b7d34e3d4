import { describe, expect, it } from 'vitest'
import { createHmac } from 'node:crypto'
import { Readable } from 'node:stream'
import type { IncomingMessage } from 'node:http'
import { verify, webhookRoutes, type Provider } from './webhooks.js'

const SECRET = 'hook-secret-CANARY-1234'
const body = Buffer.from(JSON.stringify({ ref: 'refs/heads/main' }))
const sig = (b: Buffer, secret = SECRET) => createHmac('sha256', secret).update(b).digest('hex')

/** the headers each forge sends with a push, signed with `secret` */
function signed(provider: Provider, b: Buffer, id: string, secret = SECRET): Record<string, string> {
  switch (provider) {
    case 'github':
      return { 'x-hub-signature-256': `sha256=${sig(b, secret)}`, 'x-github-delivery': id, 'x-github-event': 'push' }
    case 'gitlab':
      return { 'x-gitlab-token': secret, 'x-gitlab-event-uuid': id, 'x-gitlab-event': 'Push Hook' }
    case 'gitea':
      return { 'x-gitea-signature': sig(b, secret), 'x-gitea-delivery': id, 'x-gitea-event': 'push' }
    case 'generic':
      return { 'x-signature-256': `sha256=${sig(b, secret)}`, 'x-delivery-id': id }
  }
}

const request = (headers: Record<string, string>, b: Buffer): IncomingMessage =>
  Object.assign(Readable.from([b]), { headers: { 'content-length': String(b.length), ...headers } }) as never

describe('webhook signatures', () => {
  for (const provider of ['github', 'gitlab', 'gitea', 'generic'] as const) {
    it(`${provider}: a signed push is accepted with its ref; a wrong secret, a changed body or no signature is not`, () => {
      expect(verify(provider, signed(provider, body, 'd1'), body, SECRET)).toEqual({
        ok: true,
        delivery: 'd1',
        event: 'push',
        ref: 'refs/heads/main',
      })
      expect(verify(provider, signed(provider, body, 'd1', 'other-secret'), body, SECRET)).toMatchObject({
        ok: false,
        status: 401,
      })
      if (provider !== 'gitlab')
        expect(verify(provider, signed(provider, body, 'd1'), Buffer.from('{"ref":"x"}'), SECRET)).toMatchObject({
          ok: false,
          status: 401,
        })
      expect(verify(provider, {}, body, SECRET)).toMatchObject({ ok: false, status: 401 })
    })
  }

  it('Forgejo signs under its own header names', () => {
    const h = { 'x-forgejo-signature': sig(body), 'x-forgejo-delivery': 'f1', 'x-forgejo-event': 'push' }
    expect(verify('gitea', h, body, SECRET)).toMatchObject({ ok: true, delivery: 'f1' })
  })

  it('a signed request without a delivery id is refused: a replay could not be told apart', () => {
    const h = signed('github', body, 'x')
    delete h['x-github-delivery']
    expect(verify('github', h, body, SECRET)).toMatchObject({ ok: false, status: 400 })
  })
})

describe('receivers', () => {
  const make = (over: { perMinute?: number; maxBytes?: number } = {}) => {
    const started: string[][] = []
    const hooks = webhookRoutes({
      receivers: [{ cluster: 'lab', provider: 'github', secret: SECRET }],
      branch: 'main',
      now: Date.now,
      debounceMs: 10,
      start: (clusters) => started.push([...clusters]),
      ...over,
    })
    const post = (h: Record<string, string>, b = body) => hooks.routes.get('/hooks/lab/github')!(request(h, b))
    return { hooks, started, post }
  }

  it('a push starts one tick; a replay, a bad signature, another branch or another event start nothing', async () => {
    const { hooks, started, post } = make()
    expect((await post(signed('github', body, 'a'))).status).toBe(202)
    expect((await post(signed('github', body, 'a'))).status).toBe(409)
    expect((await post({ ...signed('github', body, 'b'), 'x-hub-signature-256': 'sha256=00' })).status).toBe(401)
    const other = Buffer.from(JSON.stringify({ ref: 'refs/heads/dev' }))
    expect((await post(signed('github', other, 'c'), other)).body).toMatchObject({
      ignored: expect.stringMatching(/dev/),
    })
    expect((await post({ ...signed('github', body, 'd'), 'x-github-event': 'ping' })).status).toBe(200)
    await new Promise((r) => setTimeout(r, 50))
    expect(started).toEqual([['lab']])
    expect(hooks.deliveries('/hooks/lab/github').map((d) => d.result)).toEqual([
      'ignored',
      'ignored',
      'refused',
      'refused',
      'started',
    ])
    expect(JSON.stringify(hooks.deliveries('/hooks/lab/github'))).not.toContain(SECRET)
  })

  it('pushes close together start one tick (debounce); a flood is cut; an oversized body is refused unread', async () => {
    const { started, post } = make({ perMinute: 5, maxBytes: 64 })
    const answers = await Promise.all([1, 2, 3].map((i) => post(signed('github', body, `p${i}`))))
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202])
    await new Promise((r) => setTimeout(r, 50))
    expect(started).toEqual([['lab']])
    const big = Buffer.alloc(100, 'x')
    expect((await post(signed('github', big, 'big'), big)).status).toBe(413)
    expect((await post(signed('github', body, 'p4'))).status).toBe(202)
    expect((await post(signed('github', body, 'p5'))).status).toBe(429)
    await new Promise((r) => setTimeout(r, 50))
    expect(started).toHaveLength(2)
  })
})
