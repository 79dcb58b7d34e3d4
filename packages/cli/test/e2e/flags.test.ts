/** The remaining global flags, against the simulator. */
import { describe, expect, it } from 'vitest'
import { writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { AGE_KEY_FILE, CANARY, errorLines, findCanaries, git, homeFor, proxops, vmManifest, useLab } from './harness.js'

const lab = useLab()

/** A run with no NO_COLOR (the colour flags are under test), as a terminal when `tty`. */
async function run(cwd: string, args: string[], env: Record<string, string | undefined> = {}, tty = false) {
  const fullEnv = { HOME: homeFor(cwd), SOPS_AGE_KEY_FILE: AGE_KEY_FILE, PATH: process.env.PATH, ...env }
  const r = await proxops(args, { cwd, env: fullEnv, tty })
  expect(findCanaries(r.stdout + r.stderr)).toEqual([])
  return r
}

describe('global flags', () => {
  it('--log-level and --log-format shape stderr; --no-color wins over a terminal', async () => {
    const root = await lab.repo()
    const debug = await run(root, ['diff', '--log-level', 'debug', '--log-format', 'json'])
    expect(debug.code).toBe(0)
    const lines = debug.stderr.trim().split('\n').filter(Boolean)
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(JSON.parse(line)).toHaveProperty('level')
    const quiet = await run(root, ['diff', '--log-level', 'error'])
    expect(quiet.stderr).toBe('')
    expect((await run(root, ['diff'], {}, true)).stdout).toContain('\u001b[')
    expect((await run(root, ['diff', '--no-color'], {}, true)).stdout).not.toContain('\u001b[')
    expect((await run(root, ['diff'], { NO_COLOR: '1' }, true)).stdout).not.toContain('\u001b[')
  })

  it('--ca-file trusts the PVE CA; --pve-user with env and YAML credentials; --git-path from elsewhere', async () => {
    const root = await lab.repo({
      sops: false,
      fingerprint: null,
      manifests: { 'vm/lab/db.yaml': vmManifest('db', 101) },
      proxopsYaml: 'pve:\n  token-id: proxops\n',
    })
    const ca = path.join(root, '..', `${path.basename(root)}-ca.pem`)
    writeFileSync(ca, lab.sim.caPem ?? '')
    lab.removeAfter(ca)
    const env = { PROXOPS_PVE_TOKEN: CANARY.token }
    const noCa = await run(root, ['diff', '--pve-user', 'root@pam'], env)
    expect(noCa.code).toBe(1)
    const ok = await run(os.tmpdir(), ['diff', '--pve-user', 'root@pam', '--ca-file', ca, '--git-path', root], env)
    expect(ok.stderr).toBe('')
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain('+ VM/pve1/101(db)')
  })

  it('--config loads one file; --git-url/--git-branch select the remote branch', async () => {
    const root = await lab.repo()
    const data = lab.tmp('proxops-flags-')
    const cfg = path.join(data, 'proxops.yaml')
    writeFileSync(cfg, `git:\n  path: ${root}\nreconcile:\n  prune-budget: 0\n`)
    const viaConfig = await run(os.tmpdir(), ['diff', '--config', cfg])
    expect(viaConfig.code).toBe(0)
    expect(viaConfig.stdout).toContain('Cluster lab at')
    const url = await run(root, ['diff', '--git-url', `file://${root}`, '--git-branch', 'main', '--data-dir', data])
    expect(url.code).toBe(0)
    expect(url.stdout).toContain(`Cluster lab at ${git(root, 'rev-parse', 'HEAD').trim().slice(0, 12)}`)
    const missing = await run(root, ['diff', '--git-url', `file://${root}`, '--git-branch', 'nope', '--data-dir', data])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(
      /proxops: error: git sync failed and no previous good tree is available: git fetch failed: fatal: /,
    )
  })

  it('--prune-budget and --allow-empty: deletions are bounded and guarded', async () => {
    const root = await lab.repo({
      manifests: {
        'vm/lab/a.yaml': vmManifest('a', 120),
        'vm/lab/b.yaml': vmManifest('b', 121),
        'vm/lab/c.yaml': vmManifest('c', 122),
      },
    })
    const applied = await run(root, ['apply', '--yes', '--output', 'json'])
    expect(applied.code).toBe(0)
    // stdout is one JSON document: the cycles and the per-action reports
    const doc = JSON.parse(applied.stdout) as { cycles: { result: string }[]; reports: { summary: { ok: number } }[] }
    expect(doc.cycles[0]?.result).toBe('converged')
    expect(doc.reports[0]?.summary.ok).toBe(3)
    // drop b and c from git: two owned VMs become prune candidates
    writeFileSync(path.join(root, 'clusters/lab/resources.yaml'), 'resources:\n  - ../../vm/lab/a.yaml\n')
    git(root, 'commit', '-qam', 'drop b and c')
    const none = await run(root, ['diff', '--prune-budget', '0', '--output', 'json'])
    const plan0 = (JSON.parse(none.stdout) as { plans: { actions: { type: string }[]; skips: { code: string }[] }[] })
      .plans[0]
    expect(plan0?.actions.filter((a) => a.type === 'delete')).toHaveLength(0)
    expect(plan0?.skips.filter((s) => s.code === 'prune-budget').length).toBeGreaterThan(0)
    const one = await run(root, ['diff', '--prune-budget', '1', '--output', 'json'])
    expect(
      (JSON.parse(one.stdout) as { plans: { actions: { type: string }[] }[] }).plans[0]?.actions.filter(
        (a) => a.type === 'delete',
      ),
    ).toHaveLength(1)

    // no VM left in git at all: the empty-desired guard holds every prune unless --allow-empty VM
    writeFileSync(path.join(root, 'clusters/lab/resources.yaml'), 'resources: []\n')
    git(root, 'commit', '-qam', 'empty')
    const guarded = JSON.parse((await run(root, ['diff', '--prune-budget', 'unlimited', '-o', 'json'])).stdout) as {
      plans: { actions: { type: string }[]; anomalies: { code: string }[] }[]
    }
    expect(guarded.plans[0]?.actions.filter((a) => a.type === 'delete')).toHaveLength(0)
    expect(guarded.plans[0]?.anomalies.map((a) => a.code)).toContain('empty-desired')
    const allowed = JSON.parse(
      (await run(root, ['diff', '--prune-budget', 'unlimited', '--allow-empty', 'VM', '-o', 'json'])).stdout,
    ) as {
      plans: { actions: { type: string }[] }[]
    }
    expect(allowed.plans[0]?.actions.filter((a) => a.type === 'delete').length).toBeGreaterThan(0)
  })

  it('names unknown clusters and unusable plan files', async () => {
    const root = await lab.repo()
    const writes = lab.sim.stats.writes()
    const ghost = await run(root, ['diff', '--cluster', 'ghost'])
    expect(ghost.code).toBe(1)
    expect(ghost.stderr).toBe('proxops: error: --cluster "ghost" is not configured (known: lab)\n')
    const missing = await run(root, ['apply', '--plan', 'missing.json', '--yes'])
    // (its first run pinned the SOPS credentials' endpoint: an info line before the error)
    expect(errorLines(missing.stderr)).toEqual(['proxops: error: cannot read missing.json: ENOENT'])
    writeFileSync(path.join(root, 'junk.json'), '{"format_version": 7}')
    const junk = await run(root, ['apply', '--plan', 'junk.json', '--yes'])
    expect(junk.code).toBe(1)
    expect(junk.stderr).toMatch(
      /junk\.json is not a ProxOps plan file \(format_version 1\): write it with proxops diff --out junk\.json/,
    )
    expect(lab.sim.stats.writes()).toBe(writes)
  })
})
