import { describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { PassThrough } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { main } from './cli.js'

const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url))

describe('proxops binary', () => {
  it('prints its package version', () => {
    const out = execFileSync(process.execPath, [bin, '--version'], { encoding: 'utf8' })
    expect(out.trim()).toMatch(/^proxops version \d+\.\d+\.\d+/)
  })
})

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let out = ''
  let err = ''
  stdout.on('data', (c: Buffer) => (out += c.toString()))
  stderr.on('data', (c: Buffer) => (err += c.toString()))
  const code = await main(argv, { cwd: '/', env: {}, io: { stdout, stderr, stdinIsTty: false } })
  return { code, stdout: out, stderr: err }
}

describe('a mistyped command or flag', () => {
  it.each([
    [['dif'], 'unknown command "dif"; did you mean "diff"? (see proxops --help)'],
    [['stauts', '-x'], 'unknown command "stauts"; did you mean "status"? (see proxops --help)'],
    [['deploy'], 'unknown command "deploy" (see proxops --help)'],
    [['diff', '--clustr', 'lab'], 'unknown flag --clustr; did you mean --cluster? (see proxops diff --help)'],
    [['apply', '--yse'], 'unknown flag --yse; did you mean --yes? (see proxops apply --help)'],
    [['validate', '--strictt'], 'unknown flag --strictt; did you mean --strict? (see proxops validate --help)'],
    [['diff', '--no-colr'], 'unknown flag --no-colr; did you mean --no-color? (see proxops diff --help)'],
    [['status', '--detailed-exitcode'], 'unknown flag --detailed-exitcode (see proxops status --help)'],
    [['diff', 'lab'], 'unexpected argument "lab" (see proxops diff --help)'],
  ])('%j names what was typed and the nearest', async (argv, message) => {
    const r = await run(argv)
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe(`proxops: error: ${message}\n`)
  })
})
