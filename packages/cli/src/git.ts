/**
 * The git source, through the `git` CLI (execFile, never a shell). Local mode reads the operator's work
 * tree and never writes to it. URL mode keeps its own clone under `<data-dir>/git-cache` and fetches once
 * per call to sync().
 *
 * Safety (docs/safety.md): git's ownership check (safe.directory) is never switched off, and every call
 * neutralises what a repository's own config could run (fsmonitor, hooks, pager; diff without external
 * diff or textconv). Credentials never reach argv or disk: an HTTPS token (from the config, or the userinfo of the
 * URL, which is stripped before git sees it) is answered by an inline credential helper scoped to the
 * remote's origin, which reads it from git's environment; an SSH deploy key goes through GIT_SSH_COMMAND.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { CliError, oneLine } from './errors.js'
import type { Redactor } from './redact.js'

export interface GitAuth {
  /** HTTPS token (password); the user name is `git` unless the URL names one */
  token?: string
  /** SSH deploy key (private key file) */
  sshKeyFile?: string
  /** known_hosts for SSH; absent = the user's default, host keys always checked */
  knownHostsFile?: string
}

/**
 * Config for every git call, ahead of the command: what a repository's `.git/config` could make git run is
 * switched off. safe.directory is deliberately absent: git refuses a checkout owned by another user.
 */
export const HARDENING: readonly string[] = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.pager=cat',
  '-c',
  'protocol.ext.allow=never',
]

/** An https URL's userinfo moved out of the URL: git (its argv and its stored remote) only sees `url`. */
export function splitUrlCredentials(url: string): { url: string; username?: string; password?: string } {
  const match = /^(https?:\/\/)([^/@]*)@(.*)$/i.exec(url)
  if (!match) return { url }
  const [, scheme = '', userinfo = '', rest = ''] = match
  const colon = userinfo.indexOf(':')
  const username = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon))
  const password = colon < 0 ? undefined : decodeURIComponent(userinfo.slice(colon + 1))
  return { url: `${scheme}${rest}`, ...(username ? { username } : {}), ...(password ? { password } : {}) }
}

