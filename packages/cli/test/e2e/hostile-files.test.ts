/**
 * Hostile or mistaken repository files through the CLI: every file ProxOps reads goes through the
 * loader's rules (regular file, inside the repository, bounded), and `validate` and `diff` give the same
 * verdict on every input (one configuration reader, in @proxops/schema).
 */
import { describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { baseEnv, errorLines, findCanaries, proxops, vmManifest, type RepoOptions, useLab } from './harness.js'

const lab = useLab({}, { testTimeout: 120_000 })

const repo = (o: RepoOptions = {}): Promise<string> =>
  lab.repo({ manifests: { 'vm/lab/db.yaml': vmManifest('db', 101) }, ...o })

/** validate and diff on one tree: exit codes and their first error line. */
async function both(
  root: string,
): Promise<{ validate: { code: number | null; out: string }; diff: { code: number | null; err: string } }> {
  const env = baseEnv(root)
  const v = await proxops(['validate'], { cwd: root, env })
  const d = await proxops(['diff'], { cwd: root, env })
  expect(findCanaries(v.stdout + v.stderr + d.stdout + d.stderr)).toEqual([])
  return { validate: { code: v.code, out: v.stdout }, diff: { code: d.code, err: errorLines(d.stderr).join('\n') } }
}

describe('every file through one reader', () => {
  it('a FIFO as proxops.yaml: validate and diff refuse it at once (no hang), naming the file', async () => {
    const root = await repo()
    execFileSync('mkfifo', [path.join(root, 'proxops.yaml')])
    const r = await both(root)
    expect(r.validate.code).toBe(1)
    expect(r.validate.out).toMatch(/proxops\.yaml .*file-unreadable .*not a regular file/)
    expect(r.diff.code).toBe(1)
    expect(r.diff.err).toMatch(/proxops\.yaml.*not a regular file/)
  })

  it('a cluster config that is a symlink to /dev/zero is outside the repository for both', async () => {
    const root = await repo()
    const config = path.join(root, 'clusters/lab/config.yaml')
    unlinkSync(config)
    symlinkSync('/dev/zero', config)
    const r = await both(root)
    expect(r.validate.code).toBe(1)
    expect(r.validate.out).toMatch(/clusters\/lab\/config\.yaml .*path-outside-root/)
    expect(r.diff.code).toBe(1)
    expect(r.diff.err).toMatch(/config\.yaml.*outside the repository root/)
  })

  it('a secrets-file outside the repository (or a FIFO) is refused before it is read', async () => {
    const root = await repo()
    const outside = path.join(root, '..', `outside-${path.basename(root)}.sops.yaml`)
    writeFileSync(outside, 'not read\n')
    try {
      const inRepo = path.join(root, 'clusters/lab/secrets.sops.yaml')
      unlinkSync(inRepo)
      symlinkSync(outside, inRepo)
      let r = await both(root)
      expect(r.validate.code).toBe(1)
      expect(r.validate.out).toMatch(/secrets\.sops\.yaml .*path-outside-root/)
      expect(r.diff.code).toBe(1)
      expect(r.diff.err).toMatch(/secrets\.sops\.yaml.*outside the repository root/)
      unlinkSync(inRepo)
      execFileSync('mkfifo', [inRepo])
      r = await both(root)
      expect([r.validate.code, r.diff.code]).toEqual([1, 1])
      expect(r.diff.err).toMatch(/not a regular file/)
    } finally {
      rmSync(outside, { force: true })
    }
  })
})

describe('validate and diff agree', () => {
  const cases: Array<[string, RepoOptions, 0 | 1]> = [
    ['a base-url ending in /api2/json (accepted, normalised)', { baseUrl: 'BASE/api2/json' }, 0],
    [
      'reconcile.poll-interval: 1.5s and disruption: allow (accepted)',
      { proxopsYaml: 'reconcile:\n  poll-interval: 1.5s\n  disruption: allow\n' },
      0,
    ],
    [
      'a malformed pve.token-value (refused, value not shown)',
      { proxopsYaml: 'pve:\n  token-value: "root@pam!x:CANARY-bad-7f"\n' },
      1,
    ],
    ['a git.url that is not a URL (refused)', { proxopsYaml: 'git:\n  url: "not a url"\n' }, 1],
    ['an unknown disruption policy in a cluster config (refused)', { clusterExtra: '      disruption: sometimes' }, 1],
    [
      'a guest on a node named ".." (refused offline, never sent as /nodes/../qemu)',
      { manifests: { 'vm/lab/db.yaml': vmManifest('db', 101, { node: '..' }) } },
      1,
    ],
    [
      'an escaped NUL in a manifest value (refused offline)',
      {
        manifests: {
          'vm/lab/db.yaml': vmManifest('db', 101).replace('  memory:', '  description: "a\\0b"\n  memory:'),
        },
      },
      1,
    ],
  ]
  for (const [name, options, want] of cases) {
    it(name, async () => {
      const o = { ...options, ...(options.baseUrl ? { baseUrl: options.baseUrl.replace('BASE', lab.sim.url) } : {}) }
      const root = await repo(o)
      const r = await both(root)
      expect(r.validate.code, r.validate.out).toBe(want)
      // diff: 0 or 2 (changes) when valid, 1 when refused
      if (want === 0) expect([0, 2], r.diff.err).toContain(r.diff.code)
      else expect(r.diff.code).toBe(1)
      expect(r.validate.out + r.diff.err).not.toMatch(/CANARY-bad/)
    })
  }

  it('a FIFO listed in resources.yaml: the same coded error from both', async () => {
    const root = await repo({ manifests: {} })
    mkdirSync(path.join(root, 'vm/lab'), { recursive: true })
    execFileSync('mkfifo', [path.join(root, 'vm/lab/fifo.yaml')])
    writeFileSync(path.join(root, 'clusters/lab/resources.yaml'), 'resources:\n  - ../../vm/lab/fifo.yaml\n')
    const r = await both(root)
    expect(r.validate.code).toBe(1)
    expect(r.validate.out).toMatch(/composition-not-file/)
    expect(r.diff.code).toBe(1)
    expect(r.diff.err).toMatch(/composition-not-file/)
  })
})
