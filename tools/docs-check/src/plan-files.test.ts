/**
 * Plan files the docs tell you to save (`diff --out <file>`) stay out of git in a repository made from the example:
 * every such file name in the docs and READMEs is ignored by examples/repository/.gitignore, as git reads it.
 */
import { execFileSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { repoRoot } from './sandbox.js'

const pages = [
  'README.md',
  'examples/repository/README.md',
  ...readdirSync(path.join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
  ...readdirSync(path.join(repoRoot, 'packages')).map((p) => `packages/${p}/README.md`),
]

/** `--out <file>` in a page, the placeholder `<file>` left out. */
function planFiles(text: string): string[] {
  return [...text.matchAll(/--out[ =]([A-Za-z0-9._/-]+)/g)].map((m) => m[1]!)
}

describe('saved plan files', () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'proxops-gitignore-'))
  afterAll(() => rmSync(tmp, { recursive: true, force: true }))

  it('every plan file the docs name is ignored by the example repository', () => {
    execFileSync('git', ['init', '-q', tmp])
    copyFileSync(path.join(repoRoot, 'examples/repository/.gitignore'), path.join(tmp, '.gitignore'))
    const named = pages
      .filter((page) => existsSync(path.join(repoRoot, page)))
      .flatMap((page) => planFiles(readFileSync(path.join(repoRoot, page), 'utf8')).map((file) => ({ page, file })))
    expect(named.length).toBeGreaterThan(3)
    for (const { page, file } of named) {
      let ignored = true
      try {
        execFileSync('git', ['-C', tmp, 'check-ignore', '-q', file])
      } catch {
        ignored = false
      }
      expect(ignored, `${page}: --out ${file} would be committed (examples/repository/.gitignore)`).toBe(true)
    }
  })
})
