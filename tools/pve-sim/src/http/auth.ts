/**
 * Authentication as pve-manager's HTTPServer.pm `auth_handler` and pve-access-control do it:
 * `PVEAPIToken=user@realm!id=secret` (no CSRF), or a `PVEAuthCookie` ticket from
 * `POST /access/ticket` with a `CSRFPreventionToken` on every non-GET. Tickets and CSRF tokens live 2 hours.
 * Tickets are signed with HMAC-SHA256 instead of PVE's RSA key: same shape, clients treat them as opaque.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Caller } from '../model/caller.js'
import { uriUnescape } from '../apidoc/route-index.js'

export const TICKET_LIFETIME_S = 7200
const CLOCK_SKEW_S = 300

export interface TokenEntry {
  /** `root@pam!proxops` */
  id: string
  secret: string
  revoked: boolean
}

/** An authentication failure: status 401 (or 401 from CSRF), reason phrase, empty body. */
export class AuthError extends Error {}

/** Formatter.pm `extract_auth_value`: `(?:^|\s)KEY(?:=| )([^;]*)`, URI-unescaped. */
export function extractAuthValue(header: string | undefined, key: string): string | undefined {
  if (!header) return undefined
  const m = new RegExp(`(?:^|\\s)${key}(?:=| )([^;]*)`).exec(header)
  const v = m?.[1]
  return v ? uriUnescape(v) : undefined
}

/** pve-access-control: `<userid>!<token name>`, the name `[A-Za-z][A-Za-z0-9.\-_]+` */
const TOKEN_ID_RE = /^([^\s:/]+@[A-Za-z][A-Za-z0-9.\-_]+)!([A-Za-z][A-Za-z0-9.\-_]+)$/

const hex8 = (t: number): string => Math.floor(t).toString(16).toUpperCase().padStart(8, '0')

export class AuthState {
  readonly tokens = new Map<string, TokenEntry>()
  private readonly secret = randomBytes(32)

  constructor(
    public rootPassword: string,
    tokens: { id: string; secret: string }[],
    private readonly nowS: () => number = () => Date.now() / 1000,
  ) {
    for (const t of tokens) this.addToken(t)
  }

  addToken(t: { id: string; secret: string }): void {
    if (!TOKEN_ID_RE.test(t.id))
      throw new Error(
        `pve-sim: token id '${t.id}' is not of the form user@realm!name (name: a letter, then 1+ of [A-Za-z0-9._-])`,
      )
    this.tokens.set(t.id, { id: t.id, secret: t.secret, revoked: false })
  }

  private sign(data: string): string {
    return createHmac('sha256', this.secret).update(data).digest('base64')
  }

  createTicket(userid: string): string {
    const plain = `PVE:${userid}:${hex8(this.nowS())}`
    return `${plain}::${this.sign(plain)}`
  }

  /** the user of a valid, unexpired ticket, else undefined */
  verifyTicket(ticket: string): string | undefined {
    const m = /^(PVE:([^:\s]+):([A-Z0-9]{8}))::(.+)$/.exec(ticket)
    if (!m) return undefined
    const expected = Buffer.from(this.sign(m[1] as string))
    const got = Buffer.from(m[4] as string)
    if (expected.length !== got.length || !timingSafeEqual(expected, got)) return undefined
    const age = this.nowS() - parseInt(m[3] as string, 16)
    if (age < -CLOCK_SKEW_S || age > TICKET_LIFETIME_S) return undefined
    return m[2]
  }

  /** `<8 hex time>:<base64 HMAC>` (Digest::SHA's base64, no padding) */
  createCsrf(userid: string): string {
    const ts = hex8(this.nowS())
    return `${ts}:${this.sign(`${ts}:${userid}`).replace(/=+$/, '')}`
  }

  verifyCsrf(userid: string, token: string | undefined): boolean {
    const m = token ? /^([A-Z0-9]{8}):(\S+)$/.exec(token) : null
    if (!m) return false
    if (this.sign(`${m[1]}:${userid}`).replace(/=+$/, '') !== m[2]) return false
    const age = this.nowS() - parseInt(m[1] as string, 16)
    return age >= -CLOCK_SKEW_S && age <= TICKET_LIFETIME_S
  }

  /** AccessControl::verify_token: split at the last `=`, `user@realm!name`, known, not revoked, secret matches */
  verifyToken(value: string): Caller | undefined {
    const m = /^(.*)=(.*)$/.exec(value)
    if (!m) return undefined
    const id = m[1] as string
    const t = TOKEN_ID_RE.exec(id)
    const entry = this.tokens.get(id)
    if (!t || !entry || entry.revoked || entry.secret !== m[2]) return undefined
    return { userid: t[1] as string, tokenid: t[2] as string, actor: id }
  }
}

export interface AuthInput {
  method: string
  relPath: string
  cookie: string | undefined
  authorization: string | undefined
  csrf: string | undefined
}

export type AuthOutcome =
  | { kind: 'ok'; caller: Caller; apiToken: boolean }
  /** unauthenticated endpoints (POST /access/ticket); `apiToken` tells whether a token header was present */
  | { kind: 'anonymous'; apiToken: boolean }

const NO_AUTH = new Set(['GET /access/domains', 'GET /access/ticket', 'POST /access/ticket'])

/** auth_handler: throws AuthError('No ticket' | 'Authentication failed!' | 'Permission denied - invalid csrf token'). */
export function authenticate(state: AuthState, input: AuthInput): AuthOutcome {
  const ticket =
    extractAuthValue(input.cookie, 'PVEAuthCookie') ?? extractAuthValue(input.authorization, 'PVEAuthCookie')
  const apiToken = ticket ? undefined : extractAuthValue(input.authorization, 'PVEAPIToken')
  if (NO_AUTH.has(`${input.method} ${input.relPath}`)) return { kind: 'anonymous', apiToken: apiToken !== undefined }
  if (apiToken !== undefined) {
    const caller = state.verifyToken(apiToken)
    if (!caller) throw new AuthError('Authentication failed!')
    return { kind: 'ok', caller, apiToken: true }
  }
  if (!ticket) throw new AuthError('No ticket')
  const userid = state.verifyTicket(ticket)
  if (!userid) throw new AuthError('Authentication failed!')
  if (input.method !== 'GET' && !state.verifyCsrf(userid, input.csrf))
    throw new AuthError('Permission denied - invalid csrf token')
  return { kind: 'ok', caller: { userid, actor: userid }, apiToken: false }
}
