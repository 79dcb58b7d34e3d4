/** `@proxops/pve-client`: a typed, safe Proxmox VE API client. Pure codecs live in `@proxops/pve-client/wire`. */
export {
  createPveClient,
  createPveReadOnlyClient,
  PveClient,
  PveReadOnlyClient,
  type PveClientOptions,
  type CallOptions,
} from './client.js'
export type { TransportOptions, RequestEvent, ClientNotice, Method } from './transport.js'
export type { AuthOptions, TokenAuth, TicketAuth } from './auth.js'
export type { TlsOptions, Logger } from './tls.js'
export { normaliseFingerprint } from './tls.js'
export { Secret } from './secret.js'
export {
  PveError,
  PveNotFoundError,
  PveAlreadyExistsError,
  PveLockedError,
  PveLockTimeoutError,
  PveDigestMismatchError,
  PveParamError,
  PveAuthError,
  PvePermissionError,
  PveNotImplementedError,
  PveTransientError,
  PveTlsError,
  PveTaskFailedError,
  PveTaskTimeoutError,
  isPveError,
  type PveErrorCode,
} from './errors.js'
export { classifyMessage } from './classify.js'
export { retryOnLockTimeout, isLockTimeout, backoffDelay, type BackoffOptions, type LockRetryOptions } from './retry.js'
export { isTaskSuccess, assertTaskOk, type TaskLogPage } from './tasks.js'
export type {
  GuestType,
  VersionInfo,
  NodeInfo,
  NodeStatus,
  ClusterResource,
  GuestListItem,
  GuestConfig,
  PendingEntry,
  GuestStatus,
  StorageInfo,
  StorageContentItem,
  TaskRef,
  TaskStatus,
  TaskLogLine,
  TaskResult,
  WaitOptions,
  PveParams,
  GuestFirewall,
  FirewallWrite,
} from './wire/types.js'
