/**
 * Paths inside the repository root. Every path is checked lexically and again after resolving symlinks (real
 * paths) before any file is opened, so the loader reads nothing outside the root.
 */
import { isAbsolute, relative, sep } from 'node:path'
import type { RepoFs } from './fs.js'

/** a `.` or `..` path segment, with either separator */
const DOT_SEGMENT = /(?:^|[\\/])\.\.?(?:[\\/]|$)/

export class RepoPaths {
  /** real path of the root; set once it has been resolved */
  root = ''

  constructor(readonly fs: RepoFs) {}

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
}
