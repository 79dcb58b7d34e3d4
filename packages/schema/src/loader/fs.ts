/**
 * The file-system port of the loader. The default reads the local disk; the CLI may pass another (for
 * example one that reads blobs of a git commit). Paths are absolute, in the host's form.
 */
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises'

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

function info(s: import('node:fs').Stats): FileInfo {
  return { isFile: s.isFile(), isDirectory: s.isDirectory(), isSymbolicLink: s.isSymbolicLink(), size: s.size }
}

function missing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP'
}

export const nodeFs: RepoFs = {
  async stat(path) {
    try {
      return info(await stat(path))
    } catch (err) {
      if (missing(err)) return undefined
      throw err
    }
  },
  async lstat(path) {
    try {
      return info(await lstat(path))
    } catch (err) {
      if (missing(err)) return undefined
      throw err
    }
  },
  async readdir(path) {
    return (await readdir(path)).sort()
  },
  realpath: (path) => realpath(path),
  readFile: (path) => readFile(path, 'utf8'),
}
