/**
 * The repository loader: reads a ProxOps GitOps repository into per-cluster indexes of normalised
 * manifests, collecting every problem (never only the first) with a stable code and a position.
 *
 * It reads nothing outside the repository root: every path is checked lexically and again after resolving
 * symlinks (real paths), before any file is opened. It reads no environment variables and makes no network
 * calls; the CLI passes the root and options.
 */
import * as v from 'valibot'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { type ErrorCode, type SchemaError, sortErrors, splitIssueMessage } from '../errors.js'
import {
  type ClusterEntry,
  type ConfigLayer,
  type ProcessConfig,
  configProblems,
  legacyConflicts,
  processConfigSchema,
} from '../config.js'
import { buildGraph, type DependencyGraph, referencesOf, type ResourceKey, resourceKey } from '../graph.js'
import { KIND_ROOTS, type Kind, isGuestKind } from '../kinds.js'
import { checkClusterName } from '../names.js'
import { formatPath, parseManifest, type PathKey } from '../manifest/parse.js'
import type { Manifest } from '../manifest/types.js'
import { type Position, parseYaml, type YamlDocument } from '../yaml.js'
import { type FileInfo, type RepoFs, nodeFs } from './fs.js'
import { mapLimit } from './limit.js'

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

const DEFAULT_MAX_FILE = 1024 * 1024
/** file-system calls in flight at once: enough to keep libuv's 4 threads busy while parsing goes on */
const IO_CONCURRENCY = 8
const YAML_EXT = /\.ya?ml$/i
/** a `.` or `..` path segment, with either separator */
const DOT_SEGMENT = /(?:^|[\\/])\.\.?(?:[\\/]|$)/

interface ParsedFile {
  file: string
  docs: YamlDocument[]
  errors: SchemaError[]
  resources: Array<{ manifest: Manifest; doc: YamlDocument }>
}

interface ConfigSource {
  name: string
  configFile: string
  entry: ClusterEntry
  secretsFile?: string
  localSettings?: ProcessConfig
  /** position of the declaration (for errors only: it re-parses the file) */
  at: () => Position
  /** the cluster-local file as validated (absent for clusters declared inline in proxops.yaml) */
  layer?: ConfigLayer
  locate: (path: PathKey[]) => Position
}

class Loader {
  readonly errors: SchemaError[] = []
  readonly fs: RepoFs
  private readonly maxFileBytes: number
  private readonly maxAliasCount: number
  private readonly fileCache = new Map<string, Promise<ParsedFile>>()
  root = ''

  constructor(readonly options: LoadOptions) {
    this.fs = options.fs ?? nodeFs
    this.maxFileBytes = options.limits?.maxFileBytes ?? DEFAULT_MAX_FILE
    this.maxAliasCount = options.limits?.maxAliasCount ?? 100
  }

  err(
    code: ErrorCode,
    file: string,
    at: Position | undefined,
    message: string,
    extra: Partial<SchemaError> = {},
  ): SchemaError {
    const e: SchemaError = { code, file, line: at?.line ?? 0, column: at?.column ?? 0, message, ...extra }
    return e
  }

  /** repository-relative, `/`-separated form of an absolute path inside the root */
  rel(abs: string): string {
    const under = this.under(abs)
    if (under !== undefined) return sep === '/' ? under : under.split(sep).join('/')
    const r = relative(this.root, abs)
    return r === '' ? '.' : r.split(sep).join('/')
  }

  inside(abs: string): boolean {
    if (this.under(abs) !== undefined) return true
    const r = relative(this.root, abs)
    return r === '' || (!r.startsWith(`..${sep}`) && r !== '..' && !isAbsolute(r))
  }

  /**
   * The part of `abs` below the root, by string prefix, for the common case of a path that is plainly below
   * it (no `.` or `..` segments, which only path.relative may judge). Called several times per manifest,
   * where path.relative was a tenth of `validate`'s time.
   */
  private under(abs: string): string | undefined {
    const prefix = this.root.endsWith(sep) ? this.root : this.root + sep
    if (!abs.startsWith(prefix) || abs.length === prefix.length) return undefined
    const below = abs.slice(prefix.length)
    return DOT_SEGMENT.test(below) || below.includes(`${sep}${sep}`) || below.endsWith(sep) ? undefined : below
  }

