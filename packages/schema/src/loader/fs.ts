/**
 * The file-system port of the loader. The default reads the local disk; the CLI may pass another (for
 * example one that reads blobs of a git commit). Paths are absolute, in the host's form.
 */
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs'

export interface FileInfo {
  isFile: boolean
  isDirectory: boolean
  isSymbolicLink: boolean
  size: number
}

export interface RepoFs {
  /** follows symlinks; undefined when the path does not exist (or a link dangles) */
  stat(path: string): Promise<FileInfo | undefined>
  /** does not follow symlinks; undefined when nothing is there */
  lstat(path: string): Promise<FileInfo | undefined>
  /** entry names of a directory */
  readdir(path: string): Promise<string[]>
  /** canonical path with every symlink resolved */
  realpath(path: string): Promise<string>
  readFile(path: string): Promise<string>
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

function info(s: import('node:fs').Stats): FileInfo {
  return { isFile: s.isFile(), isDirectory: s.isDirectory(), isSymbolicLink: s.isSymbolicLink(), size: s.size }
}

function missing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP'
}

/**
 * The local disk, read with synchronous calls behind the async port: manifests are many and small, and one
 * synchronous call costs a fraction of a thread-pool round trip (1,000 manifests: about 20 ms instead of
 * 75-115 ms). A repository read blocks the event loop only for that long.
 */
export const nodeFs: RepoFs = {
  async stat(path) {
    try {
      return info(statSync(path))
    } catch (err) {
      if (missing(err)) return undefined
      throw err
    }
  },
  async lstat(path) {
    try {
      return info(lstatSync(path))
    } catch (err) {
      if (missing(err)) return undefined
      throw err
    }
  },
  async readdir(path) {
    return readdirSync(path).sort()
  },
  async realpath(path) {
    return realpathSync.native(path)
  },
  async readFile(path) {
    // fatal: invalid UTF-8 is an error, not silently replaced by U+FFFD and sent on to PVE
    try {
      return utf8.decode(readFileSync(path))
    } catch (err) {
      if (err instanceof TypeError) throw new Error('not valid UTF-8 text', { cause: err })
      throw err
    }
  },
}
