import { afterAll, describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ownHome, runMain, type MainRun } from './main.test-support.js'
import { buildContext, program } from './cli.js'

const bin = fileURLToPath(new URL('../dist/bin.js', import.meta.url))

describe('proxops binary', () => {
  it('prints its package version', () => {
    const out = execFileSync(process.execPath, [bin, '--version'], { encoding: 'utf8' })
    expect(out.trim()).toMatch(/^proxops version \d+\.\d+\.\d+/)
  })
})

const home = mkdtempSync(join(tmpdir(), 'proxops-cli-home-'))
afterAll(() => rmSync(home, { recursive: true, force: true }))
const run = (argv: string[]): Promise<MainRun> => runMain(argv, { cwd: '/', env: ownHome(home) })

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

describe('habits from Terraform and kubectl', () => {
  it.each([
    [['plan', '-auto-approve'], '-auto-approve is not a ProxOps flag; in ProxOps: --yes (see proxops plan --help)'],
    [['apply', '--auto-approve'], '--auto-approve is not a ProxOps flag; in ProxOps: --yes (see proxops apply --help)'],
    [
      ['diff', '-detailed-exitcode'],
      '-detailed-exitcode: ProxOps long flags take two dashes: --detailed-exitcode (see proxops diff --help)',
    ],
    [['apply', '-target=VM/web'], '-target: ProxOps long flags take two dashes: --target (see proxops apply --help)'],
    [['diff', '-clustr', 'lab'], '-clustr: ProxOps long flags take two dashes: --cluster (see proxops diff --help)'],
    [['get', 'vms'], 'unknown command "get"; in ProxOps: proxops status (one object: proxops status KIND/name)'],
    [['describe', 'VM/web'], 'unknown command "describe"; in ProxOps: proxops status KIND/name'],
    [
      ['import'],
      'unknown command "import"; in ProxOps: proxops adopt --cluster <name>, which writes manifests for what already runs',
    ],
    [
      ['status', '-w'],
      '-w is not a ProxOps flag; in ProxOps: proxops run (the daemon re-applies every 30 s), or watch proxops status (see proxops status --help)',
    ],
    [
      ['apply', '-f', 'vm.yaml'],
      '-f is not a ProxOps flag; in ProxOps: nothing: ProxOps reads the whole repository (narrow with --cluster or --target KIND/name) (see proxops apply --help)',
    ],
  ])('%j names the ProxOps way', async (argv, message) => {
    const r = await run(argv)
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe(`proxops: error: ${message}\n`)
  })

  it('takes the ones ProxOps meets: plan is diff, -o yaml is an output format', async () => {
    // outside a repository both get as far as looking for it: they were understood
    for (const argv of [
      ['plan'],
      ['diff', '-o', 'yaml'],
      ['status', 'VM/web', '-o', 'yaml'],
      ['apply', '--target', 'VM/web', '--yes'],
    ]) {
      const r = await run(argv)
      expect(r.stderr, argv.join(' ')).toMatch(/^proxops: error: no ProxOps GitOps repository found/)
    }
    const show = await run(['show', 'missing.plan.json'])
    expect(show.stderr).toBe('proxops: error: cannot read missing.plan.json: ENOENT\n')
  })
})

describe('help text', () => {
  /** the usage object of a yargs program (yargs' internals, as cli.ts reaches them) */
  const usageOf = (y: unknown) =>
    (y as { getInternalMethods(): { getUsageInstance(): { hasCachedHelpMessage(): boolean } } })
      .getInternalMethods()
      .getUsageInstance()

  it('is not rendered for a command that runs: only for --help', async () => {
    const written: string[] = []
    const ctx = buildContext({ io: { stdout: { write: (t: string) => written.push(t) } as never }, env: {} })
    const y = program(
      ['completion', 'bash'],
      () => ctx,
      () => undefined,
    )
    await y.parseAsync()
    expect(written.join('')).toContain('proxops')
    expect(usageOf(y).hasCachedHelpMessage()).toBe(false)
  })

  it("is still each command's own on --help", async () => {
    const r = await run(['diff', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^proxops diff\n\nShow what apply would change/)
    expect(r.stdout).toContain('--detailed-exitcode')
  })
})