  /**
   * Resolves a path that is lexically inside the root to its real path, refusing (undefined + error) when a
   * symlink leads outside. Missing paths resolve to undefined without error (callers report them).
   */
  async real(abs: string, report: (message: string) => void): Promise<string | undefined> {
    if (!this.inside(abs)) {
      report(`${abs} is outside the repository root`)
      return undefined
    }
    let real: string
    try {
      real = await this.fs.realpath(abs)
    } catch {
      // missing, or a dangling link; lstat only on this path (one syscall less per file) so that a
      // failure other than "nothing there" still throws as before
      await this.fs.lstat(abs)
      return undefined
    }
    if (!this.inside(real)) {
      report(`${this.rel(abs)} resolves through a symlink to ${real}, outside the repository root`)
      return undefined
    }
    return real
  }

  /**
   * Reads a file whose real path has been checked; enforces the size limit. `known` is the caller's fresh
   * `stat` of the same real path, saving a second one.
   */
  async read(real: string, known?: FileInfo): Promise<{ text: string } | { error: SchemaError }> {
    if (!this.inside(real)) throw new Error(`loader bug: refusing to read ${real} outside ${this.root}`)
    const file = this.rel(real)
    const info = known ?? (await this.fs.stat(real))
    if (!info?.isFile) return { error: this.err('file-unreadable', file, undefined, `${file} is not a regular file`) }
    if (info.size > this.maxFileBytes) {
      return {
        error: this.err(
          'file-too-large',
          file,
          undefined,
          `${file} is ${info.size} bytes, over the ${this.maxFileBytes}-byte limit for one YAML file: split it`,
        ),
      }
    }
    try {
      const text = await this.fs.readFile(real)
      if (Buffer.byteLength(text) > this.maxFileBytes) {
        return {
          error: this.err(
            'file-too-large',
            file,
            undefined,
            `${file} is over the ${this.maxFileBytes}-byte limit for one YAML file: split it`,
          ),
        }
      }
      // a NUL byte is no YAML character; refused here so that none can reach PVE (escaped ones: nulPath)
      const nul = text.indexOf('\0')
      if (nul >= 0) {
        const line = text.slice(0, nul).split('\n').length
        return {
          error: this.err(
            'file-unreadable',
            file,
            { line, column: nul - text.lastIndexOf('\n', nul - 1) },
            `${file} contains a NUL byte`,
          ),
        }
      }
      return { text }
    } catch (err) {
      return {
        error: this.err('file-unreadable', file, undefined, `${file} could not be read: ${(err as Error).message}`),
      }
    }
  }

  async readYaml(
    real: string,
    known?: FileInfo,
    file = this.rel(real),
  ): Promise<{ docs: YamlDocument[]; errors: SchemaError[] }> {
    const r = await this.read(real, known)
    if ('error' in r) return { docs: [], errors: [{ ...r.error, file }] }
    return this.parseYamlText(r.text, file)
  }

  parseYamlText(text: string, file: string): { docs: YamlDocument[]; errors: SchemaError[] } {
    const parsed = parseYaml(text, { maxAliasCount: this.maxAliasCount })
    return { docs: parsed.documents, errors: parsed.problems.map((p) => this.err(p.code, file, p, p.message)) }
  }

  /** Parses a manifest file once, whichever clusters list it. */
  manifestFile(real: string, known?: FileInfo): Promise<ParsedFile> {
    let cached = this.fileCache.get(real)
    if (!cached) {
      cached = (async () => {
        const file = this.rel(real)
        const { docs, errors } = await this.readYaml(real, known)
        const resources: ParsedFile['resources'] = []
        for (const doc of docs) {
          if (doc.value === null || doc.value === undefined) continue // empty documents are skipped
          const nul = nulPath(doc.value)
          if (nul) {
            errors.push(
              this.err(
                'field-invalid',
                file,
                doc.locate(nul),
                `${formatPath(nul) || 'a key'}: contains a NUL character ("\\0"), which PVE cannot store`,
                { field: formatPath(nul) },
              ),
            )
            continue
          }
          const r = parseManifest(doc.value)
          if (r.ok) resources.push({ manifest: r.manifest, doc })
          else {
            for (const issue of r.issues) {
              const at = doc.locate(issue.path, { key: issue.code === 'field-unknown' })
              errors.push(
                this.err(
                  issue.code,
                  file,
                  at,
                  issue.message,
                  issue.path.length ? { field: formatPath(issue.path) } : {},
                ),
              )
            }
          }
        }
        return { file, docs, errors, resources }
      })()
      this.fileCache.set(real, cached)
    }
    return cached
  }

