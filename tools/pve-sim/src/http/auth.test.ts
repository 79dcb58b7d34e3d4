import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { AuthError, AuthState, authenticate, extractAuthValue, TICKET_LIFETIME_S } from './auth.js'

const SECRET = 'canary-secret-7f3a'
function state(now = { t: 1_800_000_000 }): { s: AuthState; now: { t: number } } {
  return { s: new AuthState('rootpw', [{ id: 'root@pam!gitops', secret: SECRET }], () => now.t), now }
}
const input = (over: Partial<Parameters<typeof authenticate>[1]>): Parameters<typeof authenticate>[1] => ({
  method: 'GET',
  relPath: '/version',
  cookie: undefined,
  authorization: undefined,
  csrf: undefined,
  ...over,
})
function failure(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    if (err instanceof AuthError) return err.message
    throw err
  }
  return 'no error'
}

describe('API tokens', () => {
  it('accepts PVEAPIToken=user@realm!id=secret without CSRF on any method; the actor is the token', () => {
    const { s } = state()
    const r = authenticate(s, input({ method: 'POST', authorization: `PVEAPIToken=root@pam!gitops=${SECRET}` }))
    expect(r).toEqual({
      kind: 'ok',
      apiToken: true,
      caller: { userid: 'root@pam', tokenid: 'gitops', actor: 'root@pam!gitops' },
    })
  })

  it('splits at the last = and URI-unescapes the header value', () => {
    const { s } = state()
    expect(extractAuthValue(`PVEAPIToken=root%40pam!gitops=${SECRET}`, 'PVEAPIToken')).toBe(`root@pam!gitops=${SECRET}`)
    expect(extractAuthValue('Bearer x', 'PVEAPIToken')).toBeUndefined()
    expect(s.verifyToken(`root@pam!gitops=${SECRET}`)?.actor).toBe('root@pam!gitops')
  })

  it('answers Authentication failed! for a wrong secret, unknown or revoked token', () => {
    const { s } = state()
    expect(failure(() => authenticate(s, input({ authorization: 'PVEAPIToken=root@pam!gitops=nope' })))).toBe(
      'Authentication failed!',
    )
    expect(failure(() => authenticate(s, input({ authorization: `PVEAPIToken=root@pam!other=${SECRET}` })))).toBe(
      'Authentication failed!',
    )
    ;(s.tokens.get('root@pam!gitops') as { revoked: boolean }).revoked = true
    expect(failure(() => authenticate(s, input({ authorization: `PVEAPIToken=root@pam!gitops=${SECRET}` })))).toBe(
      'Authentication failed!',
    )
  })

  it('refuses to configure a token id PVE could not have (name needs 2+ characters)', () => {
    expect(() => new AuthState('pw', [{ id: 'root@pam!t', secret: 'x' }])).toThrow(
      "pve-sim: token id 'root@pam!t' is not of the form user@realm!name",
    )
    expect(() => new AuthState('pw', [{ id: 'root!tk', secret: 'x' }])).toThrow(/not of the form/)
  })

  it('answers No ticket without credentials', () => {
    expect(failure(() => authenticate(state().s, input({})))).toBe('No ticket')
  })

  it('lets POST /access/ticket through unauthenticated, noting a token header', () => {
    expect(
      authenticate(
        state().s,
        input({ method: 'POST', relPath: '/access/ticket', authorization: 'PVEAPIToken=a@b!c=d' }),
      ),
    ).toEqual({ kind: 'anonymous', apiToken: true })
  })
})

describe('tickets and CSRF', () => {
  it('issues PVE:<user>:<8 HEX>::<sig> tickets valid for 2 h', () => {
    const { s, now } = state()
    const ticket = s.createTicket('root@pam')
    expect(ticket).toMatch(/^PVE:root@pam:[0-9A-F]{8}::\S+$/)
    expect(s.verifyTicket(ticket)).toBe('root@pam')
    now.t += TICKET_LIFETIME_S - 1
    expect(s.verifyTicket(ticket)).toBe('root@pam')
    now.t += 2
    expect(s.verifyTicket(ticket)).toBeUndefined()
  })

  it('rejects tampered tickets', () => {
    const { s } = state()
    const t = s.createTicket('root@pam')
    expect(s.verifyTicket(t.replace('root@pam', 'evil@pam'))).toBeUndefined()
    expect(s.verifyTicket(`${t}x`)).toBeUndefined()
  })

  it('takes the ticket from the cookie (or an Authorization PVEAuthCookie) and needs CSRF for non-GET', () => {
    const { s } = state()
    const ticket = s.createTicket('root@pam')
    const cookie = `PVEAuthCookie=${encodeURIComponent(ticket)}`
    expect(authenticate(s, input({ cookie }))).toMatchObject({ kind: 'ok', caller: { actor: 'root@pam' } })
    expect(authenticate(s, input({ authorization: `PVEAuthCookie=${ticket}` }))).toMatchObject({ kind: 'ok' })
    expect(failure(() => authenticate(s, input({ method: 'PUT', cookie })))).toBe(
      'Permission denied - invalid csrf token',
    )
    expect(failure(() => authenticate(s, input({ method: 'PUT', cookie, csrf: 'AAAAAAAA:bad' })))).toBe(
      'Permission denied - invalid csrf token',
    )
    expect(authenticate(s, input({ method: 'PUT', cookie, csrf: s.createCsrf('root@pam') }))).toMatchObject({
      kind: 'ok',
    })
  })

  it('CSRF tokens have PVE form <8 HEX>:<base64 without padding>', () => {
    expect(state().s.createCsrf('root@pam')).toMatch(/^[0-9A-F]{8}:[A-Za-z0-9+/]{43}$/)
  })

  it('never puts the token secret into an error message', () => {
    const { s } = state()
    const msg = failure(() => authenticate(s, input({ authorization: `PVEAPIToken=root@pam!gitops=${SECRET}x` })))
    expect(msg).not.toContain(SECRET)
  })

  it('a ticket verifies for its user exactly while younger than 2 h (property)', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z][a-z0-9._-]{0,10}@(pam|pve)$/),
        fc.integer({ min: 0, max: 3 * TICKET_LIFETIME_S }),
        (user, age) => {
          const { s, now } = state()
          const t = s.createTicket(user)
          const csrf = s.createCsrf(user)
          now.t += age
          const valid = age <= TICKET_LIFETIME_S
          expect(s.verifyTicket(t)).toBe(valid ? user : undefined)
          expect(s.verifyCsrf(user, csrf)).toBe(valid)
          expect(s.verifyCsrf(`${user}x`, csrf)).toBe(false)
        },
      ),
      { numRuns: 200 },
    )
  })
})
