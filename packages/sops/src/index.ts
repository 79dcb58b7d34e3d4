export { SopsError, isSopsError, formatPath, type SopsErrorCode } from './errors.js'
export { Secret, SENSITIVE, type LeafType, type LeafValue } from './secret.js'
export { DecryptedDocument, toKeyPath, type KeyPath, type PlainNode, type RevealedValue } from './document.js'
export {
  decryptSops,
  decryptSopsFile,
  parseSops,
  resolveDataKey,
  decryptParsed,
  type DecryptOptions,
  type KeyOptions,
  type ParsedSops,
} from './decrypt.js'
export {
  discoverIdentities,
  defaultKeysFile,
  identitiesFromStrings,
  parseIdentities,
  type AgeIdentity,
  type DiscoveryOptions,
  type DiscoveryResult,
  type Env,
} from './identities.js'
export type { CryptRule } from './rules.js'
export type { SopsFormat } from './parse.js'
export type { AgeStanza, SopsMetadata } from './metadata.js'
export { encryptSops, sealMac, SOPS_FORMAT_VERSION, type EncryptOptions } from './encrypt.js'
export {
  mergeSopsFile,
  mergeSopsText,
  type SecretAddition,
  type MergeOptions,
  type MergeResult,
  type MergeTextResult,
} from './update.js'
export { writeFileAtomic, tmpPathFor } from './fsutil.js'
export {
  readCredentials,
  loadCredentials,
  parseCloudInitRef,
  SopsCredentials,
  type CloudInitKind,
  type CloudInitRef,
  type CredentialsOptions,
} from './credentials.js'
export { findSopsConfig, creationRuleFor, loadCreationRule, type CreationRule } from './sopsconfig.js'
export { ageKeyFile, type AgeKeyFile } from './keygen.js'
export { sopsRecipients, sealToRecipients, openSealed } from './seal.js'
