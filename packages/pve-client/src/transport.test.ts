import { inspect } from 'node:util'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createPveClient, createPveReadOnlyClient, type PveClientOptions } from './client.js'
import { PveError } from './errors.js'
import type { ClientNotice, RequestEvent } from './transport.js'
import { type LocalPve, captureLogger, ok, pveError, startLocalPve } from './test-support/local-pve.js'

const TOKEN_SECRET = 'CANARY-TOKEN-7d1c9e2a-4b3f'
const PASSWORD = 'CANARY-PASSWORD-q8;z=x&y'
const TICKET = 'PVE:root@pam:6650F00D::CANARY+TICKET/sig=='
const CSRF = '6650F00D:CANARY-CSRF-hmac'
const CANARIES = [TOKEN_SECRET, PASSWORD, TICKET, CSRF, encodeURIComponent(TICKET), encodeURIComponent(PASSWORD)]

function expectNoCanary(...things: unknown[]): void {
  for (const thing of things) {
    const text =
      typeof thing === 'string'
        ? thing
        : `${String(thing)} ${inspect(thing, { depth: 8, showHidden: true })} ${JSON.stringify(thing) ?? ''}`
    for (const canary of CANARIES) expect(text).not.toContain(canary)
  }
}

let pve: LocalPve
beforeAll(async () => {
  pve = await startLocalPve()
})
afterAll(async () => {
  await pve.close()
})
beforeEach(() => {
  pve.requests.length = 0
  pve.handle(() => ok({ version: '9.1.1', release: '9.1', repoid: 'abcdef12' }))
})

const token = { type: 'token' as const, tokenId: 'root@pam!proxops', secret: TOKEN_SECRET }
const fast = { retries: 2, baseDelayMs: 1, maxDelayMs: 2 }
/** a token client that trusts the local PVE's CA; `options` add to or replace those */
const trusted = (options: Partial<PveClientOptions> = {}) =>
  createPveClient({ baseUrl: pve.url, auth: token, tls: { ca: pve.caPem }, ...options })

async function catchErr(p: Promise<unknown>): Promise<PveError> {
  try {
    await p
  } catch (err) {
    expect(err).toBeInstanceOf(PveError)
    return err as PveError
  }
  throw new Error('expected a rejection')
}

describe('TLS', () => {
  it('verifies by default and refuses a self-signed certificate with a clear PVE_TLS error', async () => {
    const c = createPveClient({ baseUrl: pve.url, auth: token })
    const err = await catchErr(c.version())
    expect(err.code).toBe('PVE_TLS')
    expect(err.message).toMatch(/tls\.ca|tls\.fingerprint/)
    expect(pve.requests).toHaveLength(0)
    await c.close()
  })

  it('trusts a CA given as PEM text or as a file path', async () => {
    for (const ca of [pve.caPem, pve.caPath]) {
      const c = createPveClient({ baseUrl: pve.url, auth: token, tls: { ca } })
      expect((await c.version()).version).toBe('9.1.1')
      await c.close()
    }
  })

  it('pins the SHA-256 fingerprint in PVE form (case and colons optional)', async () => {
    for (const fingerprint of [pve.fingerprint, pve.fingerprint.toLowerCase().replace(/:/g, '')]) {
      const c = createPveClient({ baseUrl: pve.url, auth: token, tls: { fingerprint } })
      expect((await c.version()).release).toBe('9.1')
      await c.close()
    }
  })

  it('refuses a wrong fingerprint before sending anything', async () => {
    const wrong = 'AA:'.repeat(31) + 'AA'
    const c = createPveClient({ baseUrl: pve.url, auth: token, tls: { fingerprint: wrong } })
    const err = await catchErr(c.version())
    expect(err.code).toBe('PVE_TLS_FINGERPRINT')
    expect(err.message).toContain('fingerprint mismatch')
    expect(err.message).toContain(pve.fingerprint)
    expect(pve.requests).toHaveLength(0)
    await c.close()
  })

  it('refuses a malformed fingerprint or unreadable CA file at creation', () => {
    expect(() => createPveClient({ baseUrl: pve.url, auth: token, tls: { fingerprint: 'AB:CD' } })).toThrow(
      expect.objectContaining({ code: 'PVE_CONFIG' }),
    )
    expect(() => createPveClient({ baseUrl: pve.url, auth: token, tls: { ca: '/nonexistent/ca.pem' } })).toThrow(
      expect.objectContaining({ code: 'PVE_CONFIG' }),
    )
  })

  it('insecure works only when asked and warns through the logger', async () => {
    const logger = captureLogger()
    const c = createPveClient({ baseUrl: pve.url, auth: token, tls: { insecure: true }, logger })
    expect((await c.version()).version).toBe('9.1.1')
    expect(logger.lines.join('\n')).toMatch(/verification is disabled/)
    await c.close()
  })

  it('never sets NODE_TLS_REJECT_UNAUTHORIZED', () => {
    expect(process.env.NODE_TLS_REJECT_UNAUTHORIZED).toBeUndefined()
  })
})

