/**
 * The git source, through the `git` CLI (execFile, never a shell). Local mode reads the operator's work
 * tree and never writes to it. URL mode keeps its own clone under `<data-dir>/git-cache` and fetches once
 * per call to sync(). Credentials never reach argv: an HTTPS token travels as an http.extraHeader through
 * GIT_CONFIG_COUNT/KEY_0/VALUE_0, an SSH deploy key through GIT_SSH_COMMAND.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { CliError, oneLine } from './errors.js'
import type { Redactor } from './redact.js'

export interface GitAuth {
  /** HTTPS token, sent as `Authorization: Basic base64(git:<token>)` */
  token?: string
  /** SSH deploy key (private key file) */
  sshKeyFile?: string
  /** known_hosts for SSH; absent = the user's default, host keys always checked */
  knownHostsFile?: string
}

export interface GitRunner {
  (
    args: readonly string[],
    options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
  ): Promise<{ stdout: string }>
}

/** The real runner: execFile with a buffer big enough for diffs of a manifest repository. */
export const execGit: GitRunner = (args, options) =>
  new Promise((resolve, reject) => {
    execFile(
      'git',
      [...args],
      {
        cwd: options.cwd,
        env: options.env,
        timeout: options.timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (error) reject(Object.assign(error, { stderr: String(stderr) }))
        else resolve({ stdout: String(stdout) })
      },
    )
  })

export interface GitOptions {
  redactor: Redactor
  /** the environment git inherits (PATH, HOME, proxies); credentials are added on top */
  env: Readonly<Record<string, string | undefined>>
  auth?: GitAuth
  timeoutMs?: number
  runner?: GitRunner
}

