/**
 * The public surface of @proxops/schema: what the other ProxOps packages and embedders use (packages/schema/README.md
 * lists it). The rest of the package (name rules, regexes, config schemas, the graph's building blocks) is reached
 * through these: parseManifest and loadRepository apply every rule.
 */
export { ErrorCodes, formatError, sortErrors, type ErrorCode, type SchemaError } from './errors.js'
export { GiB, MiB, formatGiB, formatQuantity, parseQuantity, type QuantityResult } from './quantity.js'
export {
  ALLOW_EMPTY_KINDS,
  API_VERSION,
  KINDS,
  KIND_ALIASES,
  KIND_ROOT_OF,
  canonicalKind,
  type AllowEmptyKind,
  type Kind,
} from './kinds.js'
export type {
  ArtifactManifest,
  BackupJobManifest,
  BackupJobSpec,
  ContainerManifest,
  CtTemplateManifest,
  DiskImageManifest,
  DisruptionPolicy,
  FirewallSpec,
  GuestManifest,
  HaSpec,
  IpConfig,
  IsoManifest,
  LxcManifest,
  LxcNic,
  LxcSpec,
  Manifest,
  ManifestOfKind,
  PoolManifest,
  AccessManifest,
  AclManifest,
  GroupManifest,
  RoleManifest,
  TokenManifest,
  UserManifest,
  ZoneManifest,
  VNetManifest,
  SubnetManifest,
  SdnControllerManifest,
  PowerState,
  StorageManifest,
  StorageSpec,
  ClusterOptionsManifest,
  ClusterOptionsSpec,
  QemuManifest,
  TemplateCtManifest,
  TemplateVmManifest,
  VmDisk,
  VmHardware,
  VmManifest,
  VmNic,
  VmSpec,
} from './manifest/types.js'
export { CLOUD_INIT_SLOT, cdSlot } from './kinds/guest/drive-slots.js'
export {
  STORAGE_OPTIONS,
  STORAGE_SECRETS,
  STORAGE_TYPES,
  optionFixed,
  optionHas,
  secretRefField,
  type StorageOption,
  type StorageOptionKey,
  type StorageSecretKey,
  type StorageType,
} from './kinds/storage/options.js'
export { CLUSTER_OPTIONS, type ClusterOptionKey } from './kinds/cluster-options/options.js'
export {
  parseManifest,
  formatPath,
  DISRUPTION_POLICIES,
  SAFETY_SNAPSHOTS,
  SUSPEND,
  PRUNE,
  IGNORE_FIELDS,
  IGNORE_FIELD_PATH,
  ignoreFieldPaths,
  DEFAULT_SAFETY_SNAPSHOT_KEEP,
  type ManifestIssue,
  type ParseResult,
  type PathKey,
} from './manifest/parse.js'
export {
  PVE_REQUIRES,
  FORMAT_REQUIRES,
  requiresOf,
  unmetRequires,
  withRequired,
  type PveEndpoint,
  type RequiresRules,
  type UnmetRequire,
} from './pve-requires.js'
export {
  isGitUrl,
  parseListen,
  layerProcessConfig,
  legacyConflicts,
  legacySettings,
  TOKEN_VALUE,
  AUTH_METHODS,
  LOG_LEVELS,
  type AuthMethod,
  type LogLevel,
  type ClusterEntry,
  type ConfigLayer,
  type ProcessConfig,
} from './config.js'
export { parseYaml, type YamlFile, type YamlLimits } from './yaml.js'
export {
  identityIndex,
  conflictMessage,
  type Identity,
  type IdentityClaim,
  type IdentityConflict,
  type IdentityIndex,
} from './identity.js'
export {
  poolNeeded,
  clusterDependencies,
  type ClusterDependencies,
  type DependencyGraph,
  type DependencyProblem,
  type ResourceKey,
} from './graph.js'
export { nearest } from './suggest.js'
export { aclEntries, normalizeAclPath, tokenFullId, validAclPath, validUserid } from './kinds/access/exports.js'
export { nodeFs, type FileInfo, type RepoFs } from './loader/fs.js'
export { discoverRepository, type DiscoveryResult } from './loader/discover.js'
export {
  loadRepository,
  readConfigFile,
  parseConfigText,
  readRepositoryFile,
  type ConfigFileOptions,
  type ConfigFileResult,
  type LoadOptions,
  type LoadLimits,
  type LoadedResource,
  type LoadedCluster,
  type ClusterIndex,
  type RepositoryModel,
  type UnlistedFile,
} from './loader/load.js'
export { calendarEventData } from './pve-data.js'
