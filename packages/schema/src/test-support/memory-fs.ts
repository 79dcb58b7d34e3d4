/** A repository held in memory behind the loader's file-system port, for property tests that load many. */
import { posix } from 'node:path'
import type { FileInfo, RepoFs } from '../loader/fs.js'

/** `files` by path relative to `root` (`/` separated); directories are implied by the paths, no symlinks. */
export function memoryFs(files: Readonly<Record<string, string>>, root = '/repo'): RepoFs {
  const byPath = new Map(Object.entries(files).map(([rel, text]) => [posix.join(root, rel), text]))
  const dirs = new Set<string>()
  for (const path of byPath.keys())
    for (let d = posix.dirname(path); !dirs.has(d); d = posix.dirname(d)) {
      dirs.add(d)
      if (d === '/') break
    }
  const info = (path: string): FileInfo | undefined => {
    const text = byPath.get(path)
    if (text !== undefined) return { isFile: true, isDirectory: false, isSymbolicLink: false, size: text.length }
    return dirs.has(path) ? { isFile: false, isDirectory: true, isSymbolicLink: false, size: 0 } : undefined
  }
  return {
    stat: async (path) => info(posix.normalize(path)),
    lstat: async (path) => info(posix.normalize(path)),
    readdir: async (path) => {
      const dir = posix.normalize(path)
      const names = new Set<string>()
      for (const p of [...byPath.keys(), ...dirs])
        if (posix.dirname(p) === dir && p !== dir) names.add(posix.basename(p))
      return [...names].sort()
    },
    realpath: async (path) => {
      const p = posix.normalize(path)
      if (info(p) === undefined) throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' })
      return p
    },
    readFile: async (path) => {
      const text = byPath.get(posix.normalize(path))
      if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' })
      return text
    },
  }
}
