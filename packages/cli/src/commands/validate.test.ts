/**
 * The CLI's `main()` in process (what `bin.js` runs: arguments, environment, working directory and output streams
 * passed in, the exit code returned) against examples/ and against the broken fixture repositories of
 * @proxops/schema; plus runValidate for the hook. A process per case cost about 0.7 s of CPU each (CONTRIBUTING.md).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ownHome, runMain, type MainRun } from '../main.test-support.js'
import { runValidate } from './validate-run.js'

const examples = fileURLToPath(new URL('../../../../examples/repository', import.meta.url))
const fixtures = fileURLToPath(new URL('../../../schema/test/fixtures', import.meta.url))

const testKey = join(examples, 'keys', 'test-only.agekey')
const homes = mkdtempSync(join(tmpdir(), 'proxops-validate-homes-'))
afterAll(() => rmSync(homes, { recursive: true, force: true }))

/** Each run gets a home of its own and the examples' key as its one explicit key source (the operator's is never read). */
function proxops(
  args: string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; home?: string } = {},
): Promise<MainRun> {
  const env = {
    PATH: process.env.PATH,
    ...ownHome(options.home ?? mkdtempSync(join(homes, 'home-'))),
    SOPS_AGE_KEY_FILE: testKey,
    ...options.env,
  }
  return runMain(args, { cwd: options.cwd ?? process.cwd(), env })
}

