/**
 * Static checks of the documentation: every relative link in README.md, docs/**\/*.md, examples/README.md, examples/repository/README.md and the
 * package READMEs points at a file or folder that exists (and every #fragment at a heading); every docs page is
 * in the index (docs/README.md) and linked from the root README; every publishable package has a README with an
 * example block.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { anchorLinks, fencedBlocks, headingAnchors, relativeLinks } from './markdown.js'
import { repoRoot } from './sandbox.js'

function markdownFiles(dir: string): string[] {
  return readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name)
    if (entry.isDirectory()) return markdownFiles(rel)
    return entry.name.endsWith('.md') ? [rel] : []
  })
}

const packageReadmes = ['packages', 'tools', 'examples'].flatMap((parent) =>
  readdirSync(path.join(repoRoot, parent))
    .map((name) => `${parent}/${name}/README.md`)
    .filter((file) => existsSync(path.join(repoRoot, file))),
)
const docFiles = [
  'README.md',
  ...markdownFiles('docs'),
  ...(existsSync(path.join(repoRoot, 'examples/README.md')) ? ['examples/README.md'] : []),
  ...(existsSync(path.join(repoRoot, 'examples/repository/README.md')) ? ['examples/repository/README.md'] : []),
  ...packageReadmes,
].sort()

/** Where a link from `file` lands, relative to the repository root ("/x" counts from the root, as on GitHub). */
function resolveLink(file: string, target: string): string {
  const abs = target.startsWith('/')
    ? path.join(repoRoot, target)
    : path.resolve(path.dirname(path.join(repoRoot, file)), target)
  return path.relative(repoRoot, abs).split(path.sep).join('/')
}

function linkedPages(file: string): Set<string> {
  return new Set(relativeLinks(readFileSync(path.join(repoRoot, file), 'utf8')).map((l) => resolveLink(file, l.target)))
}

describe('relative links', () => {
  it.each(docFiles)('%s: every relative link exists', (file) => {
    const broken = relativeLinks(readFileSync(path.join(repoRoot, file), 'utf8'))
      .filter((l) => {
        const rel = resolveLink(file, l.target)
        return rel.startsWith('..') || !existsSync(path.join(repoRoot, rel))
      })
      .map((l) => `${file}:${l.line}: ${l.target}`)
    expect(broken).toEqual([])
  })
})

// Published READMEs and --help link docs by absolute URL (relative links break on the npm registry): every such
// link into this repository names a file that exists here.
const repoUrl = (
  JSON.parse(readFileSync(path.join(repoRoot, 'packages/cli/package.json'), 'utf8')) as { repository: { url: string } }
).repository.url
  .replace(/^git\+/, '')
  .replace(/\.git$/, '')
describe('absolute links into this repository', () => {
  const own = new RegExp(`${repoUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/(?:blob|tree)/main/([^)#\\s'"]+)`, 'g')
  it.each([...docFiles, 'packages/cli/src/cli.ts'])('%s: every link names a file of the repository', (file) => {
    const text = readFileSync(path.join(repoRoot, file), 'utf8')
    const broken = [...text.matchAll(own)]
      .map((m) => m[1] as string)
      .filter((rel) => !existsSync(path.join(repoRoot, rel)))
    expect(broken).toEqual([])
  })

  it('the package READMEs use them for every page outside their package', () => {
    const outside = packageReadmes
      .filter((f) => f.startsWith('packages/'))
      .flatMap((f) =>
        relativeLinks(readFileSync(path.join(repoRoot, f), 'utf8'))
          .filter((l) => l.target.startsWith('../'))
          .map((l) => `${f}:${l.line}: ${l.target}`),
      )
    expect(outside).toEqual([])
  })
})

describe('anchors', () => {
  it.each(docFiles)('%s: every #fragment names a heading of its target page', (file) => {
    const broken = anchorLinks(readFileSync(path.join(repoRoot, file), 'utf8'))
      .filter((a) => {
        const target = a.target === '' ? file : resolveLink(file, a.target)
        if (!target.endsWith('.md') || !existsSync(path.join(repoRoot, target))) return false // the link test reports missing files
        return !headingAnchors(readFileSync(path.join(repoRoot, target), 'utf8')).has(a.fragment)
      })
      .map((a) => `${file}:${a.line}: ${a.target}#${a.fragment}`)
    expect(broken).toEqual([])
  })
})

describe('the docs index', () => {
  const pages = markdownFiles('docs').filter((f) => f !== 'docs/README.md')

  it('docs/README.md links every page under docs/', () => {
    const linked = linkedPages('docs/README.md')
    expect(pages.filter((p) => !linked.has(p))).toEqual([])
  })

  it('the root README links every top-level docs page', () => {
    const linked = linkedPages('README.md')
    const topLevel = pages.filter((p) => p.split('/').length === 2)
    expect(topLevel.filter((p) => !linked.has(p))).toEqual([])
  })

  it('the root README names the two commands, and they exist', () => {
    const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8')
    expect(readme).toContain('pnpm test') // CI checks it too
    expect(readme).toContain('pnpm install && pnpm demo')
    const scripts = (
      JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts
    expect(scripts.demo).toMatch(/tools\/demo\.mjs/)
    expect(scripts.test).toBeDefined()
    expect(existsSync(path.join(repoRoot, 'tools/demo.mjs'))).toBe(true)
  })
})

/** Every workspace package that is published, plus the documented private tools. */
function documentedPackages(): string[] {
  const dirs = ['packages', 'tools'].flatMap((parent) =>
    readdirSync(path.join(repoRoot, parent))
      .map((name) => `${parent}/${name}`)
      .filter(
        (dir) =>
          existsSync(path.join(repoRoot, dir, 'package.json')) && statSync(path.join(repoRoot, dir)).isDirectory(),
      ),
  )
  return dirs.filter((dir) => {
    const manifest = JSON.parse(readFileSync(path.join(repoRoot, dir, 'package.json'), 'utf8')) as { private?: boolean }
    return manifest.private !== true || dir === 'tools/pve-sim' || dir === 'tools/docs-check'
  })
}

const CODE_LANGUAGES = ['ts', 'typescript', 'js', 'javascript', 'sh', 'bash', 'shell', 'yaml']
/** An install line alone is not an example. */
const INSTALL_ONLY = /^\s*(?:(?:pnpm|npm|yarn)\s+(?:add|i|install)\b[^\n]*\n?)+\s*$/

describe('package READMEs', () => {
  it('finds the publishable packages', () => {
    expect(documentedPackages()).toEqual(
      expect.arrayContaining([
        'packages/schema',
        'packages/cli',
        'packages/planner',
        'packages/sops',
        'packages/pve-client',
      ]),
    )
  })

  it.each(documentedPackages())('%s/README.md exists and has an example block', (dir) => {
    const file = path.join(repoRoot, dir, 'README.md')
    expect(existsSync(file), `${dir}/README.md is missing`).toBe(true)
    const examples = fencedBlocks(readFileSync(file, 'utf8')).filter(
      (b) => CODE_LANGUAGES.includes(b.words[0] ?? '') && b.body.trim() !== '' && !INSTALL_ONLY.test(b.body),
    )
    expect(examples.length, `${dir}/README.md has no example code block`).toBeGreaterThan(0)
  })
})
