/**
 * `@proxops/pve-client/wire`: pure codecs for PVE's value grammar, the client's wire types and the small
 * helpers every ProxOps library shares (PVE's lists and tags, endpoint URLs, bounded concurrency, the secret
 * marker). No I/O.
 */
export { WireError, type WireErrorCode } from './errors.js'
export { toInt, toNumber, toBool, isTrue, toStr, optInt, optNumber, optBool, optStr } from './scalars.js'
export {
  parsePropertyString,
  formatPropertyString,
  type PropertyStringOptions,
  type FormatPropertyStringOptions,
} from './property-string.js'
export { parseSize, formatSize, parseResize, formatResize, type ResizeSpec } from './size.js'
export { splitList } from './list.js'
export { parseTags, readTags, normaliseTags, formatTags, normaliseTagString } from './tags.js'
export { encodeSshKeys, decodeSshKeys, isUrlEncoded, sshKeyLines, sshKeySet } from './sshkeys.js'
export { parseUpid, formatUpid, isUpid, type Upid } from './upid.js'
export { decodeGuestConfig, type DecodedGuestConfig } from './config.js'
export { encodeParams, type ParamValue } from './form.js'
export { isLockTimeoutMessage } from './messages.js'
export { Limiter, mapLimit } from './limit.js'
export { baseUrlProblem, normaliseBaseUrl } from './url.js'
export { SENSITIVE } from './sensitive.js'
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
  LocalDisk,
  MigratePrecondition,
  StorageConfigItem,
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
  HaObject,
  HaItem,
  PoolInfo,
  PoolMember,
  PoolDetail,
  SnapshotInfo,
} from './types.js'
export type { AccessGroup, AccessRole, AccessToken, AccessUser, AclEntry, NewToken, RealmInfo } from './access.js'
export {
  decodeSdnObjects,
  decodeSdnZoneStatus,
  sdnConfigValues,
  type SdnKind,
  type SdnObject,
  type SdnZoneStatus,
} from './sdn.js'
