/**
 * The repository loader: reads a ProxOps GitOps repository (see docs/repository.md) into per-cluster indexes
 * of normalised manifests, collecting every problem (never only the first) with a stable code and a position.
 *
 * The steps live beside it: paths.ts (nothing outside the root is read), reading.ts (files, YAML, manifests),
 * config-files.ts (`proxops.yaml` and cluster configs), composition.ts (`resources.yaml`) and checks.ts (the
 * pure checks of one cluster's resources). It reads no environment variables and makes no network calls; the
 * CLI passes the root and options.
 */
import { join, resolve } from 'node:path'
import { type ErrorCode, type SchemaError, sortErrors } from '../errors.js'
import { legacyConflicts } from '../config.js'
import { resourceKey } from '../graph.js'
import { KIND_ROOTS } from '../kinds.js'
import { checkClusterName } from '../names.js'
import { formatPath, type PathKey } from '../manifest/parse.js'
import type { Position, YamlDocument } from '../yaml.js'
import { nodeFs } from './fs.js'
import { mapLimit } from '@proxops/pve-client/wire'
import { Loader, YAML_EXT } from './reading.js'
import { type ConfigSource, loadClusterConfig, loadProcessFile, processDefaults } from './config-files.js'
import { IO_CONCURRENCY, composedFiles, findUnlisted, readComposition } from './composition.js'
import { checkCluster } from './checks.js'
import type { LoadedCluster, LoadedResource, LoadOptions, RepositoryModel } from './types.js'

export type {
  ClusterIndex,
  LoadedCluster,
  LoadedResource,
  LoadLimits,
  LoadOptions,
  RepositoryModel,
  UnlistedFile,
} from './types.js'
export {
  parseConfigText,
  readConfigFile,
  readRepositoryFile,
  type ConfigFileOptions,
  type ConfigFileResult,
} from './config-files.js'