describe('token auth', () => {
  it('sends the PVEAPIToken header and no CSRF token, also on writes', async () => {
    const c = trusted()
    await c.version()
    pve.handle(() => ok(null))
    await c.updateConfig('pve1', 'lxc', 101, { onboot: true })
    expect(pve.requests.map((r) => r.headers.authorization)).toEqual([
      `PVEAPIToken=root@pam!proxops=${TOKEN_SECRET}`,
      `PVEAPIToken=root@pam!proxops=${TOKEN_SECRET}`,
    ])
    expect(pve.requests.every((r) => r.headers.csrfpreventiontoken === undefined)).toBe(true)
    await c.close()
  })

  it('a 401 (empty body) is PVE_AUTH, not retried, and holds no credential', async () => {
    pve.handle(() => ({ status: 401, statusText: 'Authentication failed!' }))
    const logger = captureLogger()
    const c = trusted({ retry: fast, logger })
    const err = await catchErr(c.version())
    expect(err.code).toBe('PVE_AUTH')
    expect(err.status).toBe(401)
    expect(pve.requests).toHaveLength(1)
    expectNoCanary(err, err.stack, logger.lines.join('\n'), c, c.readOnly())
    await c.close()
  })

  it('rejects a malformed token id with PVE_CONFIG, without echoing the secret', () => {
    try {
      createPveClient({ baseUrl: pve.url, auth: { type: 'token', tokenId: 'root', secret: TOKEN_SECRET } })
      expect.unreachable()
    } catch (err) {
      expect((err as PveError).code).toBe('PVE_CONFIG')
      expectNoCanary(err)
    }
  })
})

