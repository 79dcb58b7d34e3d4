/** `@proxops/pve-client/wire`: pure codecs for PVE's value grammar. No I/O. */
export { WireError, type WireErrorCode } from './errors.js'
export { toInt, toNumber, toBool, toStr, optInt, optNumber, optBool, optStr } from './scalars.js'
export {
  parsePropertyString,
  formatPropertyString,
  type PropertyStringOptions,
  type FormatPropertyStringOptions,
} from './property-string.js'
export { parseSize, formatSize, parseResize, formatResize, sameSize, type ResizeSpec } from './size.js'
export { parseTags, normaliseTags, formatTags, normaliseTagString, sameTags } from './tags.js'
export { encodeSshKeys, decodeSshKeys, isUrlEncoded, sshKeySet } from './sshkeys.js'
export { parseUpid, formatUpid, isUpid, type Upid } from './upid.js'
export { decodeGuestConfig, configValue, type DecodedGuestConfig } from './config.js'
export { encodeParams, type ParamValue } from './form.js'
export { isLockTimeoutMessage } from './messages.js'