/** Loads and checks a repository. Never throws for problems in the repository: they are in `errors`. */
export async function loadRepository(options: LoadOptions): Promise<RepositoryModel> {
  const L = new Loader(options)
  const fs = options.fs ?? nodeFs
  const given = resolve(options.root)
  const rootInfo = await fs.stat(given)
  if (!rootInfo?.isDirectory) {
    return {
      root: given,
      processConfig: processDefaults(),
      clusters: [],
      unlisted: [],
      errors: [L.err('root-invalid', '.', undefined, `repository root ${given} does not exist or is not a directory`)],
    }
  }
  L.root = await fs.realpath(given)
  const root = L.root

  // ---------------------------------------------------------------- proxops.yaml
  let processConfig = processDefaults()
  let processConfigFile: string | undefined
  const inlineClusters: ConfigSource[] = []
  const procAbs = join(root, 'proxops.yaml')
  const procReal = await L.real(procAbs, (msg) =>
    L.errors.push(L.err('path-outside-root', 'proxops.yaml', undefined, msg)),
  )
  if (procReal) {
    processConfigFile = 'proxops.yaml'
    const loaded = await loadProcessFile(L, procReal, 'proxops.yaml')
    if (loaded) {
      processConfig = loaded.layer.config
      inlineClusters.push(...loaded.clusters)
    }
  }

  // ---------------------------------------------------------------- legacy layout (repository-wide)
  for (const kindRoot of KIND_ROOTS) {
    const dir = join(root, kindRoot)
    const info = await fs.lstat(dir)
    if (!info?.isDirectory) continue
    for (const name of await fs.readdir(dir)) {
      if (!YAML_EXT.test(name)) continue
      const entry = await fs.lstat(join(dir, name))
      if (entry && !entry.isDirectory) {
        L.errors.push(
          L.err(
            'legacy-layout',
            `${kindRoot}/${name}`,
            undefined,
            `legacy layout: ${kindRoot}/${name} sits directly under the ${kindRoot}/ kind root, which is not allowed; move it to ${kindRoot}/base/ or ${kindRoot}/<cluster>/ and list it in a clusters/<name>/resources.yaml`,
          ),
        )
      }
    }
  }

  // ---------------------------------------------------------------- clusters/
  const localClusters: ConfigSource[] = []
  /** clusters with a config.yaml, valid or not: an invalid one is reported once, without follow-up errors */
  const attempted = new Set<string>()
  const compositionDirs = new Map<string, string>() // name -> real path of resources.yaml
  const clustersDir = join(root, 'clusters')
  const clustersInfo = await fs.lstat(clustersDir)
  if (clustersInfo?.isSymbolicLink) {
    L.errors.push(L.err('path-outside-root', 'clusters', undefined, 'clusters/ must be a directory, not a symlink'))
  } else if (clustersInfo?.isDirectory) {
    for (const name of await fs.readdir(clustersDir)) {
      const abs = join(clustersDir, name)
      const info = await fs.lstat(abs)
      if (!info?.isDirectory) continue // files and symlinks under clusters/ are not cluster directories
      const bad = checkClusterName(name)
      if (bad) {
        L.errors.push(L.err('cluster-name-invalid', `clusters/${name}`, undefined, bad))
        continue
      }
      const configAbs = join(abs, 'config.yaml')
      const configRel = `clusters/${name}/config.yaml`
      const configReal = await L.real(configAbs, (msg) =>
        L.errors.push(L.err('path-outside-root', configRel, undefined, msg)),
      )
      if (configReal) {
        attempted.add(name)
        const src = await loadClusterConfig(L, name, configReal, configRel)
        if (src) localClusters.push(src)
      }
      const resRel = `clusters/${name}/resources.yaml`
      const resReal = await L.real(join(abs, 'resources.yaml'), (msg) =>
        L.errors.push(L.err('path-outside-root', resRel, undefined, msg)),
      )
      if (resReal) compositionDirs.set(name, resReal)
      else if ((await fs.lstat(join(abs, 'resources.yaml'))) === undefined) {
        L.errors.push(
          L.err(
            'composition-missing',
            `clusters/${name}`,
            undefined,
            `clusters/${name}/ exists but has no resources.yaml: add one (resources: [] for an empty cluster) or remove the directory`,
          ),
        )
      }
    }
  }

  for (const c of legacyConflicts(localClusters.map((src) => src.layer!))) {
    const src = localClusters.find((x) => x.configFile === c.file)!
    L.errors.push(L.err('config-invalid', c.file, src.locate(c.path), c.message, { field: formatPath(c.path) }))
  }

  // ---------------------------------------------------------------- configured clusters
  const configured = new Map<string, ConfigSource>()
  for (const src of [...inlineClusters, ...localClusters]) {
    const prev = configured.get(src.name)
    if (prev) {
      L.errors.push(
        L.err(
          'config-invalid',
          src.configFile,
          src.at(),
          `cluster "${src.name}" is declared twice: in ${prev.configFile} and in ${src.configFile}; keep one`,
        ),
      )
      continue
    }
    configured.set(src.name, src)
  }
  for (const name of compositionDirs.keys()) {
    if (!configured.has(name) && !attempted.has(name)) {
      L.errors.push(
        L.err(
          'cluster-not-configured',
          `clusters/${name}/resources.yaml`,
          undefined,
          `clusters/${name}/resources.yaml has no configured cluster: add clusters/${name}/config.yaml declaring pve.clusters.${name}`,
        ),
      )
    }
  }
  for (const src of configured.values()) {
    if (
      !compositionDirs.has(src.name) &&
      !L.errors.some((e) => e.file === `clusters/${src.name}` && e.code === 'composition-missing')
    ) {
      L.errors.push(
        L.err(
          'composition-missing',
          src.configFile,
          src.at(),
          `cluster "${src.name}" has no clusters/${src.name}/resources.yaml: create it (resources: [] for an empty cluster)`,
        ),
      )
    }
  }
  if (configured.size === 0 && attempted.size === 0) {
    L.errors.push(
      L.err(
        'no-clusters',
        '.',
        undefined,
        'at least one named PVE cluster is required: add clusters/<name>/config.yaml (with pve.clusters.<name>) and clusters/<name>/resources.yaml',
      ),
    )
  }
  const byUrl = new Map<string, ConfigSource>()
  for (const src of [...configured.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const url = src.entry['base-url']
    const prev = byUrl.get(url)
    if (prev) {
      L.errors.push(
        L.err(
          'base-url-duplicate',
          src.configFile,
          src.at(),
          `clusters "${prev.name}" and "${src.name}" share base-url ${url}: each cluster needs its own endpoint`,
        ),
      )
    } else byUrl.set(url, src)
  }

  // ---------------------------------------------------------------- per-cluster compositions
  const globalErrors = [...L.errors]
  let names = [...configured.keys()].filter((n) => compositionDirs.has(n)).sort()
  if (options.cluster !== undefined) {
    if (!configured.has(options.cluster)) {
      L.errors.push(
        L.err(
          'cluster-unknown',
          '.',
          undefined,
          `cluster "${options.cluster}" is not configured (known: ${[...configured.keys()].sort().join(', ') || 'none'})`,
        ),
      )
      globalErrors.push(L.errors[L.errors.length - 1]!)
    }
    names = names.filter((n) => n === options.cluster)
  }
  const clusters: LoadedCluster[] = []
  for (const name of names) {
    const otherNodes = new Set([...configured.values()].filter((c) => c.name !== name).flatMap((c) => c.entry.nodes))
    const { cluster, own } = await loadCluster(
      L,
      configured.get(name)!,
      compositionDirs.get(name)!,
      globalErrors,
      otherNodes,
    )
    clusters.push(cluster)
    L.errors.push(...own)
  }

  const unlisted = options.unlisted ? await findUnlisted(L, clusters, compositionDirs) : []

  return {
    root,
    processConfig,
    ...(processConfigFile ? { processConfigFile } : {}),
    clusters,
    errors: sortErrors(L.errors),
    unlisted,
  }
}

async function loadCluster(
  L: Loader,
  src: ConfigSource,
  compositionReal: string,
  globalErrors: SchemaError[],
  otherNodes: ReadonlySet<string>,
): Promise<{ cluster: LoadedCluster; own: SchemaError[] }> {
  const name = src.name
  const compositionFile = `clusters/${name}/resources.yaml`
  const errors: SchemaError[] = []
  const push = (
    code: ErrorCode,
    file: string,
    at: Position | undefined,
    message: string,
    extra: Partial<SchemaError> = {},
  ): void => {
    errors.push(L.err(code, file, at, message, { ...extra, clusters: [name] }))
  }
  const before = L.errors.length
  const entries = (await readComposition(L, compositionReal, compositionFile, name)) ?? []
  errors.push(...L.errors.splice(before))

  const files = await composedFiles(L, entries, join(L.root, 'clusters', name), compositionFile, push)

  // ------------------------------------------------ parse files (shared cache) and copy manifests
  const resources: LoadedResource[] = []
  const docOf = new Map<LoadedResource, YamlDocument>()
  const parsedFiles = await mapLimit(files, IO_CONCURRENCY, (f) => L.manifestFile(f.real, f.info))
  files.forEach((f, i) => {
    const parsed = parsedFiles[i]!
    errors.push(...parsed.errors.map((e) => ({ ...e, clusters: [name] })))
    for (const { manifest, doc } of parsed.resources) {
      const m = structuredClone(manifest) // clusters never share (or see) each other's objects
      const r: LoadedResource = {
        key: resourceKey(m.kind, m.metadata.name),
        manifest: m,
        file: f.rel,
        document: doc.index,
        line: doc.start.line,
        column: doc.start.column,
      }
      resources.push(r)
      docOf.set(r, doc)
    }
  })
  const locate = (r: LoadedResource, path: PathKey[], key = false): Position => docOf.get(r)!.locate(path, { key })

  const { index, graph } = checkCluster({
    name,
    nodes: src.entry.nodes,
    otherNodes,
    compositionFile,
    resources,
    locate,
    push,
  })

  const all = sortErrors([...globalErrors, ...errors])
  const cluster: LoadedCluster = {
    name,
    configFile: src.configFile,
    entry: src.entry,
    ...(src.secretsFile !== undefined ? { secretsFile: src.secretsFile } : {}),
    ...(src.localSettings ? { localSettings: src.localSettings } : {}),
    compositionFile,
    files: files.map((f) => f.rel),
    index,
    graph,
    errors: all,
    ok: all.length === 0,
  }
  return { cluster, own: errors }
}