describe('ticket auth', () => {
  function ticketServer(state: { logins: string[]; expireNext?: boolean }) {
    pve.handle((req) => {
      if (req.path === '/access/ticket') {
        const form = new URLSearchParams(req.body)
        state.logins.push(
          form.get('password') === PASSWORD ? 'password' : form.get('password') === TICKET ? 'renew' : 'bad',
        )
        if (form.get('username') !== 'root@pam' || state.logins.at(-1) === 'bad')
          return pveError(401, 'authentication failure')
        return ok({ username: 'root@pam', ticket: TICKET, CSRFPreventionToken: CSRF, cap: {} })
      }
      if (req.headers.cookie !== `PVEAuthCookie=${encodeURIComponent(TICKET)}`)
        return { status: 401, statusText: 'No ticket' }
      if (state.expireNext) {
        state.expireNext = false
        return { status: 401, statusText: 'No ticket' }
      }
      if (req.method !== 'GET' && req.headers.csrfpreventiontoken !== CSRF) {
        return { status: 401, statusText: 'Permission denied - invalid csrf token' }
      }
      return ok(req.method === 'GET' ? { version: '9.1.1', release: '9.1' } : null)
    })
  }

  it('logs in once with a form body, sends the cookie, and CSRF only on non-GET', async () => {
    const state = { logins: [] as string[] }
    ticketServer(state)
    const c = createPveClient({
      baseUrl: pve.url,
      auth: { type: 'ticket', username: 'root@pam', password: PASSWORD },
      tls: { ca: pve.caPem },
    })
    await Promise.all([c.version(), c.version(), c.version()])
    await c.updateConfig('pve1', 'lxc', 101, { description: 'x' })
    expect(state.logins).toEqual(['password'])
    const login = pve.requests[0]!
    expect(login.method).toBe('POST')
    expect(login.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/)
    expect(new URLSearchParams(login.body).get('password')).toBe(PASSWORD)
    const gets = pve.requests.filter((r) => r.method === 'GET')
    expect(gets.every((r) => r.headers.csrfpreventiontoken === undefined)).toBe(true)
    expect(pve.requests.at(-1)!.headers.csrfpreventiontoken).toBe(CSRF)
    expect(c.writes).toBe(1)
    await c.close()
  })

  it('renews before the 2 h lifetime by posting the old ticket', async () => {
    const state = { logins: [] as string[] }
    ticketServer(state)
    let now = 1_000_000
    const c = createPveClient({
      baseUrl: pve.url,
      auth: { type: 'ticket', username: 'root@pam', password: PASSWORD, renewAfterMs: 60 * 60_000 },
      tls: { ca: pve.caPem },
      now: () => now,
    })
    await c.version()
    now += 59 * 60_000
    await c.version()
    now += 2 * 60_000
    await c.version()
    expect(state.logins).toEqual(['password', 'renew'])
    await c.close()
  })

  it('logs in again once on a 401, then succeeds; a second 401 is PVE_AUTH', async () => {
    const state = { logins: [] as string[], expireNext: false }
    ticketServer(state)
    const c = createPveClient({
      baseUrl: pve.url,
      auth: { type: 'ticket', username: 'root@pam', password: PASSWORD },
      tls: { ca: pve.caPem },
    })
    await c.version()
    state.expireNext = true
    await c.updateConfig('pve1', 'lxc', 101, { description: 'x' })
    expect(state.logins.length).toBe(2)
    pve.handle((req) =>
      req.path === '/access/ticket'
        ? ok({ ticket: TICKET, CSRFPreventionToken: CSRF })
        : { status: 401, statusText: 'No ticket' },
    )
    const err = await catchErr(c.version())
    expect(err.code).toBe('PVE_AUTH')
    expectNoCanary(err, c)
    await c.close()
  })

  it('a failed login is PVE_AUTH and never shows the password', async () => {
    pve.handle(() => pveError(401, 'authentication failure'))
    const logger = captureLogger()
    const c = createPveClient({
      baseUrl: pve.url,
      auth: { type: 'ticket', username: 'root@pam', password: PASSWORD },
      tls: { ca: pve.caPem },
      logger,
    })
    const err = await catchErr(c.version())
    expect(err.code).toBe('PVE_AUTH')
    expect(pve.requests).toHaveLength(1) // a failed login is not repeated (each 401 costs PVE ~3 s)
    expectNoCanary(err, err.stack, logger.lines.join('\n'), c)
    await c.close()
  })

  it('scrubs a secret PVE echoes back in an error', async () => {
    pve.handle((req) =>
      req.path === '/access/ticket'
        ? ok({ ticket: TICKET, CSRFPreventionToken: CSRF })
        : pveError(400, 'Parameter verification failed.', {
            cipassword: `invalid value '${PASSWORD}'`,
            x: `ticket ${TICKET}`,
          }),
    )
    const c = createPveClient({
      baseUrl: pve.url,
      auth: { type: 'ticket', username: 'root@pam', password: PASSWORD },
      tls: { ca: pve.caPem },
    })
    const err = await catchErr(c.updateConfig('pve1', 'qemu', 100, { cipassword: 'CANARY-CIPASS-1234' }))
    expect(err.code).toBe('PVE_PARAM')
    expectNoCanary(err, err.stack, JSON.stringify((err as unknown as { params: unknown }).params))
    expect(err.message).not.toContain('CANARY-CIPASS-1234')
    await c.close()
  })
})