/** Quotes a path for GIT_SSH_COMMAND, which git hands to a shell. */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`
}

/** The environment for one git invocation. Exported for tests: nothing secret may be in argv. */
export function gitEnv(
  base: Readonly<Record<string, string | undefined>>,
  auth: GitAuth | undefined,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(base)) {
    // inherited git config overrides would change what we read; credentials come only from us
    if (value !== undefined && !/^GIT_(CONFIG|DIR|WORK_TREE|INDEX_FILE|SSH_COMMAND|ASKPASS)/.test(key)) env[key] = value
  }
  env.GIT_TERMINAL_PROMPT = '0'
  env.GCM_INTERACTIVE = 'never'
  env.GIT_OPTIONAL_LOCKS = '0'
  const config: [string, string][] = []
  if (auth?.token) {
    const basic = Buffer.from(`git:${auth.token}`).toString('base64')
    config.push(['http.extraHeader', `Authorization: Basic ${basic}`])
  }
  config.push(['credential.helper', ''])
  config.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key
    env[`GIT_CONFIG_VALUE_${index}`] = value
  })
  env.GIT_CONFIG_COUNT = String(config.length)
  if (auth?.sshKeyFile) {
    const parts = [
      'ssh',
      '-i',
      shellQuote(auth.sshKeyFile),
      '-o',
      'IdentitiesOnly=yes',
      '-o',
      'BatchMode=yes',
      '-o',
      'StrictHostKeyChecking=yes',
    ]
    if (auth.knownHostsFile) parts.push('-o', shellQuote(`UserKnownHostsFile=${auth.knownHostsFile}`))
    env.GIT_SSH_COMMAND = parts.join(' ')
  }
  return env
}

export class Git {
  readonly #options: GitOptions
  readonly #runner: GitRunner
  constructor(options: GitOptions) {
    this.#options = options
    this.#runner = options.runner ?? execGit
    if (options.auth?.token) {
      options.redactor.add(options.auth.token, Buffer.from(`git:${options.auth.token}`).toString('base64'))
    }
  }

  /** Runs git in `repo` with safe.directory set (the daemon user may not own the checkout). */
  async run(repo: string, args: readonly string[], what: string): Promise<string> {
    const env = gitEnv(this.#options.env, this.#options.auth)
    try {
      const { stdout } = await this.#runner(['-c', `safe.directory=${repo}`, ...args], {
        cwd: repo,
        env,
        timeoutMs: this.#options.timeoutMs ?? 120_000,
      })
      return stdout
    } catch (error) {
      const err = error as NodeJS.ErrnoException & { stderr?: string; killed?: boolean }
      const detail =
        err.code === 'ENOENT'
          ? 'the git executable was not found on PATH'
          : err.killed
            ? 'timed out'
            : lastLine(err.stderr ?? err.message)
      throw new CliError('GIT', oneLine(this.#options.redactor.text(`git ${what} failed: ${detail}`)))
    }
  }

  /** HEAD's commit, or undefined in a repository without commits. */
  async head(repo: string): Promise<string | undefined> {
    try {
      return (
        (await this.run(repo, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], 'rev-parse')).trim() || undefined
      )
    } catch {
      return undefined
    }
  }

  /** Paths with uncommitted changes (tracked or untracked), sorted. */
  async dirtyPaths(repo: string): Promise<string[]> {
    const out = await this.run(
      repo,
      ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames'],
      'status',
    )
    return out
      .split('\0')
      .filter((entry) => entry.length > 3)
      .map((entry) => entry.slice(3))
      .sort()
  }

  /**
   * The identity of what a local work tree holds: HEAD when clean, else HEAD plus a hash of the uncommitted
   * content (`<sha>-dirty-<12 hex>`), so a saved plan notices an edit even without a commit.
   */
  async localRevision(
    repo: string,
    options: { ignore?: readonly string[] } = {},
  ): Promise<{ commit: string; dirty: boolean }> {
    const head = (await this.head(repo)) ?? 'no-commit'
    // absolute paths of files that are not desired state (a saved plan written into the work tree)
    const ignore = new Set((options.ignore ?? []).map((f) => path.resolve(f)))
    const dirty = (await this.dirtyPaths(repo)).filter((f) => !ignore.has(path.resolve(repo, f)))
    if (dirty.length === 0) return { commit: head, dirty: false }
    const hash = createHash('sha256')
    hash.update(await this.run(repo, ['diff', '--binary', '--no-color', 'HEAD', '--'], 'diff').catch(() => ''))
    for (const file of dirty) {
      hash.update(`\0${file}\0`)
      try {
        hash.update(readFileSync(path.join(repo, file)))
      } catch {
        hash.update('(deleted)')
      }
    }
    return { commit: `${head}-dirty-${hash.digest('hex').slice(0, 12)}`, dirty: true }
  }

  /**
   * URL mode: one fetch of `branch` into the private clone at `dir`, then its work tree moved to the fetched
   * commit. Returns that commit. The clone is ours, so it may be reset; the operator's tree never is.
   */
  async sync(url: string, branch: string, dir: string): Promise<string> {
    if (!existsSync(path.join(dir, '.git'))) {
      mkdirSync(dir, { recursive: true })
      await this.run(dir, ['init', '--quiet'], 'init')
      await this.run(dir, ['remote', 'add', 'origin', '--', url], 'remote add')
    } else {
      await this.run(dir, ['remote', 'set-url', 'origin', '--', url], 'remote set-url')
    }
    const ref = `refs/remotes/origin/${branch}`
    await this.run(
      dir,
      ['fetch', '--quiet', '--no-tags', '--prune', '--depth=1', '--', 'origin', `+refs/heads/${branch}:${ref}`],
      'fetch',
    )
    await this.run(dir, ['checkout', '--quiet', '--force', '--detach', ref, '--'], 'checkout')
    await this.run(dir, ['clean', '--quiet', '-ffdx'], 'clean')
    return (await this.run(dir, ['rev-parse', '--verify', 'HEAD^{commit}'], 'rev-parse')).trim()
  }
}

function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  const fatal = lines.find((l) => /^(fatal|error):/.test(l))
  return fatal ?? lines[lines.length - 1] ?? 'unknown error'
}
