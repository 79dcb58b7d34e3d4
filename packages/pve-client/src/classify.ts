import {
  PveAlreadyExistsError,
  PveAuthError,
  PveDigestMismatchError,
  PveError,
  type PveErrorCode,
  PveLockTimeoutError,
  PveLockedError,
  PveNotFoundError,
  PveNotImplementedError,
  PveParamError,
  PvePermissionError,
  PveTlsError,
  PveTransientError,
} from './errors.js'
import { isLockTimeoutMessage } from './wire/messages.js'

/**
 * Pure classification of PVE answers and transport failures into the error taxonomy. PVE reports most handler
 * failures as 500 with a message (it has no 404/409), so the message decides the class.
 */

const LOCKED = /\b(?:VM|CT) is locked \(([^)]*)\)/
const DIGEST =
  /checksum mismatch \(file change by other user\?\)|detected modified configuration - file changed by other user/
const ALREADY_EXISTS = /already exists/i
const NOT_FOUND = /does not exist|\bno such\b/i
/** qemu-server dies with 500 (not 403) for root-only options */
const PERMISSION = /only root can |only allowed for root@pam|Permission check failed/
/** 500s that mean "try again later", not "the handler refused" */
const TRANSIENT_500 =
  /got no worker upid|Connection refused|No route to host|Connection timed out|Broken pipe|temporarily unavailable/i
const TRANSIENT_STATUS = new Set([408, 429, 502, 503, 504, 595, 596, 597, 598, 599])

/** Classifies a message (a 500's text or a task's exit status) by its meaning; undefined when nothing matches. */
export function classifyMessage(message: string): PveErrorCode | undefined {
  if (isLockTimeoutMessage(message)) return 'PVE_LOCK_TIMEOUT'
  if (LOCKED.test(message)) return 'PVE_LOCKED'
  if (DIGEST.test(message)) return 'PVE_DIGEST_MISMATCH'
  if (ALREADY_EXISTS.test(message)) return 'PVE_ALREADY_EXISTS'
  if (NOT_FOUND.test(message)) return 'PVE_NOT_FOUND'
  if (PERMISSION.test(message)) return 'PVE_PERMISSION'
  return undefined
}

export interface HttpFailure {
  status: number
  /** the HTTP reason phrase: PVE puts the first line of its message there */
  statusText: string
  /** the parsed JSON body, if any (401 has none) */
  body: unknown
  method: string
  path: string
}

/** The PVE message: body `message` (PVE >= 8.4) or else the reason phrase (older PVE). */
export function pveMessageOf(failure: Pick<HttpFailure, 'statusText' | 'body'>): string {
  const body = failure.body
  if (body !== null && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    const m = (body as { message: string }).message.trim()
    if (m !== '') return m
  }
  return failure.statusText.trim()
}

export function paramErrorsOf(body: unknown): Record<string, string> {
  if (body === null || typeof body !== 'object') return {}
  const errors = (body as { errors?: unknown }).errors
  if (errors === null || typeof errors !== 'object') return {}
  const out: [string, string][] = []
  for (const [k, v] of Object.entries(errors as Record<string, unknown>)) {
    out.push([k, typeof v === 'string' ? v.trim() : JSON.stringify(v)])
  }
  return Object.fromEntries(out)
}

export function classifyHttpFailure(f: HttpFailure): PveError {
  const pveMessage = pveMessageOf(f)
  const params = paramErrorsOf(f.body)
  const paramText = Object.entries(params)
    .map(([k, v]) => `${k}: ${v}`)
    .join('; ')
  const detail = paramText === '' ? pveMessage : `${pveMessage} (${paramText})`
  const message = `${f.method} ${f.path}: ${f.status} ${detail}`.trim()
  const init = { status: f.status, method: f.method, path: f.path, pveMessage }

  if (f.status === 401) return new PveAuthError('PVE_AUTH', message, init)
  if (f.status === 403) return new PvePermissionError('PVE_PERMISSION', message, init)
  if (f.status === 501) return new PveNotImplementedError('PVE_NOT_IMPLEMENTED', message, init)
  if (TRANSIENT_STATUS.has(f.status)) return new PveTransientError('PVE_TRANSIENT', message, init)

  if (f.status === 400 || f.status === 500) {
    const meaning = classifyMessage(`${pveMessage}\n${Object.values(params).join('\n')}`)
    switch (meaning) {
      case 'PVE_LOCK_TIMEOUT':
        return new PveLockTimeoutError(meaning, message, init)
      case 'PVE_LOCKED': {
        const err = new PveLockedError(meaning, message, init)
        err.lock = LOCKED.exec(`${pveMessage}\n${Object.values(params).join('\n')}`)?.[1]
        return err
      }
      case 'PVE_DIGEST_MISMATCH':
        return new PveDigestMismatchError(meaning, message, init)
      case 'PVE_ALREADY_EXISTS':
        return new PveAlreadyExistsError(meaning, message, init)
      case 'PVE_NOT_FOUND':
        return new PveNotFoundError(meaning, message, init)
      case 'PVE_PERMISSION':
        return new PvePermissionError(meaning, message, init)
      default:
        break
    }
    if (f.status === 400) {
      const err = new PveParamError('PVE_PARAM', message, init)
      err.params = params
      return err
    }
    if (pveMessage === '' || pveMessage === 'Internal Server Error' || TRANSIENT_500.test(pveMessage)) {
      return new PveTransientError('PVE_TRANSIENT', message, init)
    }
    return new PveError('PVE_FAILED', message, init)
  }
  // 506 = PVE refused the Content-Type: a client bug, repeating cannot help
  if (f.status >= 500 && f.status !== 506) return new PveTransientError('PVE_TRANSIENT', message, init)
  return new PveError('PVE_FAILED', message, init)
}

const TLS_CODE = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/

/** fetch failures (no HTTP answer): TLS problems are permanent, everything else is transient. */
export function classifyNetworkFailure(err: unknown, method: string, path: string): PveError {
  const cause = findCode(err)
  const init = { method, path, cause: err }
  if (cause?.code === 'ERR_PVE_FINGERPRINT') {
    return new PveTlsError('PVE_TLS_FINGERPRINT', `${method} ${path}: ${cause.message} (check tls.fingerprint)`, init)
  }
  if (cause && TLS_CODE.test(cause.code)) {
    return new PveTlsError(
      'PVE_TLS',
      `${method} ${path}: TLS verification failed (${cause.code}); pass tls.ca (e.g. /etc/pve/pve-root-ca.pem) or tls.fingerprint`,
      init,
    )
  }
  const what = cause ? cause.code : deepestMessage(err)
  return new PveTransientError('PVE_TRANSIENT', `${method} ${path}: network error (${what})`, init)
}

/** `fetch failed` says nothing; the innermost cause does (`bad port`, `other side closed`). */
function deepestMessage(err: unknown): string {
  let msg = 'network error'
  let e: unknown = err
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    msg = e.message
    e = (e as Error & { cause?: unknown }).cause
  }
  return msg
}

function findCode(err: unknown): { code: string; message: string } | undefined {
  let e: unknown = err
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    const code = (e as NodeJS.ErrnoException).code
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET' && code !== 'ABORT_ERR')
      return { code, message: e.message }
    e = (e as Error & { cause?: unknown }).cause
  }
  return undefined
}