describe('proxops validate', () => {
  it('accepts examples/ with a one-line summary per cluster', async () => {
    const r = await proxops(['validate', '--git-path', examples])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const lines = r.stdout.trim().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^edge: valid, \d+ resources from \d+ files/)
    expect(lines[1]).toMatch(
      /^homelab: valid, \d+ resources from \d+ files \(.*CTTemplate.*DiskImage.*ISO.*LXC.*TemplateCT.*TemplateVM.*VM\)/,
    )
  })

  it("a stranger's age key in the default place: ignored beside a matching key, named when it is the only one", async () => {
    // what getting started tells an operator to do with their own key (docs/getting-started.md)
    const home = mkdtempSync(join(homes, 'decoy-'))
    const keysTxt = join(ownHome(home).XDG_CONFIG_HOME, 'sops', 'age', 'keys.txt')
    mkdirSync(join(keysTxt, '..'), { recursive: true })
    const decoy = 'AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX'
    writeFileSync(keysTxt, `# created: decoy\n${decoy}\n`)
    const withKey = await proxops(['validate', '--git-path', examples], { home })
    expect(withKey.code).toBe(0)
    const only = await proxops(['validate', '--git-path', examples], { home, env: { SOPS_AGE_KEY_FILE: undefined } })
    expect(only.code).toBe(1)
    expect(only.stdout).toContain(`IdentityMismatch: none of 1 age identities matches the file's recipients: age1`)
    expect(only.stdout).toContain(`identities read: ${keysTxt} line 2 (age1`)
    expect(only.stdout).toContain('nothing found in: SOPS_AGE_KEY, SOPS_AGE_KEY_FILE, SOPS_AGE_KEY_CMD')
    expect(only.stdout).not.toContain(decoy)
  })

  it('--cluster limits the check; PROXOPS_GIT_PATH names the root', async () => {
    const r = await proxops(['validate', '--cluster', 'homelab'], { env: { PROXOPS_GIT_PATH: examples } })
    expect(r.code).toBe(0)
    expect(r.stdout.trim().split('\n')).toEqual([expect.stringMatching(/^homelab: valid/)])
    const ghost = await proxops(['validate', '--cluster', 'ghost', '--git-path', examples])
    expect(ghost.code).toBe(1)
    expect(ghost.stdout).toContain('. cluster-unknown cluster "ghost" is not configured (known: edge, homelab)')
  })

  it('--output json', async () => {
    const r = await proxops(['validate', '--output', 'json', '--git-path', examples])
    expect(r.code).toBe(0)
    const doc = JSON.parse(r.stdout)
    expect(doc).toMatchObject({ format_version: 1, valid: true, errors: [] })
    expect(doc.clusters.map((c: { name: string }) => c.name)).toEqual(['edge', 'homelab'])
    expect(doc.clusters[1].kinds).toMatchObject({
      VM: 4,
      TemplateVM: 1,
      LXC: 2,
      TemplateCT: 1,
      ISO: 1,
      CTTemplate: 1,
      DiskImage: 1,
    })
  })

  it('fails outside any repository', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'proxops-norepo-')))
    try {
      const r = await proxops(['validate'], { cwd: dir })
      if (r.code === 0) return // a .git above the temp dir (unusual): nothing to assert
      expect(r.code).toBe(1)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(/^proxops: error: no ProxOps GitOps repository found[^\n]*\n$/)
      // the JSON report carries the problem's code, as every other validate problem
      const json = await proxops(['validate', '-o', 'json'], { cwd: dir })
      expect(json.code).toBe(1)
      expect(JSON.parse(json.stdout)).toMatchObject({ errors: [{ code: 'repo-not-found', file: '.' }] })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('names manifest files that no resources.yaml lists, with their problems: warning, or error with --strict', async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'proxops-unlisted-')))
    try {
      cpSync(examples, dir, { recursive: true, filter: (src) => !src.includes('node_modules') })
      mkdirSync(join(dir, 'vm', 'stray'), { recursive: true })
      writeFileSync(
        join(dir, 'vm', 'stray', 'forgotten.yaml'),
        'apiVersion: proxops/v1alpha1\nkind: VM\nmetadata:\n  name: Bad Name\n',
      )
      writeFileSync(join(dir, 'lxc', 'notes.txt'), 'not yaml, not a manifest\n')
      const warned = await proxops(['validate', '--git-path', dir])
      expect(warned.code).toBe(0)
      const lines = warned.stdout.trim().split('\n')
      expect(lines[0]).toBe(
        'warning: vm/stray/forgotten.yaml manifest-unlisted vm/stray/forgotten.yaml is listed in no clusters/<name>/resources.yaml, so no cluster manages it: list it or remove it',
      )
      // the file's own problems are shown too, all as warnings
      expect(lines.filter((l) => l.startsWith('warning: vm/stray/forgotten.yaml:')).length).toBeGreaterThan(0)
      expect(lines.filter((l) => l.startsWith('warning: ')).every((l) => l.includes('vm/stray/forgotten.yaml'))).toBe(
        true,
      )
      expect(lines.filter((l) => !l.startsWith('warning: ')).map((l) => l.split(':')[0])).toEqual(['edge', 'homelab'])

      // --cluster still judges against every cluster's composition (edge's files are not "unlisted")
      const one = await proxops(['validate', '--cluster', 'homelab', '--git-path', dir])
      expect(one.code).toBe(0)
      expect(one.stdout.split('\n').filter((l) => l.includes('manifest-unlisted'))).toHaveLength(1)

      const strict = await proxops(['validate', '--strict', '--git-path', dir])
      expect(strict.code).toBe(1)
      expect(strict.stdout).not.toContain('warning:')
      expect(strict.stdout).toContain('vm/stray/forgotten.yaml manifest-unlisted ')
      expect(strict.stdout).toMatch(/^vm\/stray\/forgotten\.yaml:\d+:\d+ /m)

      const json = JSON.parse((await proxops(['validate', '--output', 'json', '--git-path', dir])).stdout)
      expect(json.valid).toBe(true)
      expect(json.warnings[0]).toMatchObject({ code: 'manifest-unlisted', file: 'vm/stray/forgotten.yaml' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it.each([
    [['diff', '--cluster'], '--cluster'],
    [['validate', '--output'], '--output'],
    [['status', '--git-path'], '--git-path'],
    [['validate', '--cluster', '--strict'], '--cluster'],
  ])('a flag without its value says so in one line: %j', async (args, flag) => {
    const r = await proxops(args, { cwd: examples })
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe(`proxops: error: ${flag} needs a value (see proxops --help)\n`)
  })

  const broken = readdirSync(fixtures).sort()
  it.each(broken)('rejects the broken repository %s with the expected codes and positions', async (name) => {
    const expected = readFileSync(join(fixtures, name, 'expected.txt'), 'utf8')
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
    const r = await proxops(['validate', '--git-path', join(fixtures, name)])
    expect(r.code).toBe(1)
    // warnings (manifest-unlisted) are not what these fixtures are about
    const problems = r.stdout
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('warning: '))
    expect(problems.map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual(expected)
    // the verdict is one error line, as every failing command ends
    expect(r.stderr).toMatch(/^proxops: error: \d+ problems? in .* \(listed above\)\n$/)
  })

  it('reports problems as JSON too', async () => {
    const r = await proxops(['validate', '--output', 'json', '--git-path', join(fixtures, 'manifest-errors')])
    expect(r.code).toBe(1)
    const json = JSON.parse(r.stdout)
    expect(json.valid).toBe(false)
    expect(json.errors[0]).toEqual({
      code: 'quantity-not-whole-mib',
      file: 'vm/base/app.yaml',
      line: 24,
      column: 11,
      field: 'spec.memory',
      clusters: ['lab'],
      message:
        'spec.memory: a memory size must be a whole number of MiB ("1G" is a decimal unit: did you mean "1GiB"?)',
    })
  })
})

describe('runValidate hooks', () => {
  it('adds the problems a cluster hook reports (e.g. SOPS)', async () => {
    const seen: string[] = []
    const r = await runValidate({
      gitPath: examples,
      output: 'text',
      cwd: process.cwd(),
      hooks: {
        checkCluster: async (cluster) => {
          seen.push(cluster.name)
          return cluster.name === 'edge'
            ? [
                {
                  code: 'secrets-unavailable',
                  file: 'clusters/edge/secrets.sops.yaml',
                  line: 0,
                  column: 0,
                  message: 'cannot decrypt: no age identity',
                },
              ]
            : []
        },
      },
    })
    expect(seen).toEqual(['edge', 'homelab'])
    expect(r.exitCode).toBe(1)
    expect(r.stdout).toContain('clusters/edge/secrets.sops.yaml secrets-unavailable cannot decrypt: no age identity')
  })
})
