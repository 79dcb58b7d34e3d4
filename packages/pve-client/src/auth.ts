import { PveAuthError, PveError } from './errors.js'
import { Secret, asSecret } from './secret.js'
import { toStr } from './wire/scalars.js'

/** API token: `Authorization: PVEAPIToken=user@realm!tokenid=secret`; no CSRF token needed. */
export interface TokenAuth {
  type: 'token'
  /** `user@realm!tokenid`, e.g. `root@pam!proxops` */
  tokenId: string
  secret: string | Secret
}

/** Ticket: `POST /access/ticket`, then the `PVEAuthCookie` cookie and `CSRFPreventionToken` on non-GET. */
export interface TicketAuth {
  type: 'ticket'
  /** `root@pam` (or a user without realm plus `realm`) */
  username: string
  password: string | Secret
  realm?: string
  /** renew the ticket once it is this old (PVE tickets live 2 h); default 1 h */
  renewAfterMs?: number
}

export type AuthOptions = TokenAuth | TicketAuth

export type LoginFn = (params: Record<string, string>, signal?: AbortSignal) => Promise<unknown>

/** What the transport needs from an auth method. */
export interface AuthProvider {
  headers(method: string, signal?: AbortSignal): Promise<Record<string, string>>
  /** After a 401: forget the credential state; true when one more attempt can succeed (ticket re-login). */
  invalidate(): boolean
  /** every secret value this provider holds, for scrubbing messages */
  secrets(): string[]
}

const TOKEN_ID = /^[^\s@!=]+@[^\s@!=]+![A-Za-z][A-Za-z0-9._-]*$/

export function tokenAuth(options: TokenAuth): AuthProvider {
  if (!TOKEN_ID.test(options.tokenId)) {
    throw new PveError('PVE_CONFIG', 'auth.tokenId must look like user@realm!tokenid')
  }
  const secret = asSecret(options.secret)
  if (secret.empty) throw new PveError('PVE_CONFIG', 'auth.secret is empty')
  const header = new Secret(`PVEAPIToken=${options.tokenId}=${secret.reveal()}`)
  return {
    headers: async () => ({ Authorization: header.reveal() }),
    invalidate: () => false,
    secrets: () => [secret.reveal(), header.reveal()],
  }
}

interface TicketState {
  ticket: Secret
  csrf: Secret
  obtainedAt: number
}

const TICKET_LIFETIME_MS = 2 * 60 * 60 * 1000

export function ticketAuth(options: TicketAuth, login: LoginFn, now: () => number = Date.now): AuthProvider {
  const password = asSecret(options.password)
  if (options.username === '' || password.empty)
    throw new PveError('PVE_CONFIG', 'auth.username and auth.password are required')
  const renewAfterMs = options.renewAfterMs ?? 60 * 60 * 1000
  let state: TicketState | undefined
  let pending: Promise<TicketState> | undefined

  const obtain = async (signal?: AbortSignal): Promise<TicketState> => {
    const params: Record<string, string> = { username: options.username }
    if (options.realm !== undefined) params.realm = options.realm
    // Renew by posting the still-valid ticket as the password; fall back to a full login.
    if (state && now() - state.obtainedAt < TICKET_LIFETIME_MS - 60_000) {
      try {
        return decodeTicket(await login({ ...params, password: state.ticket.reveal() }, signal), now())
      } catch (err) {
        if (err instanceof PveError && err.code === 'PVE_ABORTED') throw err
      }
    }
    return decodeTicket(await login({ ...params, password: password.reveal() }, signal), now())
  }

  const current = async (signal?: AbortSignal): Promise<TicketState> => {
    if (state && now() - state.obtainedAt < renewAfterMs) return state
    // one login at a time; concurrent requests share it
    pending ??= obtain(signal).finally(() => {
      pending = undefined
    })
    state = await pending
    return state
  }

  return {
    async headers(method, signal) {
      const s = await current(signal)
      const h: Record<string, string> = { Cookie: `PVEAuthCookie=${encodeURIComponent(s.ticket.reveal())}` }
      if (method !== 'GET') h.CSRFPreventionToken = s.csrf.reveal()
      return h
    },
    invalidate() {
      state = undefined
      return true
    },
    secrets() {
      const out = [password.reveal()]
      if (state) out.push(state.ticket.reveal(), state.csrf.reveal())
      return out
    },
  }
}

function decodeTicket(data: unknown, at: number): TicketState {
  if (data === null || typeof data !== 'object')
    throw new PveError('PVE_PROTOCOL', 'POST /access/ticket: unexpected answer')
  const d = data as Record<string, unknown>
  if (d.NeedTFA !== undefined && d.NeedTFA !== 0 && d.NeedTFA !== '0') {
    throw new PveAuthError(
      'PVE_AUTH',
      'POST /access/ticket: the user needs two-factor authentication, which the client does not support; use an API token',
    )
  }
  if (d.ticket == null || d.CSRFPreventionToken == null) {
    throw new PveError('PVE_PROTOCOL', 'POST /access/ticket: answer lacks ticket or CSRFPreventionToken')
  }
  return { ticket: new Secret(toStr(d.ticket)), csrf: new Secret(toStr(d.CSRFPreventionToken)), obtainedAt: at }
}