  /** Validates a config document with a valibot schema, reporting issues with positions. */
  validateConfig<T>(
    schema: v.GenericSchema<unknown, T>,
    doc: YamlDocument,
    file: string,
    prefix: PathKey[] = [],
  ): T | undefined {
    if (!isMapping(doc.value)) {
      this.errors.push(
        this.err(
          'config-invalid',
          file,
          doc.start,
          `${file} must be a mapping of settings, got ${Array.isArray(doc.value) ? 'a list' : typeof doc.value}`,
        ),
      )
      return undefined
    }
    const nul = nulPath(doc.value)
    if (nul) {
      this.errors.push(
        this.err('config-invalid', file, doc.locate(nul), `${formatPath(nul)}: contains a NUL character`, {
          field: formatPath(nul),
        }),
      )
      return undefined
    }
    const r = v.safeParse(schema, doc.value)
    if (r.success) return r.output
    for (const issue of r.issues) {
      const path = [...prefix, ...(issue.path ?? []).map((p) => p.key as PathKey)]
      const tagged = splitIssueMessage(issue.message)
      const last = path[path.length - 1]
      let code: ErrorCode = 'config-invalid'
      let message: string
      if (tagged) {
        code = tagged.code === 'field-type' || tagged.code === 'field-invalid' ? 'config-invalid' : tagged.code
        message = `${formatPath(path)}: ${tagged.text}`
      } else if (issue.expected === 'never') message = `unknown setting ${JSON.stringify(formatPath(path))}`
      else if (issue.received === 'undefined') message = `missing required setting ${JSON.stringify(formatPath(path))}`
      else message = `${formatPath(path) || 'the document'}: expected ${issue.expected}, got ${issue.received}`
      this.errors.push(
        this.err(code, file, doc.locate(path, { key: issue.expected === 'never' }), message, {
          field: formatPath(path),
        }),
      )
      void last
    }
    return undefined
  }

  /** The one non-empty document of a config file (several = error). */
  singleDoc(docs: YamlDocument[], file: string): YamlDocument | undefined {
    const nonEmpty = docs.filter((d) => d.value !== null && d.value !== undefined)
    if (nonEmpty.length > 1) {
      this.errors.push(this.err('config-invalid', file, nonEmpty[1]!.start, `${file} must hold a single YAML document`))
      return undefined
    }
    return nonEmpty[0]
  }
}

/** The path of the first string (value or key) holding a NUL character, if any. */
function nulPath(value: unknown, path: PathKey[] = []): PathKey[] | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = nulPath(value[i], [...path, i])
      if (p) return p
    }
    return undefined
  }
  if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\0')) return [...path, k]
      const p = nulPath(v, [...path, k])
      if (p) return p
    }
  }
  return undefined
}

function isMapping(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}

const processDefaults = (): ProcessConfig => v.parse(processConfigSchema, {})

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

/**
 * Every YAML file below `<kind root>/<folder>/` that no loaded cluster lists, parsed so that its problems can
 * be shown too. Symlinked directories are not followed; files directly under a kind root are reported as
 * legacy-layout already.
 */
