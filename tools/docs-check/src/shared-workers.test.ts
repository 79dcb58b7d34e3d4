/**
 * Test files share their worker: vitest.shared.mjs sets `isolate: false`, so one process runs many test files
 * without reloading their modules (CONTRIBUTING.md, "How long the tests take"). That is safe only while no code
 * changes process-wide state that another file would read: module mocks, a stubbed or assigned environment, the
 * global HTTP dispatcher, fast-check's global settings, the working directory. Pass such things as arguments
 * instead (the CLI's `main` takes `env` and `cwd`; the gates take `env`).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from './sandbox.js'

const SELF = 'tools/docs-check/src/shared-workers.test.ts'

/** process-wide state a test file could leave behind for the next file in its worker */
export const SHARED_STATE = [
  /\bvi\.(mock|doMock|stubEnv|stubGlobal)\(/,
  /\bprocess\.env(\.\w+|\[[^\]]+\])\s*=[^=]/,
  /\bdelete process\.env\b/,
  /\bsetGlobalDispatcher\(/,
  /\bconfigureGlobal\(/,
  /\bprocess\.chdir\(/,
]

/** `file:line: text` for every line of `files` (read by `read`) that changes process-wide state */
export function sharedStateChanges(files: readonly string[], read: (file: string) => string): string[] {
  const out: string[] = []
  for (const file of files) {
    read(file)
      .split('\n')
      .forEach((line, i) => {
        if (SHARED_STATE.some((p) => p.test(line))) out.push(`${file}:${i + 1}: ${line.trim()}`)
      })
  }
  return out
}

function sources(): string[] {
  return execFileSync('git', ['ls-files', '-z', 'packages', 'tools', 'examples'], { cwd: repoRoot, encoding: 'utf8' })
    .split('\0')
    .filter((f) => /\.(ts|mts)$/.test(f) && f !== SELF)
}

describe('test files can share a worker', () => {
  const files = sources()

  it('lists the sources and tests', () => {
    expect(files).toContain('packages/planner/src/plan/properties.test.ts')
  })

  it('no source or test changes process-wide state another test file reads', () => {
    expect(sharedStateChanges(files, (f) => readFileSync(path.join(repoRoot, f), 'utf8'))).toEqual([])
  })

  it('the check can fail', () => {
    const text: Record<string, string> = {
      'a.test.ts': "vi.mock('node:fs')\nconst ok = process.env.HOME === '/root'",
      'b.test.ts': "process.env.PROXOPS_X = '1'\nprocess.env['Y'] = 'z'\ndelete process.env.Z",
      'c.test.ts': 'vi.stubEnv("A", "b")\nfc.configureGlobal({ numRuns: 5 })\nprocess.chdir(dir)',
    }
    expect(
      sharedStateChanges(Object.keys(text), (f) => text[f]!).map((l) => l.split(':').slice(0, 2).join(':')),
    ).toEqual(['a.test.ts:1', 'b.test.ts:1', 'b.test.ts:2', 'b.test.ts:3', 'c.test.ts:1', 'c.test.ts:2', 'c.test.ts:3'])
  })
})
