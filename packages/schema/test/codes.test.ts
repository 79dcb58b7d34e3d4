/** Every error code is exercised by at least one test (unit, fixture or end-to-end). */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { ErrorCodes } from '../src/index.js'

const pkg = fileURLToPath(new URL('..', import.meta.url))

function files(dir: string, match: (name: string) => boolean): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...files(p, match))
    else if (match(name)) out.push(p)
  }
  return out
}

it('every error code is tested', () => {
  const sources = [
    ...files(join(pkg, 'src'), (n) => n.endsWith('.test.ts')),
    ...files(join(pkg, 'test'), (n) => n.endsWith('.test.ts') || n === 'expected.txt'),
    join(pkg, '../cli/src/commands/validate.test.ts'),
    // codes only the CLI reports (a setting refused against the environment or the operator's pins)
    join(pkg, '../cli/src/runtime/endpoint-pins.test.ts'),
  ]
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n')
  const untested = Object.keys(ErrorCodes).filter((code) => !new RegExp(`(['"\` ])${code}(['"\` \\n])`).test(sources))
  expect(untested).toEqual([])
})
