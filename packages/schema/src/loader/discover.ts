/**
 * Repository discovery: walk upward from a start directory to the nearest ancestor holding a `.git`
 * entry (a directory, or a file as in submodules and worktrees).
 */
import { dirname, resolve } from 'node:path'
import { type RepoFs, nodeFs } from './fs.js'

export type DiscoveryResult = { ok: true; root: string } | { ok: false; message: string }

/** Finds the repository root from `start` (a directory, resolved against the process cwd when relative). */
export async function discoverRepository(start: string, fs: RepoFs = nodeFs): Promise<DiscoveryResult> {
  let dir = resolve(start)
  const startInfo = await fs.stat(dir)
  if (!startInfo?.isDirectory) {
    return {
      ok: false,
      message: `no ProxOps GitOps repository found: start directory ${dir} does not exist or is not a directory`,
    }
  }
  for (;;) {
    if ((await fs.lstat(resolve(dir, '.git'))) !== undefined) return { ok: true, root: dir }
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return {
    ok: false,
    message: `no ProxOps GitOps repository found in ${resolve(start)} or any parent directory (looked for a .git entry); run inside a clone or pass --git-path <dir>`,
  }
}
