/**
 * Config files: `proxops.yaml` (or a `--config` file) and `clusters/<name>/config.yaml`, read by the loader's
 * rules and validated by the schemas of config.ts, with positions. The CLI reads its configuration through
 * `readConfigFile`, so `validate` and every command agree.
 */
import * as v from 'valibot'
import { dirname, relative, resolve, sep } from 'node:path'
import { type SchemaError, sortErrors } from '../errors.js'
import {
  type ClusterEntry,
  type ConfigLayer,
  type ProcessConfig,
  configProblems,
  processConfigSchema,
} from '../config.js'
import { formatPath, type PathKey } from '../manifest/parse.js'
import type { Position, YamlDocument } from '../yaml.js'
import { type RepoFs, nodeFs } from './fs.js'
import { isMapping, Loader } from './reading.js'
import type { LoadLimits } from './types.js'

export interface ConfigSource {
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

export const processDefaults = (): ProcessConfig => v.parse(processConfigSchema, {})

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
export async function loadProcessFile(
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

export async function loadClusterConfig(
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
