/**
 * Config I/O (RB 2.2, 6.4): repository discovery, reading proxops.yaml, clusters/<name>/config.yaml and
 * a --config file. Everything else is the pure mergeConfig / resolveCredentials.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { CliError } from '../errors.js'
import { parseConfigFile, type RawConfigFile } from './raw.js'
import { mergeConfig, type ClusterFile } from './resolve.js'
import type { DraftConfig, GlobalFlags } from './types.js'

export interface LoadInput {
  flags: GlobalFlags
  env: Readonly<Record<string, string | undefined>>
  cwd: string
  home: string
}

/** The nearest ancestor (or the directory itself) holding a `.git` entry: directory or file (worktrees). */
export function findRepositoryRoot(start: string): string | undefined {
  let dir = path.resolve(start)
  for (;;) {
    if (existsSync(path.join(dir, '.git'))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) return undefined
    dir = parent
  }
}

function readConfig(file: string, what: string): RawConfigFile {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new CliError('CONFIG_NOT_FOUND', `cannot read ${what}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, {
      file,
    })
  }
  return parseConfigFile(file, text)
}

/** `clusters/<dir>/config.yaml` for every directory that has one, sorted by name. */
export function discoverClusterFiles(root: string): ClusterFile[] {
  const dir = path.join(root, 'clusters')
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, 'config.yaml')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => ({ name, raw: readConfig(path.join(dir, name, 'config.yaml'), 'cluster config') }))
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() !== '' ? value : undefined
}

/** Loads and merges every config source into a DraftConfig (no credentials resolved yet). */
export function loadDraftConfig(input: LoadInput): DraftConfig {
  const configPath = input.flags.config ?? nonEmpty(input.env.PROXOPS_CONFIG)
  const gitPathArg = input.flags.gitPath ?? nonEmpty(input.env.PROXOPS_GIT_PATH)
  const flags: GlobalFlags = { ...input.flags, ...(gitPathArg !== undefined ? { gitPath: gitPathArg } : {}) }
  const notFound = (start: string): never => {
    throw new CliError(
      'CONFIG_NOT_FOUND',
      `no ProxOps GitOps repository found: no .git in ${start} or any parent; run inside your repository, or pass --git-path`,
    )
  }
  const requireDir = (dir: string, flag: string): string => {
    if (!existsSync(dir) || !statSync(dir).isDirectory())
      throw new CliError('USAGE', `${flag} ${dir} is not a directory`)
    return dir
  }

  if (configPath === undefined) {
    // an explicit --git-path / PROXOPS_GIT_PATH is the work tree itself (RB 6.3: it skips discovery), as in
    // `validate`; so a ProxOps tree in a sub-directory of a larger repository works. Otherwise walk up from the cwd.
    const root =
      gitPathArg !== undefined
        ? requireDir(path.resolve(input.cwd, gitPathArg), '--git-path')
        : (findRepositoryRoot(input.cwd) ?? notFound(input.cwd))
    const rootPath = path.join(root, 'proxops.yaml')
    return mergeConfig({
      root,
      ...(existsSync(rootPath) ? { rootFile: readConfig(rootPath, 'proxops.yaml') } : {}),
      clusterFiles: discoverClusterFiles(root),
      flags,
      home: input.home,
      cwd: input.cwd,
    })
  }

  // --config: one file; its git source (or --git-path) decides the root
  const configFile = readConfig(path.resolve(input.cwd, configPath), '--config file')
  const fileDir = path.dirname(configFile.file)
  let root: string
  if (gitPathArg !== undefined) {
    root = requireDir(path.resolve(input.cwd, gitPathArg), '--git-path')
  } else if (configFile.git?.path !== undefined && configFile.git.path !== '.') {
    const start = path.resolve(fileDir, configFile.git.path)
    root = findRepositoryRoot(start) ?? notFound(start)
  } else if (configFile.git?.url !== undefined || input.flags.gitUrl !== undefined) {
    root = findRepositoryRoot(fileDir) ?? fileDir
  } else {
    root = findRepositoryRoot(fileDir) ?? notFound(fileDir)
  }
  const rootPath = path.join(root, 'proxops.yaml')
  const rootFile =
    existsSync(rootPath) && path.resolve(rootPath) !== configFile.file
      ? readConfig(rootPath, 'proxops.yaml')
      : undefined
  // a --config that is itself a cluster-local file contributes its cluster once, as a cluster file
  const clusterFiles = discoverClusterFiles(root).filter((c) => c.raw.file !== configFile.file)
  return mergeConfig({
    root,
    ...(rootFile ? { rootFile } : {}),
    configFile,
    clusterFiles,
    flags,
    home: input.home,
    cwd: input.cwd,
  })
}
