/**
 * Opt-in authentication of the daemon's HTTP endpoints (docs/operations.md, "HTTP endpoints"). The daemon binds
 * to 127.0.0.1 by default, where the host's users are the audience; bound elsewhere, the operator sets a bearer
 * token, basic-auth credentials, or both, in the daemon's environment (never in the repository). Credentials are
 * compared in constant time.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { isIP } from 'node:net'
import { CliError } from '../errors.js'

export const HTTP_TOKEN_ENV = 'PROXOPS_HTTP_TOKEN'
export const HTTP_BASIC_ENV = 'PROXOPS_HTTP_BASIC_AUTH'

export interface HttpAuth {
  /** `Authorization: Bearer <token>` */
  bearer?: string
  /** `Authorization: Basic base64(user:password)` */
  basic?: { user: string; password: string }
}

/** The HTTP credentials the environment sets; undefined when it sets none. */
export function httpAuthFromEnv(env: Readonly<Record<string, string | undefined>>): HttpAuth | undefined {
  const token = env[HTTP_TOKEN_ENV]?.trim()
  const basic = env[HTTP_BASIC_ENV]
  const auth: HttpAuth = {}
  if (token) auth.bearer = token
  if (basic !== undefined && basic !== '') {
    const colon = basic.indexOf(':')
    if (colon < 1 || colon === basic.length - 1)
      throw new CliError('USAGE', `${HTTP_BASIC_ENV} must be user:password, both non-empty`)
    auth.basic = { user: basic.slice(0, colon), password: basic.slice(colon + 1) }
  }
  return auth.bearer !== undefined || auth.basic !== undefined ? auth : undefined
}

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest()
const same = (a: string, b: string): boolean => timingSafeEqual(digest(a), digest(b))

/** Whether a request's `Authorization` header carries credentials that `auth` accepts. */
export function authorized(auth: HttpAuth, header: string | undefined): boolean {
  const m = /^(\S+)\s+(\S+)\s*$/.exec(header ?? '')
  if (!m) return false
  const scheme = m[1]!.toLowerCase()
  const value = m[2]!
  if (scheme === 'bearer' && auth.bearer !== undefined) return same(value, auth.bearer)
  if (scheme === 'basic' && auth.basic !== undefined) {
    const expected = `${auth.basic.user}:${auth.basic.password}`
    return same(Buffer.from(value, 'base64').toString('utf8'), expected)
  }
  return false
}

/** The `WWW-Authenticate` challenges of a 401: basic first, so that a browser asks for a user and password. */
export function challenges(auth: HttpAuth): string {
  return [
    ...(auth.basic ? ['Basic realm="proxops", charset="UTF-8"'] : []),
    ...(auth.bearer !== undefined ? ['Bearer realm="proxops"'] : []),
  ].join(', ')
}

/** Whether a listen host is reachable from this host only. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (h === 'localhost') return true
  if (isIP(h) === 4) return h.startsWith('127.')
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h)
  return false
}
