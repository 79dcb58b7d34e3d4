/**
 * Comments and docs stand alone: no tracked file cites a section of a document outside the repository (the
 * reference design's section numbers, the PVE background notes under ../shared), and no code comment narrates the
 * JavaScript engine's internals. Link a page in docs/ or name the PVE source function instead.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './sandbox.js'

const SELF = 'tools/docs-check/src/standalone.test.ts'
/** files that may quote anything: the lockfile, and this test's own patterns */
const EXEMPT = new Set(['pnpm-lock.yaml', SELF])

/** outside citations: section numbers of the reference documents, "architecture row N", the background notes */
const CITATION = [
  /\bR[BS] [0-9]+(\.[0-9]+)?/,
  /\bR[BS] (sections?|rows?) [0-9]/,
  /\bR[BS]'s\b/,
  /§/,
  /shared\/spec/,
  /\barchitecture (rows?|sections?) [0-9]/,
  /\bpve-api\.md\b/,
]
/** engine narration, in code only (docs may say what a profile measured) */
const ENGINE = /\bV8\b|megamorphic|hidden class|deoptimi[sz]/i
const CODE = /\.(ts|mts|mjs|js)$/

function trackedFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f !== '' && !EXEMPT.has(f))
}

/** `file:line: text` for every line of a tracked text file that matches one of `patterns` */
function offenders(files: string[], patterns: RegExp[]): string[] {
  const out: string[] = []
  for (const file of files) {
    let text: string
    try {
      text = readFileSync(path.join(repoRoot, file), 'utf8')
    } catch {
      continue // listed but absent (a deletion not yet committed)
    }
    if (text.includes('\0')) continue // binary
    text.split('\n').forEach((line, i) => {
      if (patterns.some((p) => p.test(line))) out.push(`${file}:${i + 1}: ${line.trim()}`)
    })
  }
  return out
}

describe('comments and docs stand alone', () => {
  const files = trackedFiles()

  it('lists the tracked files', () => {
    expect(files).toContain('docs/safety.md')
  })

  it('no tracked file cites a section of a document outside the repository', () => {
    expect(offenders(files, CITATION)).toEqual([])
  })

  it('no code comment narrates the engine internals', () => {
    expect(
      offenders(
        files.filter((f) => CODE.test(f)),
        [ENGINE],
      ),
    ).toEqual([])
  })

  it('the checks can fail', () => {
    const probe = [
      '(RB 9.5)',
      'RB section 6',
      "RB's grammar",
      'see §4',
      '../shared/spec/x.md',
      'architecture row 3',
      'pve-api.md section 1',
    ]
    for (const line of probe)
      expect(
        CITATION.some((p) => p.test(line)),
        line,
      ).toBe(true)
    expect(ENGINE.test('made V8 recompile it')).toBe(true)
    expect(CITATION.some((p) => p.test('RBD storage 3 and §-free prose'.replace('§', '')))).toBe(false)
  })
})