/** The origin (`https://host:port/`) a credential is scoped to. */
function originOf(url: string): string | undefined {
  try {
    const u = new URL(url)
    return u.protocol === 'https:' || u.protocol === 'http:' ? `${u.protocol}//${u.host}/` : undefined
  } catch {
    return undefined
  }
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
        if (error) reject(Object.assign(error as Error, { stderr: String(stderr) }))
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

/** The credential a fetch from one remote uses: answered by the helper for that origin only. */
export interface RemoteCredential {
  origin: string
  username: string
  password: string
}

/** Names of the variables the inline credential helper reads (set only in git's environment). */
const CRED_USER = 'PROXOPS_GIT_CREDENTIAL_USERNAME'
const CRED_PASSWORD = 'PROXOPS_GIT_CREDENTIAL_PASSWORD'
const HELPER = `!f() { test "$1" = get || return 0; printf 'username=%s\\npassword=%s\\n' "$${CRED_USER}" "$${CRED_PASSWORD}"; }; f`

/** The environment for one git invocation. Exported for tests: nothing secret may be in argv. */
export function gitEnv(
  base: Readonly<Record<string, string | undefined>>,
  auth: GitAuth | undefined,
  credential?: RemoteCredential,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(base)) {
    // inherited git config overrides would change what we read; credentials come only from us
    if (
      value !== undefined &&
      !/^(GIT_(CONFIG|DIR|WORK_TREE|INDEX_FILE|SSH_COMMAND|ASKPASS|EXEC_PATH|EXTERNAL_DIFF|PAGER)|PROXOPS_GIT_CREDENTIAL_)/.test(
        key,
      )
    )
      env[key] = value
  }
  env.GIT_TERMINAL_PROMPT = '0'
  env.GCM_INTERACTIVE = 'never'
  env.GIT_OPTIONAL_LOCKS = '0'
  // an empty helper clears the user's helpers: nothing is stored, nothing is asked from elsewhere
  const config: [string, string][] = [['credential.helper', '']]
  if (credential) {
    config.push([`credential.${credential.origin}.helper`, HELPER])
    env[CRED_USER] = credential.username
    env[CRED_PASSWORD] = credential.password
  }
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
    if (options.auth?.token) options.redactor.add(options.auth.token)
  }

  /** Runs git in `repo` with the repository's executable config neutralised (HARDENING). */
  async run(repo: string, args: readonly string[], what: string, credential?: RemoteCredential): Promise<string> {
    const env = gitEnv(this.#options.env, this.#options.auth, credential)
    try {
      const { stdout } = await this.#runner([...HARDENING, ...args], {
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
      const hint = /dubious ownership/.test(detail)
        ? ` (${repo} is owned by another user and git refuses to read it; if you trust it, run as the ProxOps user: git config --global --add safe.directory ${repo})`
        : ''
      throw new CliError('GIT', oneLine(this.#options.redactor.text(`git ${what} failed: ${detail}${hint}`)))
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
    // two git processes at once: each costs a process start, which every command pays
    const [found, paths] = await Promise.all([this.head(repo), this.dirtyPaths(repo)])
    const head = found ?? 'no-commit'
    // absolute paths of files that are not desired state (a saved plan written into the work tree)
    const ignore = new Set((options.ignore ?? []).map((f) => path.resolve(f)))
    const dirty = paths.filter((f) => !ignore.has(path.resolve(repo, f)))
    if (dirty.length === 0) return { commit: head, dirty: false }
    const hash = createHash('sha256')
    hash.update(
      await this.run(
        repo,
        ['diff', '--binary', '--no-color', '--no-ext-diff', '--no-textconv', 'HEAD', '--'],
        'diff',
      ).catch(() => ''),
    )
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
   * The daemon in local mode: HEAD of the operator's checkout at `repo`, copied into the private clone at `dir`
   * (one local fetch of HEAD, then a forced checkout there), so an uncommitted edit is never what is reconciled.
   * The operator's repository is only read (a fetch from it writes nothing to it). Returns the commit and where
   * `repo` lies inside the clone (`repo` may be a folder of a larger repository). `known`: the commit the clone
   * already holds; when HEAD still is that commit, nothing is fetched.
   */
  async snapshot(repo: string, dir: string, known?: string): Promise<{ commit: string; root: string }> {
    const [head, prefix] = await Promise.all([
      this.head(repo),
      this.run(repo, ['rev-parse', '--show-prefix'], 'rev-parse').then((p) => p.trim()),
    ])
    if (head === undefined)
      throw new CliError('GIT', `${repo} has no commit yet: the daemon reconciles commits only; commit the repository`)
    const root = path.join(dir, prefix)
    if (head === known && existsSync(path.join(dir, '.git'))) return { commit: head, root }
    if (!existsSync(path.join(dir, '.git'))) {
      mkdirSync(dir, { recursive: true })
      await this.run(dir, ['init', '--quiet'], 'init')
    }
    const top = (await this.run(repo, ['rev-parse', '--show-toplevel'], 'rev-parse')).trim()
    await this.run(
      dir,
      ['fetch', '--quiet', '--no-tags', '--depth=1', '--', top, '+HEAD:refs/proxops/head'],
      'fetch (local HEAD)',
    )
    await this.run(dir, ['checkout', '--quiet', '--force', '--detach', 'refs/proxops/head', '--'], 'checkout')
    await this.run(dir, ['clean', '--quiet', '-ffdx'], 'clean')
    const commit = (await this.run(dir, ['rev-parse', '--verify', 'HEAD^{commit}'], 'rev-parse')).trim()
    return { commit, root }
  }

  /**
   * URL mode: one fetch of `branch` into the private clone at `dir`, then its work tree moved to the fetched
   * commit. Returns that commit. The clone is ours, so it may be reset; the operator's tree never is.
   */
  async sync(remote: string, branch: string, dir: string): Promise<string> {
    // userinfo never reaches argv or the stored remote: it becomes the helper's answer
    const { url, username, password } = splitUrlCredentials(remote)
    this.#options.redactor.add(password)
    const secret = password ?? this.#options.auth?.token
    const origin = originOf(url)
    const credential =
      secret !== undefined && origin !== undefined
        ? { origin, username: username ?? 'git', password: secret }
        : undefined
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
      credential,
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