async function findUnlisted(
  L: Loader,
  clusters: readonly LoadedCluster[],
  compositions: ReadonlyMap<string, string>,
): Promise<UnlistedFile[]> {
  const listed = new Set(clusters.flatMap((c) => c.files))
  // compositions of clusters that were not loaded (their config is broken) still list files
  for (const [name, real] of compositions) {
    if (clusters.some((c) => c.name === name)) continue
    const before = L.errors.length
    const entries = (await readComposition(L, real, `clusters/${name}/resources.yaml`, name)) ?? []
    L.errors.splice(before) // reported, if at all, once the cluster's config is fixed
    for (const e of entries) {
      const r = await resolveEntry(L, join(L.root, 'clusters', name), e.path)
      if ('rel' in r) listed.add(r.rel)
    }
  }
  const found: string[] = []
  const walk = async (dir: string, depth: number): Promise<void> => {
    for (const name of await L.fs.readdir(dir)) {
      const abs = join(dir, name)
      const info = await L.fs.lstat(abs)
      if (info?.isDirectory) await walk(abs, depth + 1)
      else if (depth > 0 && YAML_EXT.test(name) && (info?.isFile || info?.isSymbolicLink)) found.push(abs)
    }
  }
  for (const kindRoot of KIND_ROOTS) {
    const dir = join(L.root, kindRoot)
    if ((await L.fs.lstat(dir))?.isDirectory) await walk(dir, 0)
  }
  const out: UnlistedFile[] = []
  for (const abs of found) {
    const real = await L.real(abs, () => {})
    if (!real || listed.has(L.rel(real))) continue
    const info = await L.fs.stat(real)
    if (!info?.isFile) continue
    const parsed = await L.manifestFile(real, info)
    out.push({ file: L.rel(abs), errors: sortErrors(parsed.errors) })
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
}

/** The cross-field rules of config.ts, reported with positions; false when there was any. */
function checkProcessConfig(
  L: Loader,
  cfg: ProcessConfig,
  doc: YamlDocument,
  file: string,
  clusterLocal?: string,
): boolean {
  const problems = configProblems(cfg, doc.value, clusterLocal)
  for (const p of problems) {
    L.errors.push(
      L.err('config-invalid', file, doc.locate(p.path, { key: p.key === true }), p.message, {
        field: formatPath(p.path),
      }),
    )
  }
  return problems.length === 0
}

/** `proxops.yaml` (or a `--config` file): its settings and inline clusters; undefined after any problem. */
async function loadProcessFile(
  L: Loader,
  real: string,
  file: string,
): Promise<{ layer: ConfigLayer; clusters: ConfigSource[] } | undefined> {
  return processFromYaml(L, await L.readYaml(real, undefined, file), dirname(real), file)
}

function processFromYaml(
  L: Loader,
  { docs, errors }: { docs: YamlDocument[]; errors: SchemaError[] },
  dir: string,
  file: string,
): { layer: ConfigLayer; clusters: ConfigSource[] } | undefined {
  L.errors.push(...errors)
  const doc = errors.length ? undefined : L.singleDoc(docs, file)
  const cfg = doc ? L.validateConfig(processConfigSchema, doc, file) : undefined
  if (!doc) return errors.length ? undefined : { layer: { file, config: processDefaults(), doc: null }, clusters: [] }
  if (!cfg) return undefined
  checkProcessConfig(L, cfg, doc, file)
  const clusters = Object.entries(cfg.pve.clusters).map(([name, entry]): ConfigSource => ({
    name,
    configFile: file,
    entry,
    at: () => doc.locate(['pve', 'clusters', name], { key: true }),
    locate: (path) => doc.locate(path),
    ...(entry['secrets-file'] !== undefined ? { secretsFile: resolve(dir, entry['secrets-file']) } : {}),
  }))
  return { layer: { file, config: cfg, doc: doc.value }, clusters }
}

/**
 * `parseConfigFile`'s pure core: the text of a config file named `file` in directory `dir` (for relative
 * `secrets-file` paths), checked exactly as `readConfigFile` checks what it reads.
 */
export function parseConfigText(
  text: string,
  file: string,
  options: { dir?: string; cluster?: string; limits?: LoadLimits } = {},
): ConfigFileResult {
  const L = new Loader({ root: options.dir ?? '.', ...(options.limits ? { limits: options.limits } : {}) })
  const dir = resolve(options.dir ?? dirname(file))
  const yaml = L.parseYamlText(text, file)
  const done = (r: { layer?: ConfigLayer; secretsFiles?: Record<string, string> }): ConfigFileResult => ({
    secretsFiles: {},
    ...r,
    errors: sortErrors(L.errors),
  })
  if (options.cluster !== undefined) {
    const src = clusterFromYaml(L, options.cluster, yaml, dir, file)
    return done(
      src?.layer ? { layer: src.layer, secretsFiles: src.secretsFile ? { [src.name]: src.secretsFile } : {} } : {},
    )
  }
  const loaded = processFromYaml(L, yaml, dir, file)
  return done(
    loaded
      ? {
          layer: loaded.layer,
          secretsFiles: Object.fromEntries(
            loaded.clusters.filter((c) => c.secretsFile).map((c) => [c.name, c.secretsFile!]),
          ),
        }
      : {},
  )
}

export interface ConfigFileOptions {
  /** the repository root: the file (after symlinks) must be inside it; without, any regular file is read */
  root?: string
  /** name of the file in messages; default its path relative to the root (or as given) */
  display?: string
  /** read it as `clusters/<cluster>/config.yaml`: exactly that cluster, no credentials or process-wide git settings */
  cluster?: string
  fs?: RepoFs
  limits?: LoadLimits
}

export interface ConfigFileResult {
  /** the validated file; absent when it is missing or has problems */
  layer?: ConfigLayer
  /** true when there is no such file (not an error: the caller decides) */
  missing?: boolean
  /** absolute path of the SOPS file of each cluster the file declares, resolved against the file's directory */
  secretsFiles: Record<string, string>
  errors: SchemaError[]
}

/**
 * Reads one config file by the loader's rules: a regular file (no FIFO, no device), at most `maxFileBytes`,
 * inside `root` when one is given, one YAML document, validated by the schemas and `configProblems`. The CLI
 * reads `proxops.yaml`, cluster configs and `--config` through it, so `validate` and every command agree.
 */
export async function readConfigFile(path: string, options: ConfigFileOptions = {}): Promise<ConfigFileResult> {
  const { L, real, display } = await openFile(path, options)
  const done = (
    r: Omit<ConfigFileResult, 'errors' | 'secretsFiles'> & { secretsFiles?: Record<string, string> },
  ): ConfigFileResult => ({
    secretsFiles: {},
    ...r,
    errors: sortErrors(L.errors.map((e) => ({ ...e, file: display }))),
  })
  if (!real) return done(L.errors.length ? {} : { missing: true })
  if (options.cluster !== undefined) {
    const src = await loadClusterConfig(L, options.cluster, real, display)
    return done(
      src?.layer ? { layer: src.layer, secretsFiles: src.secretsFile ? { [src.name]: src.secretsFile } : {} } : {},
    )
  }
  const loaded = await loadProcessFile(L, real, display)
  const secretsFiles = Object.fromEntries(
    (loaded?.clusters ?? []).filter((c) => c.secretsFile).map((c) => [c.name, c.secretsFile!]),
  )
  return done(loaded ? { layer: loaded.layer, secretsFiles } : {})
}

/**
 * Reads any other repository file ProxOps needs whole (a cluster's `secrets-file`) by the same rules:
 * inside `root` after symlinks, a regular file, at most `maxFileBytes`.
 */
export async function readRepositoryFile(
  path: string,
  options: Omit<ConfigFileOptions, 'cluster'> = {},
): Promise<{ text: string } | { missing: true } | { error: SchemaError }> {
  const { L, real, display } = await openFile(path, options)
  const first = L.errors[0]
  if (first) return { error: { ...first, file: display } }
  if (!real) return { missing: true }
  const r = await L.read(real)
  return 'error' in r ? { error: { ...r.error, file: display } } : r
}

/** The loader for one file: its root, the file's real path (undefined when missing or refused) and name. */
async function openFile(
  path: string,
  options: Omit<ConfigFileOptions, 'cluster'>,
): Promise<{ L: Loader; real: string | undefined; display: string }> {
  const fs = options.fs ?? nodeFs
  const abs = resolve(path)
  const L = new Loader({
    root: options.root ?? dirname(abs),
    fs,
    ...(options.limits ? { limits: options.limits } : {}),
  })
  const display = options.display ?? (options.root ? relative(resolve(options.root), abs).split(sep).join('/') : abs)
  if (options.root !== undefined) {
    const rootInfo = await fs.stat(resolve(options.root))
    if (!rootInfo?.isDirectory) {
      L.errors.push(
        L.err(
          'root-invalid',
          display,
          undefined,
          `repository root ${resolve(options.root)} does not exist or is not a directory`,
        ),
      )
      return { L, real: undefined, display }
    }
    L.root = await fs.realpath(resolve(options.root))
    const real = await L.real(abs, (msg) => L.errors.push(L.err('path-outside-root', display, undefined, msg)))
    return { L, real, display }
  }
  try {
    const real = await fs.realpath(abs)
    L.root = dirname(real)
    return { L, real, display }
  } catch {
    return { L, real: undefined, display }
  }
}

async function loadClusterConfig(
  L: Loader,
  name: string,
  real: string,
  file: string,
): Promise<ConfigSource | undefined> {
  return clusterFromYaml(L, name, await L.readYaml(real, undefined, file), dirname(real), file)
}

function clusterFromYaml(
  L: Loader,
  name: string,
  { docs, errors }: { docs: YamlDocument[]; errors: SchemaError[] },
  dir: string,
  file: string,
): ConfigSource | undefined {
  L.errors.push(...errors)
  if (errors.length) return undefined
  const doc = L.singleDoc(docs, file)
  if (!doc) {
    L.errors.push(L.err('cluster-config-mismatch', file, undefined, `${file} is empty: declare pve.clusters.${name}`))
    return undefined
  }
  const raw = doc.value
  const clustersNode = isMapping(raw) && isMapping(raw.pve) ? raw.pve.clusters : undefined
  const keys = isMapping(clustersNode) ? Object.keys(clustersNode) : []
  if (keys.length !== 1 || keys[0] !== name) {
    const at = keys.length ? doc.locate(['pve', 'clusters', keys[0]!], { key: true }) : doc.locate(['pve', 'clusters'])
    const what =
      keys.length === 0
        ? 'no pve.clusters entry'
        : keys.length > 1
          ? `${keys.length} entries (${keys.join(', ')})`
          : `pve.clusters.${keys[0]}`
    L.errors.push(
      L.err(
        'cluster-config-mismatch',
        file,
        at,
        `${file} declares ${what}, which does not match its directory name: it must declare exactly pve.clusters.${name}`,
      ),
    )
    return undefined
  }
  const cfg = L.validateConfig(processConfigSchema, doc, file)
  if (!cfg) return undefined
  checkProcessConfig(L, cfg, doc, file, name)
  const entry = cfg.pve.clusters[name]!
  const local = raw as Record<string, unknown>
  const pve = local.pve as Record<string, unknown>
  const hasSettings = Object.keys(local).some((k) => k !== 'pve') || Object.keys(pve).some((k) => k !== 'clusters')
  return {
    name,
    configFile: file,
    entry: entry.auth === undefined && pve.auth !== undefined ? { ...entry, auth: cfg.pve.auth } : entry,
    at: () => doc.locate(['pve', 'clusters', name], { key: true }),
    locate: (path) => doc.locate(path),
    layer: { file, config: cfg, doc: raw },
    ...(entry['secrets-file'] !== undefined ? { secretsFile: resolve(dir, entry['secrets-file']) } : {}),
    ...(hasSettings ? { localSettings: cfg } : {}),
  }
}

/** Reads `resources.yaml` into entries with their positions. */
async function readComposition(
  L: Loader,
  real: string,
  file: string,
  cluster: string,
): Promise<Array<{ path: string; at: () => Position }> | undefined> {
  const { docs, errors } = await L.readYaml(real)
  if (errors.length) {
    L.errors.push(...errors.map((e) => ({ ...e, clusters: [cluster] })))
    return undefined
  }
  const doc = L.singleDoc(docs, file)
  if (!doc) return [] // an empty file composes nothing
  const value = doc.value
  let list: unknown
  let prefix: PathKey[] = []
  if (Array.isArray(value)) list = value
  else if (isMapping(value)) {
    for (const key of Object.keys(value)) {
      if (key !== 'resources') {
        L.errors.push(
          L.err(
            'composition-invalid',
            file,
            doc.locate([key], { key: true }),
            `unknown key ${JSON.stringify(key)} in resources.yaml: only "resources:" is allowed`,
            { clusters: [cluster] },
          ),
        )
      }
    }
    list = value.resources ?? []
    prefix = ['resources']
  } else {
    L.errors.push(
      L.err(
        'composition-invalid',
        file,
        doc.start,
        'resources.yaml must be a list of paths, or a mapping with a "resources:" list of paths',
        { clusters: [cluster] },
      ),
    )
    return undefined
  }
  if (!Array.isArray(list)) {
    L.errors.push(
      L.err('composition-invalid', file, doc.locate(prefix), '"resources:" must be a list of paths', {
        clusters: [cluster],
      }),
    )
    return undefined
  }
  const out: Array<{ path: string; at: () => Position }> = []
  list.forEach((item, i) => {
    // positions only for problems: locating re-parses the file with the yaml library
    const at = (): Position => doc.locate([...prefix, i])
    if (item === null || item === undefined) return
    if (typeof item !== 'string') {
      L.errors.push(
        L.err('composition-invalid', file, at(), `entry ${i} of resources must be a path string, got ${typeof item}`, {
          clusters: [cluster],
        }),
      )
      return
    }
    if (item.trim() === '') return
    out.push({ path: item.trim(), at })
  })
  return out
}

type ResolvedEntry =
  { code: ErrorCode; message: string } | { real: string; rel: string; lexicalRel: string; info: FileInfo | undefined }

/** The file-system checks of one composition entry: where it leads (inside the root) and what is there. */
async function resolveEntry(L: Loader, clusterDir: string, entry: string): Promise<ResolvedEntry> {
  const name = JSON.stringify(entry)
  if (entry.includes('\0') || entry.includes('\\')) {
    return { code: 'composition-invalid', message: `path ${name} contains a backslash or NUL: use / separators` }
  }
  if (isAbsolute(entry)) {
    return {
      code: 'composition-invalid',
      message: `path ${name} is absolute: list paths relative to ${L.rel(clusterDir)}/ (e.g. ../../vm/base/app.yaml)`,
    }
  }
  const lexical = resolve(clusterDir, entry)
  if (!L.inside(lexical)) return { code: 'composition-path-escape', message: `path ${name} leaves the repository root` }
  let escape: string | undefined
  const real = await L.real(lexical, (msg) => (escape = msg))
  if (escape !== undefined) return { code: 'composition-path-escape', message: `path ${name}: ${escape}` }
  const lexicalRel = L.rel(lexical)
  if (!real) return { code: 'composition-path-missing', message: `path ${name} does not exist (${lexicalRel})` }
  return { real, rel: L.rel(real), lexicalRel, info: await L.fs.stat(real) }
}

async function loadCluster(
  L: Loader,
  src: ConfigSource,
  compositionReal: string,
  globalErrors: SchemaError[],
  otherNodes: ReadonlySet<string>,
): Promise<{ cluster: LoadedCluster; own: SchemaError[] }> {
  const name = src.name
  const root = L.root
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

  // ------------------------------------------------ composition entries -> real files
  const clusterDir = join(root, 'clusters', name)
  const listed = new Map<string, string>() // real rel path -> entry text
  const files: Array<{ real: string; rel: string; info: FileInfo }> = []
  // the file-system part runs with bounded parallelism; the checks below stay in listing order
  const resolved = await mapLimit(entries, IO_CONCURRENCY, (e) => resolveEntry(L, clusterDir, e.path))
  entries.forEach(({ path: entry, at }, i) => {
    const r = resolved[i]!
    if ('code' in r) {
      push(r.code, compositionFile, at(), r.message)
      return
    }
    const { real, rel, info } = r
    const shown = rel === r.lexicalRel ? rel : `${r.lexicalRel} -> ${rel}`
    if (!info?.isFile) {
      push(
        'composition-not-file',
        compositionFile,
        at(),
        `path ${JSON.stringify(entry)} (${shown}) is not a regular file: list manifest files, not directories`,
      )
      return
    }
    if (!YAML_EXT.test(rel) || !YAML_EXT.test(entry)) {
      push(
        'composition-extension',
        compositionFile,
        at(),
        `path ${JSON.stringify(entry)} (${shown}) must end in .yaml or .yml`,
      )
      return
    }
    const segments = rel.split('/')
    if (!(KIND_ROOTS as readonly string[]).includes(segments[0]!)) {
      push(
        'composition-kind-root',
        compositionFile,
        at(),
        `path ${JSON.stringify(entry)} (${shown}) is not under a kind root: manifests live in ${KIND_ROOTS.map((k) => `${k}/`).join(', ')}`,
      )
      return
    }
    if (segments.length < 3) return // directly under a kind root: reported repository-wide as legacy-layout
    const prev = listed.get(rel)
    if (prev !== undefined) {
      push(
        'composition-duplicate',
        compositionFile,
        at(),
        `path ${JSON.stringify(entry)} is listed twice (first as ${JSON.stringify(prev)}); remove one`,
      )
      return
    }
    listed.set(rel, entry)
    files.push({ real, rel, info })
  })
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))

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

  // ------------------------------------------------ index: duplicates and allowlist
  const byKey = new Map<ResourceKey, LoadedResource>()
  const byGuest = new Map<string, LoadedResource>()
  const allow = new Set(src.entry.nodes)
  for (const r of resources) {
    const m = r.manifest
    const first = byKey.get(r.key)
    if (first) {
      push(
        'duplicate-name',
        r.file,
        locate(r, ['metadata', 'name']),
        `${m.kind} "${m.metadata.name}" is declared twice in cluster ${name} (first at ${first.file}:${first.line}); names are unique per kind`,
      )
      continue
    }
    byKey.set(r.key, r)
    if (isGuestKind(m.kind)) {
      const spec = m.spec as { node: string; vmid: number }
      // vmids are cluster-wide in PVE (one /etc/pve/nodes/*/{qemu-server,lxc}/<vmid>.conf namespace)
      const g = String(spec.vmid)
      const other = byGuest.get(g)
      if (other) {
        const where = (other.manifest.spec as { node: string }).node
        push(
          'duplicate-vmid',
          r.file,
          locate(r, ['spec', 'vmid']),
          `PVE id ${spec.vmid} is claimed by both ${other.key} on node "${where}" (${other.file}:${other.line}) and ${r.key} on node "${spec.node}"; vmids are unique across the whole cluster`,
        )
      } else byGuest.set(g, r)
      if (allow.size > 0 && !allow.has(spec.node)) {
        push(
          'node-not-allowed',
          r.file,
          locate(r, ['spec', 'node']),
          `unknown node: "${spec.node}" is not in the nodes allowlist of cluster ${name} (pve.clusters.${name}.nodes: ${[...allow].join(', ')})`,
        )
      }
    } else if (allow.size > 0) {
      // Artifacts may be shared (base/) by clusters with different nodes: a node of another cluster's
      // allowlist is scoped out of this cluster's copy; a node no cluster knows is an error (typo guard).
      const spec = m.spec as { nodes: string[] }
      const kept: string[] = []
      spec.nodes.forEach((n, i) => {
        if (allow.has(n)) kept.push(n)
        else if (!otherNodes.has(n)) {
          push(
            'node-not-allowed',
            r.file,
            locate(r, ['spec', 'nodes', i]),
            `unknown node: "${n}" is not in the nodes allowlist of cluster ${name} (pve.clusters.${name}.nodes: ${[...allow].join(', ')}) nor of any other cluster`,
          )
        }
      })
      if (kept.length === 0 && spec.nodes.every((n) => otherNodes.has(n))) {
        push(
          'node-not-allowed',
          r.file,
          locate(r, ['spec', 'nodes']),
          `none of the nodes of ${r.key} (${spec.nodes.join(', ')}) belong to cluster ${name} (nodes: ${[...allow].join(', ')}): add one of its nodes or remove the file from ${compositionFile}`,
        )
      }
      spec.nodes = kept
    }
  }
  const indexed = [...byKey.values()]

  // ------------------------------------------------ dependencies
  const byName = new Map<string, LoadedResource[]>()
  for (const r of indexed) {
    const list = byName.get(r.manifest.metadata.name) ?? []
    list.push(r)
    byName.set(r.manifest.metadata.name, list)
  }
  const edges = new Map<ResourceKey, ResourceKey[]>()
  for (const r of indexed) {
    const targets: ResourceKey[] = []
    for (const ref of referencesOf(r.manifest)) {
      const at = (): Position => locate(r, ref.path) // only when a problem is reported: it re-parses the file
      const target = byKey.get(resourceKey(ref.kind, ref.name))
      if (!target) {
        const sameName = (byName.get(ref.name) ?? []).filter((x) => x !== r)
        if (ref.via !== 'annotation' && sameName.length > 0) {
          push(
            'dependency-kind',
            r.file,
            at(),
            `${ref.via === 'clone' ? 'clone' : ref.path[ref.path.length - 1]} must name a ${ref.kind}, but "${ref.name}" is a ${sameName.map((x) => x.manifest.kind).join(' and a ')}`,
          )
        } else if (ref.via === 'clone' && ref.name === r.manifest.metadata.name) {
          push('clone-invalid', r.file, at(), 'a VM cannot clone itself: clone must name a TemplateVM')
        } else {
          push(
            'dependency-unknown',
            r.file,
            at(),
            `${ref.kind} "${ref.name}" is not in cluster ${name}'s composition: list its file in ${compositionFile} (resources of other clusters are not visible)`,
          )
        }
        continue
      }
      if (ref.via !== 'annotation' && ref.via !== 'clone') {
        // a guest's ISO, disk image or container template must be downloaded onto the guest's own node
        const guestNode = (r.manifest.spec as { node: string }).node
        const nodes = (target.manifest.spec as { nodes: string[] }).nodes
        if (!nodes.includes(guestNode)) {
          push(
            'dependency-node',
            r.file,
            at(),
            `${target.key} is not declared on node "${guestNode}" (its nodes: ${nodes.join(', ') || 'none in this cluster'}): add ${guestNode} to its spec.nodes`,
          )
        }
      }
      if (ref.via === 'clone') {
        const vm = r.manifest.spec as { node: string; vmid: number }
        const tpl = target.manifest.spec as { node: string; vmid: number }
        if (tpl.node !== vm.node)
          push(
            'clone-invalid',
            r.file,
            at(),
            `TemplateVM "${ref.name}" is on node "${tpl.node}", this VM on "${vm.node}": a clone source must be on the same node`,
          )
        else if (tpl.vmid === vm.vmid)
          push('clone-invalid', r.file, at(), `TemplateVM "${ref.name}" has the same vmid ${vm.vmid} as this VM`)
      }
      targets.push(target.key)
    }
    edges.set(r.key, targets)
  }
  const graph = buildGraph(
    indexed.map((r) => r.key),
    edges,
  )
  for (const cycle of graph.cycles) {
    const first = byKey.get(cycle[0]!)!
    const edge = referencesOf(first.manifest).find((ref) => resourceKey(ref.kind, ref.name) === cycle[1])
    push(
      'dependency-cycle',
      first.file,
      edge ? locate(first, edge.path) : { line: first.line, column: first.column },
      `dependency cycle: ${cycle.join(' → ')}; remove one of these dependencies`,
    )
  }

  const index: ClusterIndex = {
    resources: indexed,
    get: (kind, n) => byKey.get(resourceKey(kind, n)) as never,
    ofKind: (kind) => indexed.filter((r) => r.manifest.kind === kind) as never,
    byKey: (key) => byKey.get(key),
    guest: (node, vmid) => {
      const r = byGuest.get(String(vmid))
      return r && (r.manifest.spec as { node: string }).node === node ? r : undefined
    },
  }
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
