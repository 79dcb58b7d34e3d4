#!/usr/bin/env node
// `pnpm pack-tarballs`: the public packages packed as npm would publish them, into dist-tarballs/ (or the directory
// given), for an install without the registry (README.md, "Install"). Needs `pnpm build` first. publish-check packs
// through the same function, so what the README installs is what it checks.
import { execFileSync } from 'node:child_process'
import { mkdirSync, readdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
/** the public packages, in dependency order */
export const PACKAGES = ['schema', 'pve-client', 'sops', 'planner', 'cli']

/** Packs every public package into `destination`; returns the tarball files. */
export function packTarballs(destination) {
  mkdirSync(destination, { recursive: true })
  for (const name of PACKAGES)
    execFileSync('pnpm', ['pack', '--pack-destination', destination], {
      cwd: path.join(ROOT, 'packages', name),
      stdio: ['ignore', 'ignore', 'inherit'],
    })
  return readdirSync(destination)
    .filter((f) => /^proxops-.*\.tgz$/.test(f))
    .map((f) => path.join(destination, f))
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const destination = path.resolve(process.argv[2] ?? path.join(ROOT, 'dist-tarballs'))
  for (const file of packTarballs(destination)) process.stdout.write(`${path.relative(process.cwd(), file)}\n`)
}
