export * from './errors.js'
export * from './quantity.js'
export * from './names.js'
export * from './kinds.js'
export * from './extra.js'
export * from './manifest/types.js'
export { manifestSchemas } from './manifest/schemas.js'
export {
  parseManifest,
  parseDependsOn,
  formatPath,
  DEPENDS_ON,
  DISRUPTION,
  DISRUPTION_POLICIES,
  type ManifestIssue,
  type ParseResult,
  type PathKey,
} from './manifest/parse.js'
export * from './duration.js'
export {
  clusterEntrySchema,
  processConfigSchema,
  checkBaseUrl,
  isGitUrl,
  parseListen,
  configProblems,
  layerProcessConfig,
  legacyConflicts,
  legacySettings,
  TOKEN_VALUE,
  type ClusterEntry,
  type ConfigLayer,
  type ConfigProblem,
  type ProcessConfig,
} from './config.js'
export {
  parseYaml,
  type Position,
  type YamlDocument,
  type YamlFile,
  type YamlLimits,
  type YamlProblem,
} from './yaml.js'
export * from './graph.js'
export type { RepoFs, FileInfo } from './loader/fs.js'
export { nodeFs } from './loader/fs.js'
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
export { POOL_ID, NEW_POOL_ID, poolNeeded } from './manifest/pool.js'
