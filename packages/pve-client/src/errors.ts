/**
 * One error taxonomy for everything the client does. `code` is stable (match on it, not on messages).
 * Messages carry the method, the path template and PVE's message; never a credential, a header, a request
 * body or query values (those may hold passwords).
 */
export type PveErrorCode =
  | 'PVE_NOT_FOUND'
  | 'PVE_ALREADY_EXISTS'
  | 'PVE_LOCKED'
  | 'PVE_LOCK_TIMEOUT'
  | 'PVE_DIGEST_MISMATCH'
  | 'PVE_PARAM'
  | 'PVE_AUTH'
  | 'PVE_PERMISSION'
  | 'PVE_NOT_IMPLEMENTED'
  | 'PVE_TRANSIENT'
  | 'PVE_FAILED'
  | 'PVE_TASK_FAILED'
  | 'PVE_TASK_TIMEOUT'
  | 'PVE_TLS'
  | 'PVE_TLS_FINGERPRINT'
  | 'PVE_ABORTED'
  | 'PVE_PROTOCOL'
  | 'PVE_CONFIG'

export interface PveErrorInit {
  /** HTTP status, when there was a response */
  status?: number
  method?: string
  /** the path template, e.g. `/nodes/{node}/qemu/{vmid}/config` */
  path?: string
  /** PVE's own message (body `message` or the reason phrase) */
  pveMessage?: string
  cause?: unknown
}

export class PveError extends Error {
  override name = 'PveError'
  readonly code: PveErrorCode
  readonly status: number | undefined
  readonly method: string | undefined
  readonly path: string | undefined
  readonly pveMessage: string | undefined

  constructor(code: PveErrorCode, message: string, init: PveErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause })
    this.code = code
    this.status = init.status
    this.method = init.method
    this.path = init.path
    this.pveMessage = init.pveMessage
  }

  /** Whether repeating the same request may succeed (network trouble, 5xx from a proxy, 595/596/597). */
  get transient(): boolean {
    return this.code === 'PVE_TRANSIENT'
  }
}

export class PveNotFoundError extends PveError {
  override name = 'PveNotFoundError'
}
export class PveAlreadyExistsError extends PveError {
  override name = 'PveAlreadyExistsError'
}
export class PveLockedError extends PveError {
  override name = 'PveLockedError'
  /** the config `lock` value, e.g. `clone` */
  lock: string | undefined
}
export class PveLockTimeoutError extends PveError {
  override name = 'PveLockTimeoutError'
}
export class PveDigestMismatchError extends PveError {
  override name = 'PveDigestMismatchError'
}
export class PveParamError extends PveError {
  override name = 'PveParamError'
  /** PVE's per-parameter messages (`errors` in the body) */
  params: Readonly<Record<string, string>> = {}
}
export class PveAuthError extends PveError {
  override name = 'PveAuthError'
}
export class PvePermissionError extends PveError {
  override name = 'PvePermissionError'
}
export class PveNotImplementedError extends PveError {
  override name = 'PveNotImplementedError'
}
export class PveTransientError extends PveError {
  override name = 'PveTransientError'
}
export class PveTlsError extends PveError {
  override name = 'PveTlsError'
}
export class PveTaskFailedError extends PveError {
  override name = 'PveTaskFailedError'
  upid = ''
  exitstatus = ''
  /** the last lines of the task log */
  log: readonly string[] = []
  /** how the exit status classifies (e.g. PVE_LOCK_TIMEOUT when the task could not get its lock) */
  reason: PveErrorCode = 'PVE_FAILED'
}
export class PveTaskTimeoutError extends PveError {
  override name = 'PveTaskTimeoutError'
  upid = ''
  /** the last status seen; the task may still finish on PVE */
  lastStatus: string | undefined
}

export function isPveError(err: unknown, code?: PveErrorCode): err is PveError {
  return err instanceof PveError && (code === undefined || err.code === code)
}
