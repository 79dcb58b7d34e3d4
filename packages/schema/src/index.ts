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
