/** The loader's public types: its options and the repository model it returns. */
import type { SchemaError } from '../errors.js'
import type { ClusterEntry, ProcessConfig } from '../config.js'
import type { DependencyGraph, ResourceKey } from '../graph.js'
import type { Kind } from '../kinds.js'
import type { Manifest } from '../manifest/types.js'
import type { RepoFs } from './fs.js'

export interface LoadLimits {
  /** largest YAML file read, in bytes; default 1 MiB */
  maxFileBytes?: number
  /** alias resolutions allowed per YAML document; default 100 */
  maxAliasCount?: number
}

export interface LoadOptions {
  /** the repository root (the directory holding `clusters/`); see `discoverRepository` */
  root: string
  /** load only this cluster (repository-wide rules still apply) */
  cluster?: string
  /** file-system port; default the local disk */
  fs?: RepoFs
  limits?: LoadLimits
  /** also find the manifest files no composition lists (`RepositoryModel.unlisted`); off by default */
  unlisted?: boolean
}

/** One manifest document and where it came from. */
export interface LoadedResource<M extends Manifest = Manifest> {
  key: ResourceKey
  manifest: M
  /** file relative to the repository root, `/` separated */
  file: string
  /** 0-based document index in the file */
  document: number
  line: number
  column: number
}

export interface ClusterIndex {
  /** every resource of the cluster, by file (lexicographic) then document order */
  readonly resources: readonly LoadedResource[]
  get<K extends Kind>(kind: K, name: string): LoadedResource<Extract<Manifest, { kind: K }>> | undefined
  ofKind<K extends Kind>(kind: K): LoadedResource<Extract<Manifest, { kind: K }>>[]
  /** by `Kind/name` (the keys of the dependency graph) */
  byKey(key: ResourceKey): LoadedResource | undefined
  /** guests by `node/vmid` */
  guest(node: string, vmid: number): LoadedResource | undefined
}

export interface LoadedCluster {
  name: string
  /** where the cluster entry is declared, relative to the root (`clusters/<name>/config.yaml` or `proxops.yaml`) */
  configFile: string
  entry: ClusterEntry
  /** absolute path of the SOPS file, resolved against the declaring file's directory */
  secretsFile?: string
  /** process settings written in the cluster-local config file (legacy layout), as parsed */
  localSettings?: ProcessConfig
  /** `clusters/<name>/resources.yaml` */
  compositionFile: string
  /** composed manifest files, relative to the root, sorted */
  files: string[]
  index: ClusterIndex
  graph: DependencyGraph
  /** this cluster's problems, including repository-wide ones and those of shared files it lists */
  errors: SchemaError[]
  /** true when `errors` is empty: the cluster may be planned */
  ok: boolean
}

export interface RepositoryModel {
  /** real path of the repository root */
  root: string
  /** `proxops.yaml` with defaults applied (defaults alone when the file is absent) */
  processConfig: ProcessConfig
  processConfigFile?: string
  /** clusters sorted by name (only the selected one with `options.cluster`) */
  clusters: LoadedCluster[]
  /** every problem of the repository, sorted and de-duplicated */
  errors: SchemaError[]
  /**
   * YAML files under the kind roots that no cluster's `resources.yaml` lists (not managed), with their own
   * parse problems (not in `errors`: they compose into nothing). Empty unless `options.unlisted`.
   */
  unlisted: UnlistedFile[]
}

export interface UnlistedFile {
  /** relative to the root, `/` separated */
  file: string
  errors: SchemaError[]
}