describe('retries, timeouts, cancellation, limits and the request hook', () => {
  it('retries a GET on transient failures with backoff, then succeeds', async () => {
    let n = 0
    pve.handle(() =>
      ++n < 3 ? pveError(n === 1 ? 503 : 596, 'Connection timed out') : ok({ version: '9.1.1', release: '9.1' }),
    )
    const events: RequestEvent[] = []
    const c = trusted({
      retry: fast,
      onRequest: (e) => events.push(e),
    })
    expect((await c.version()).version).toBe('9.1.1')
    expect(events.map((e) => [e.method, e.path, e.status, e.attempt])).toEqual([
      ['GET', '/version', 503, 1],
      ['GET', '/version', 596, 2],
      ['GET', '/version', 200, 3],
    ])
    expect(events[0]!.errorCode).toBe('PVE_TRANSIENT')
    expect(events.every((e) => e.latencyMs >= 0)).toBe(true)
    await c.close()
  })

  it('reports each retry before it waits, and a request without an answer while it waits', async () => {
    let n = 0
    const notices: ClientNotice[] = []
    const seenAt: number[] = []
    pve.handle(() => {
      seenAt.push(notices.length)
      return ++n < 3 ? pveError(503, 'Service Unavailable') : ok({ version: '9.1.1' })
    })
    const c = trusted({
      retry: fast,
      onNotice: (notice) => notices.push(notice),
    })
    expect((await c.version()).version).toBe('9.1.1')
    expect(notices.map((x) => [x.type, x.path, x.type === 'retry' ? x.attempt : 0])).toEqual([
      ['retry', '/version', 2],
      ['retry', '/version', 3],
    ])
    expect(notices[0]).toMatchObject({ attempts: 3, method: 'GET', reason: expect.stringMatching(/503/) })
    // each retry was said before the next attempt reached PVE, not after
    expect(seenAt).toEqual([0, 1, 2])
    // an answer that takes longer than waitNoticeMs is reported once while it is awaited
    const waits: ClientNotice[] = []
    pve.handle(() => ({ ...ok({ version: '9.1.1' }), delayMs: 300 }))
    const d = trusted({
      waitNoticeMs: 40,
      onNotice: (x) => waits.push(x),
    })
    expect((await d.version()).version).toBe('9.1.1')
    expect(waits).toEqual([{ type: 'waiting', method: 'GET', path: '/version', elapsedMs: 40, timeoutMs: 30_000 }])
    // a throwing observer changes nothing
    const e = trusted({
      waitNoticeMs: 1,
      onNotice: () => {
        throw new Error('observer')
      },
    })
    expect((await e.version()).version).toBe('9.1.1')
    await Promise.all([c.close(), d.close(), e.close()])
  })

  it('gives up after the bounded retries', async () => {
    pve.handle(() => pveError(503, 'Service Unavailable'))
    const c = trusted({ retry: fast })
    expect((await catchErr(c.version())).code).toBe('PVE_TRANSIENT')
    expect(pve.requests).toHaveLength(3)
    await c.close()
  })

  it('never retries a write, and never retries a permanent read error', async () => {
    pve.handle(() => pveError(596, 'Connection timed out'))
    const c = trusted({ retry: fast })
    expect((await catchErr(c.createGuest('pve1', 'qemu', { vmid: 100 }))).code).toBe('PVE_TRANSIENT')
    expect(pve.requests).toHaveLength(1)
    expect(c.writes).toBe(1)
    pve.handle(() => pveError(500, "Configuration file 'nodes/pve1/qemu-server/999.conf' does not exist"))
    expect((await catchErr(c.guestConfig('pve1', 'qemu', 999))).code).toBe('PVE_NOT_FOUND')
    expect(pve.requests).toHaveLength(2)
    await c.close()
  })

  it('network failures are transient (connection refused)', async () => {
    const closed = await startLocalPve()
    const url = closed.url
    await closed.close()
    const c = createPveClient({ baseUrl: url, auth: token, tls: { ca: pve.caPem }, retry: { retries: 0 } })
    const err = await catchErr(c.version())
    expect(err.code).toBe('PVE_TRANSIENT')
    expect(err.message).toMatch(/ECONNREFUSED|network/)
    await c.close()
  })

  it('times out per request', async () => {
    pve.handle(() => ({ ...ok(null), delayMs: 500 }))
    const c = trusted({
      timeoutMs: 50,
      retry: { retries: 0 },
    })
    const err = await catchErr(c.start('pve1', 'qemu', 100))
    expect(err.code).toBe('PVE_TRANSIENT')
    expect(err.message).toMatch(/no answer within 50 ms; the change may still have been applied/)
    await c.close()
  })

  it('cancels with an AbortSignal', async () => {
    pve.handle(() => ({ ...ok(null), delayMs: 500 }))
    const c = trusted()
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 20)
    expect((await catchErr(c.version({ signal: ac.signal }))).code).toBe('PVE_ABORTED')
    await c.close()
  })

  it('keeps at most maxInFlight requests open', async () => {
    let open = 0
    let peak = 0
    pve.handle(async () => {
      open++
      peak = Math.max(peak, open)
      await new Promise((r) => setTimeout(r, 100))
      open--
      return ok({ version: '9.1.1', release: '9.1' })
    })
    const c = trusted({ maxInFlight: 2 })
    await Promise.all(Array.from({ length: 8 }, () => c.version()))
    expect(peak).toBe(2)
    await c.close()
  })

  it('answers that are not a {data} envelope are PVE_PROTOCOL', async () => {
    pve.handle(() => ({ status: 200, body: '<html>proxy</html>' }))
    const c = trusted()
    expect((await catchErr(c.version())).code).toBe('PVE_PROTOCOL')
    await c.close()
  })
})

