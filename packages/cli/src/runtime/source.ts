/**
 * The desired-state source for one command or daemon tick: local mode reads the operator's work tree as
 * it is (HEAD plus a hash of uncommitted edits) for the one-shot commands, and HEAD only for the daemon
 * (`commitsOnly`: copied into `<data-dir>/git-head`, the uncommitted paths reported, never reconciled); URL
 * mode fetches once into the private clone under the data dir. A failed fetch with an earlier good tree keeps
 * that tree and marks the state stale.
 */
import path from 'node:path'
import { CliError } from '../errors.js'
import { Git } from '../git.js'
import type { ResolvedConfig } from '../config/types.js'
import type { CliContext } from './context.js'

export interface SourceTree {
  /** directory the manifests are read from */
  root: string
  commit: string
  dirty: boolean
  /** commits-only local mode: the work tree's uncommitted paths (relative to its git root), which are not reconciled */
  uncommitted?: readonly string[]
  /** URL mode: this tick's fetch failed and the previous good tree is used */
  stale: boolean
}

export class GitSource {
  readonly #git: Git
  readonly #config: ResolvedConfig
  readonly #ctx: CliContext
  #lastGood: SourceTree | undefined
  /** ms timestamp of the last successful fetch (URL mode) */
  lastFetchAt: number | undefined

  constructor(ctx: CliContext, config: ResolvedConfig) {
    this.#ctx = ctx
    this.#config = config
    this.#git = new Git({
      redactor: ctx.redactor,
      env: ctx.env,
      auth: {
        ...(config.git.token ? { token: config.git.token } : {}),
        ...(config.git.sshKeyFile ? { sshKeyFile: config.git.sshKeyFile } : {}),
        ...(config.git.knownHostsFile ? { knownHostsFile: config.git.knownHostsFile } : {}),
      },
    })
  }

  get mode(): 'local' | 'url' {
    return this.#config.git.url ? 'url' : 'local'
  }

  /**
   * One sync: exactly one fetch in URL mode. `ignore`: absolute paths left out of a local revision (a saved plan
   * file). `commitsOnly` (the daemon): in local mode, HEAD's tree rather than the work tree.
   */
  async sync(options: { ignore?: readonly string[]; commitsOnly?: boolean } = {}): Promise<SourceTree> {
    const { url, branch, path: local } = this.#config.git
    if (!url && options.commitsOnly) {
      const repo = local ?? this.#config.root
      const [head, uncommitted] = await Promise.all([
        this.#git.snapshot(repo, path.join(this.#config.dataDir, 'git-head'), this.#lastGood?.commit),
        this.#git.dirtyPaths(repo),
      ])
      this.#lastGood = { root: head.root, commit: head.commit, dirty: false, stale: false }
      return { ...this.#lastGood, dirty: uncommitted.length > 0, uncommitted }
    }
    if (!url) {
      const root = local ?? this.#config.root
      const rev = await this.#git.localRevision(root, options)
      this.#lastGood = { root, commit: rev.commit, dirty: rev.dirty, stale: false }
      return this.#lastGood
    }
    const dir = path.join(this.#config.dataDir, 'git-cache')
    try {
      const commit = await this.#git.sync(url, branch, dir)
      this.lastFetchAt = this.#ctx.now()
      this.#lastGood = { root: dir, commit, dirty: false, stale: false }
      return this.#lastGood
    } catch (error) {
      if (this.#lastGood) {
        this.#ctx.log.warn('git fetch failed; reconciling the last good tree', { commit: this.#lastGood.commit, error })
        return { ...this.#lastGood, stale: true }
      }
      throw error instanceof CliError
        ? new CliError('GIT', `git sync failed and no previous good tree is available: ${error.message}`)
        : error
    }
  }
}
