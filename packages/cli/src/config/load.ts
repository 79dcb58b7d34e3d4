/**
 * Config I/O: repository discovery, reading proxops.yaml, clusters/<name>/config.yaml and a --config file
 * through @proxops/schema's reader (see docs/configuration.md). Everything else is the pure mergeConfig /
 * resolveCredentials.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { CliError } from '../errors.js'
import { readConfig } from './raw.js'
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

/** `clusters/<dir>/config.yaml` for every directory that has one, sorted by name; read inside the root only. */
export async function discoverClusterFiles(root: string): Promise<ClusterFile[]> {
  const dir = path.join(root, 'clusters')
  if (!existsSync(dir)) return []
  const names = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, 'config.yaml')))
    .map((entry) => entry.name)
    .sort()
  const out: ClusterFile[] = []
  for (const name of names) {
    const raw = await readConfig(path.join(dir, name, 'config.yaml'), 'cluster config', { root, cluster: name })
    if (raw) out.push({ name, raw })
  }
  return out
}

function nonEmpty(value: string | undefined): string | undefined {
  return value && value.trim() !== '' ? value : undefined
}

/** Loads and merges every config source into a DraftConfig (no credentials resolved yet). */
export async function loadDraftConfig(input: LoadInput): Promise<DraftConfig> {
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
    // an explicit --git-path / PROXOPS_GIT_PATH is the work tree itself (it skips discovery), as in
    // `validate`; so a ProxOps tree in a sub-directory of a larger repository works. Otherwise walk up from the cwd.
    const root =
      gitPathArg !== undefined
        ? requireDir(path.resolve(input.cwd, gitPathArg), '--git-path')
        : (findRepositoryRoot(input.cwd) ?? notFound(input.cwd))
    const rootFile = await readConfig(path.join(root, 'proxops.yaml'), 'proxops.yaml', { root, optional: true })
    return mergeConfig({
      root,
      ...(rootFile ? { rootFile } : {}),
      clusterFiles: await discoverClusterFiles(root),
      flags,
      home: input.home,
      cwd: input.cwd,
    })
  }

  // --config: one file; its git source (or --git-path) decides the root
  // the operator's own file: it may live outside the repository, but is still a regular file of bounded size
  const configFile = (await readConfig(path.resolve(input.cwd, configPath), '--config file', { display: configPath }))!
  const fileDir = path.dirname(configFile.file)
  const fileGit = configFile.layer.config.git
  let root: string
  if (gitPathArg !== undefined) {
    root = requireDir(path.resolve(input.cwd, gitPathArg), '--git-path')
  } else if (fileGit.path !== undefined && fileGit.path !== '.') {
    const start = path.resolve(fileDir, fileGit.path)
    root = findRepositoryRoot(start) ?? notFound(start)
  } else if (fileGit.url !== undefined || input.flags.gitUrl !== undefined) {
    root = findRepositoryRoot(fileDir) ?? fileDir
  } else {
    root = findRepositoryRoot(fileDir) ?? notFound(fileDir)
  }
  const rootPath = path.join(root, 'proxops.yaml')
  const rootFile =
    path.resolve(rootPath) !== configFile.file
      ? await readConfig(rootPath, 'proxops.yaml', { root, optional: true })
      : undefined
  // a --config that is itself a cluster-local file contributes its cluster once, as a cluster file
  const clusterFiles = (await discoverClusterFiles(root)).filter((c) => c.raw.file !== configFile.file)
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