describe('read-only client', () => {
  it('has no write method at all and sends only GETs', async () => {
    const ro = createPveReadOnlyClient({ baseUrl: pve.url, auth: token, tls: { ca: pve.caPem } })
    const writes = [
      'createGuest',
      'cloneGuest',
      'updateConfig',
      'resizeDisk',
      'start',
      'shutdown',
      'stop',
      'reboot',
      'markTemplate',
      'deleteGuest',
      'downloadUrl',
      'readOnly',
      'request',
    ]
    for (const name of writes) expect(name in ro).toBe(false)
    // @ts-expect-error the read-only type has no write methods
    expect(ro.createGuest).toBeUndefined()
    await ro.version()
    // even a caller that smuggles a method and a body past the types sends a plain GET
    const smuggled = { pathParams: {}, method: 'DELETE', body: { purge: 1 } } as unknown as Parameters<typeof ro.get>[1]
    await ro.get('/version', smuggled)
    expect(pve.requests.map((r) => [r.method, r.body])).toEqual([
      ['GET', ''],
      ['GET', ''],
    ])
    await ro.close()
  })
})

describe('bounded answers', () => {
  // a gzip bomb: 1 MiB of zeros inside a JSON string inflates past the limit from a body of about 1 KiB
  const bomb = gzipSync(Buffer.concat([Buffer.from('{"data":"'), Buffer.alloc(1024 * 1024, 0x30), Buffer.from('"}')]))

  it('a gzip answer that inflates past maxResponseBytes fails PVE_PROTOCOL once, without retries', async () => {
    pve.handle(() => ({ raw: bomb, headers: { 'content-encoding': 'gzip' } }))
    const c = trusted({
      retry: fast,
      maxResponseBytes: 64 * 1024,
    })
    const err = await catchErr(c.version())
    expect(err.code).toBe('PVE_PROTOCOL')
    expect(err.message).toMatch(/answer larger than 65536 bytes/)
    expect(err.transient).toBe(false)
    expect(pve.requests).toHaveLength(1)
    await c.close()
  })

  it('a plain answer longer than the limit is refused while it is read', async () => {
    const data = 'x'.repeat(200 * 1024)
    pve.handle(() => ok(data))
    const c = trusted({
      retry: fast,
      maxResponseBytes: 64 * 1024,
    })
    expect((await catchErr(c.version())).code).toBe('PVE_PROTOCOL')
    expect(pve.requests).toHaveLength(1)
    await c.close()
  })

  it('answers within the limit, gzip or not, decode as before; a corrupt gzip body is a protocol error', async () => {
    const body = JSON.stringify({ data: { version: '9.1.1', release: '9.1', repoid: 'x'.repeat(4000) } })
    pve.handle(() => ({ raw: gzipSync(body), headers: { 'content-encoding': 'gzip' } }))
    const c = trusted({
      retry: fast,
      maxResponseBytes: 64 * 1024,
    })
    expect((await c.version()).version).toBe('9.1.1')
    pve.handle(() => ({ raw: Buffer.from('not gzip at all'), headers: { 'content-encoding': 'gzip' } }))
    expect((await catchErr(c.version())).code).toBe('PVE_PROTOCOL')
    await c.close()
  })
})

describe('path parameters', () => {
  it('are encoded, and a dot segment (a node named "..") is refused before sending', async () => {
    const c = trusted({ retry: fast })
    pve.handle(() => ok([]))
    await c.get('/nodes/{node}/qemu', { pathParams: { node: 'a/b?c' } })
    expect(pve.requests.at(-1)?.url).toBe('/api2/json/nodes/a%2Fb%3Fc/qemu')
    pve.requests.length = 0
    for (const node of ['..', '.']) {
      const err = await catchErr(c.get('/nodes/{node}/qemu', { pathParams: { node } }))
      expect(err.code).toBe('PVE_CONFIG')
      expect(err.message).toMatch(/dot segment; refused/)
    }
    expect(pve.requests).toHaveLength(0)
    await c.close()
  })
})
