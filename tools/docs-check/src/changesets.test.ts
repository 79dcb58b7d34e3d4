/**
 * Every changeset can be released: changesets refuses (`changeset status`, `changeset version`) a file that names
 * both a package of the config's `ignore` list (the private simulator, bench and example) and a published one, and
 * a file that names a package the workspace does not have.
 */
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './sandbox.js'

const dir = path.join(repoRoot, '.changeset')
const ignored = new Set(
  (JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8')) as { ignore: string[] }).ignore,
)

function workspacePackages(): Set<string> {
  const names = new Set<string>()
  for (const group of ['packages', 'tools', 'examples']) {
    for (const entry of readdirSync(path.join(repoRoot, group), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue
      try {
        const pkg = JSON.parse(readFileSync(path.join(repoRoot, group, entry.name, 'package.json'), 'utf8')) as {
          name?: string
        }
        if (pkg.name) names.add(pkg.name)
      } catch {
        // a folder without a package.json is not a workspace package
      }
    }
  }
  return names
}

/** the package names of a changeset's front matter (one `"name": bump` line each) */
export function changesetPackages(text: string): string[] {
  const front = /^---\n([\s\S]*?)\n?---/.exec(text)?.[1] ?? ''
  return front
    .split('\n')
    .map((line) => /^\s*["']?([^"':\s]+)["']?\s*:/.exec(line)?.[1])
    .filter((n): n is string => n !== undefined)
}

describe('.changeset/*.md', () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.md') && f !== 'README.md')
  const known = workspacePackages()

  it('reads the front matter of a changeset', () => {
    expect(changesetPackages('---\n"@proxops/cli": minor\n"@proxops/pve-sim": patch\n---\n\ntext\n')).toEqual([
      '@proxops/cli',
      '@proxops/pve-sim',
    ])
  })

  it('no changeset mixes ignored and published packages, or names an unknown one', () => {
    const problems: string[] = []
    for (const file of files) {
      const names = changesetPackages(readFileSync(path.join(dir, file), 'utf8'))
      for (const n of names) if (!known.has(n)) problems.push(`${file}: ${n} is not a workspace package`)
      const mixed = names.some((n) => ignored.has(n)) && names.some((n) => !ignored.has(n))
      if (mixed) problems.push(`${file}: mixes ignored and published packages (${names.join(', ')})`)
    }
    expect(problems).toEqual([])
  })
})
