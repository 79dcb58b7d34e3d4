/** Bad input: each gives one actionable error line, exit 1, and zero PVE writes. */
import { describe, expect, it } from 'vitest'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import path from 'node:path'
import {
  baseEnv,
  errorLines,
  findCanaries,
  git,
  proxops,
  vmManifest,
  CANARY,
  useLab,
  transcriptCanaries,
} from './harness.js'

const plainOnly = { 'vm/lab/db.yaml': vmManifest('db', 101) }

const lab = useLab()
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((r) => server.close(() => r()))
  return port
}

function expectOneLineFailure(r: { code: number | null; stderr: string; stdout: string }, pattern: RegExp): void {
  expect(r.code, r.stderr).toBe(1)
  const lines = errorLines(r.stderr)
  if (lines.length !== 1) console.log(JSON.stringify(r))
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(pattern)
  expect(findCanaries(r.stdout + r.stderr)).toEqual([])
}

describe('bad input fails closed', () => {
  it('unknown flags and commands', async () => {
    const root = await lab.repo()
    expectOneLineFailure(
      await proxops(['diff', '--frobnicate'], { cwd: root, env: baseEnv(root) }),
      /^proxops: error: unknown flag --frobnicate \(see proxops diff --help\)$/,
    )
    expectOneLineFailure(
      await proxops(['difff'], { cwd: root, env: baseEnv(root) }),
      /^proxops: error: unknown command "difff"; did you mean "diff"\?/,
    )
    expectOneLineFailure(
      await proxops(['diff', '--prune-budget', '-2'], { cwd: root, env: baseEnv(root) }),
      /--prune-budget must be a whole number >= 0/,
    )
    expect(lab.sim.stats.writes()).toBe(0)
  })

  it('outside a repository, and a config file problem reads as validate lists it (file:line:col code, relative)', async () => {
    const root = await lab.repo()
    const outside = path.dirname(root)
    expectOneLineFailure(
      await proxops(['diff'], { cwd: outside, env: baseEnv(outside) }),
      /no ProxOps GitOps repository found/,
    )
    // from a sub-directory: every command names the file relative to the repository, as validate does
    const cwd = path.join(root, 'vm')
    const env = baseEnv(root)
    const same = async (command: string[], expected: RegExp) => {
      const validate = await proxops(['validate'], { cwd, env })
      expect(validate.code).toBe(1)
      const problems = validate.stdout.trim().split('\n')
      expect(problems[0]).toMatch(expected)
      const more = problems.length > 1 ? ` (and ${problems.length - 1} more; run proxops validate)` : ''
      const r = await proxops(command, { cwd, env })
      expectOneLineFailure(r, /^proxops: error: /)
      expect(errorLines(r.stderr)).toEqual([`proxops: error: ${problems[0]}${more}`])
    }
    writeFileSync(path.join(root, 'proxops.yaml'), 'reconcile:\n  prune-budjet: 3\n')
    await same(['diff'], /^proxops\.yaml:2:3 config-invalid unknown setting "reconcile\.prune-budjet"$/)
    writeFileSync(path.join(root, 'proxops.yaml'), 'listen: [\n')
    await same(['status'], /^proxops\.yaml:\d+:\d+ yaml-syntax /)
    rmSync(path.join(root, 'proxops.yaml'))
    const config = path.join(root, 'clusters/lab/config.yaml')
    writeFileSync(config, readFileSync(config, 'utf8').replace('nodes: [pve1, pve2]', 'nodes: [pve1, pve_2]'))
    await same(
      ['apply', '--yes'],
      /^clusters\/lab\/config\.yaml:5:\d+ node-name-invalid pve\.clusters\.lab\.nodes\[1\]: /,
    )
    expect(lab.sim.stats.writes()).toBe(0)
  })

  it('missing or undecryptable secrets', async () => {
    const noIdentity = await lab.repo()
    const env = baseEnv(noIdentity, { SOPS_AGE_KEY_FILE: undefined })
    delete env.SOPS_AGE_KEY_FILE
    expectOneLineFailure(
      await proxops(['diff'], { cwd: noIdentity, env }),
      /^proxops: error: cluster lab: .*(identit|age)/i,
    )

    const noCreds = await lab.repo({ sops: false, manifests: plainOnly })
    expectOneLineFailure(
      await proxops(['diff'], { cwd: noCreds, env: baseEnv(noCreds) }),
      /pve\.clusters\.lab: no effective PVE user after credential resolution/,
    )
    // env credentials work, and a wrong one is a clean auth error
    const ok = await proxops(['diff'], {
      cwd: noCreds,
      env: baseEnv(noCreds, { PROXOPS_PVE_TOKEN_VALUE: `root@pam!proxops=${CANARY.token}` }),
    })
    expect(ok.code).toBe(0)
    const bad = await proxops(['diff'], {
      cwd: noCreds,
      env: baseEnv(noCreds, { PROXOPS_PVE_TOKEN_VALUE: `root@pam!proxops=${CANARY.envToken}` }),
    })
    expectOneLineFailure(bad, /^proxops: error: .*(401|auth|token|permission)/i)
    expect(lab.sim.stats.writes()).toBe(0)
  })

  it('ticket auth with the password from the environment', async () => {
    const root = await lab.repo({ sops: false, manifests: plainOnly })
    const r = await proxops(['diff', '--pve-auth', 'ticket'], {
      cwd: root,
      env: baseEnv(root, { PROXOPS_PVE_USER: 'root@pam', PROXOPS_PVE_PASSWORD: CANARY.password }),
    })
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expectOneLineFailure(
      await proxops(['diff', '--pve-auth', 'ticket'], {
        cwd: root,
        env: baseEnv(root, { PROXOPS_PVE_USER: 'root@pam' }),
      }),
      /ticket auth needs a password/,
    )
  })

  it('unreachable PVE and a wrong certificate fingerprint', async () => {
    const port = await closedPort()
    const unreachable = await lab.repo({ baseUrl: `https://127.0.0.1:${port}` })
    expectOneLineFailure(
      await proxops(['diff'], { cwd: unreachable, env: baseEnv(unreachable) }),
      /^proxops: error: .*pve inventory read failed for cluster lab: .*; check that pve\.clusters\.lab\.base-url \(https:\/\/127\.0\.0\.1:\d+\) is right and PVE is reachable$/,
    )
    const json = await proxops(['diff', '-o', 'json'], { cwd: unreachable, env: baseEnv(unreachable) })
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout)).toMatchObject({
      plans: [],
      aborted: [{ cluster: 'lab', reason: expect.stringMatching(/pve inventory read failed/) }],
    })
    const pinned = await lab.repo({ fingerprint: `${'AB:'.repeat(31)}AB` })
    expectOneLineFailure(
      await proxops(['apply', '--yes'], { cwd: pinned, env: baseEnv(pinned) }),
      /^proxops: error: .*fingerprint/i,
    )
    const unpinned = await lab.repo({ fingerprint: null })
    expectOneLineFailure(
      await proxops(['diff'], { cwd: unpinned, env: baseEnv(unpinned) }),
      /^proxops: error: .*(certificate|TLS|self-signed|verify)/i,
    )
    expect(lab.sim.stats.writes()).toBe(0)
  })

  it('invalid manifests abort the cycle before any PVE call', async () => {
    const root = await lab.repo()
    writeFileSync(
      path.join(root, 'vm/lab/db.yaml'),
      'apiVersion: proxops/v1alpha1\nkind: VM\nmetadata: { name: db }\nspec: { node: pve1 }\n',
    )
    git(root, 'commit', '-qam', 'broken')
    const before = lab.sim.stats.requests.length
    const r = await proxops(['apply', '--yes'], { cwd: root, env: baseEnv(root) })
    expectOneLineFailure(r, /^proxops: error: .*manifest parse error: vm\/lab\/db\.yaml:\d+/)
    // the reason is printed once: on the error line, not again in the status table
    expect(r.stdout).toContain('[lab] ABORTED (the error is on stderr)')
    expect(r.stdout).not.toContain('manifest parse error')
    expect(lab.sim.stats.requests.length).toBe(before)
  })

  it('validate resolves SOPS references when an identity is available', async () => {
    const root = await lab.repo()
    writeFileSync(
      path.join(root, 'vm/lab/web.yaml'),
      vmManifest('web', 100, { cloudInit: true }).replace('cloud-init.passwords.default', 'cloud-init.passwords.nope'),
    )
    git(root, 'commit', '-qam', 'dangling ref')
    const withKey = await proxops(['validate'], { cwd: root, env: baseEnv(root) })
    expect(withKey.code).toBe(1)
    expect(withKey.stdout).toMatch(
      /clusters\/lab\/secrets\.sops\.yaml.*secrets-unavailable.*cloud-init\.passwords\.nope/,
    )
    const env = baseEnv(root)
    delete env.SOPS_AGE_KEY_FILE
    const offline = await proxops(['validate'], { cwd: root, env })
    expect(offline.code).toBe(0)
    expect(findCanaries(withKey.stdout + withKey.stderr + offline.stdout)).toEqual([])
  })

  it('no canary anywhere', () => {
    expect(transcriptCanaries()).toEqual([])
  })
})
