/**
 * Access as code through the CLI (issue 40; pve-access-control API2::Role, Group, User, ACL, generate_token):
 * an estate of every kind converges in one apply and the next diff is empty; the new token's secret is written
 * age-encrypted outside the repository (mode 0600), decrypts with the cluster's key to the token PVE made, and
 * appears in no output, plan or file of the repository; the lock-out cases are blocked in diff with their reason
 * and nothing is written; a random access estate converges in one apply and leaves unowned principals alone.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fc } from '@fast-check/vitest'
import type { Simulator } from '@proxops/pve-sim'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import { identitiesFromStrings, openSealed } from '@proxops/sops'
import {
  AGE_KEY_FILE,
  adminClient,
  baseEnv,
  freePort,
  git,
  homeFor,
  httpGet,
  makeRepo,
  proxops,
  start,
  startLab,
  transcript,
  waitFor,
  replaceManifests,
  closeLab,
} from './harness.js'

vi.setConfig({ testTimeout: 240_000, hookTimeout: 60_000 })

let sim: Simulator
let repo: string
let admin: PveClient
const ACCESS = '      access:\n        role-prefix: px-'

const doc = (kind: string, name: string, spec: string) =>
  `apiVersion: proxops/v1alpha1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${spec}`

function commit(files: Record<string, string>): void {
  replaceManifests(repo, ['role', 'group', 'user', 'token', 'acl'], files, 'access')
}

const estate = {
  'role/lab/ops.yaml': doc('Role', 'px-ops', '  privs: [VM.Audit, Sys.Audit]\n'),
  'group/lab/ops.yaml': doc('Group', 'ops', '  comment: operators\n'),
  'user/lab/alice.yaml': doc('User', 'alice', '  userid: alice@pve\n  groups: [ops]\n  email: alice@example.invalid\n'),
  'token/lab/ci.yaml': doc('Token', 'ci', '  userid: alice@pve\n  comment: CI\n'),
  'acl/lab/ops.yaml': doc('ACL', 'ops-vms', '  path: /vms\n  roles: [px-ops]\n  groups: [ops]\n'),
  'acl/lab/ci.yaml': doc('ACL', 'ci', "  path: /\n  roles: [PVEAuditor]\n  tokens: ['alice@pve!ci']\n"),
}

beforeAll(async () => {
  sim = await startLab()
  repo = await makeRepo(sim, { manifests: {}, clusterExtra: ACCESS })
  admin = adminClient(sim)
})
afterAll(() => closeLab(admin, sim, repo))

describe('access as code', () => {
  let secret = ''
  it('an estate of every kind converges in one apply; the second diff is empty', async () => {
    commit(estate)
    const run = (args: string[], env = {}) => proxops(args, { cwd: repo, env: baseEnv(repo, env) })
    const applied = await run(['apply', '--yes'])
    expect(applied.stderr).not.toMatch(/proxops: error/)
    expect(applied.code).toBe(0)
    expect(applied.stdout).toContain('6 ok')
    const file = path.join(homeFor(repo), '.local/share/proxops/token-secrets/lab/alice@pve_ci.age')
    expect(applied.stdout).toContain(file)
    expect((await run(['diff', '--detailed-exitcode'])).code).toBe(0)

    // the secret: sealed to the cluster's SOPS recipients, mode 0600, outside the work tree, and it is PVE's
    expect(statSync(file).mode & 0o777).toBe(0o600)
    secret = await openSealed(
      readFileSync(file, 'utf8'),
      identitiesFromStrings([readFileSync(AGE_KEY_FILE, 'utf8')]),
      file,
    )
    expect(secret).toMatch(/^[0-9a-f-]{36}$/)
    const ci = createPveClient({
      baseUrl: sim.url,
      auth: { type: 'token', tokenId: 'alice@pve!ci', secret },
      tls: { fingerprint: sim.fingerprint! },
    })
    expect(await ci.version()).toMatchObject({ version: expect.any(String) as string })
    await ci.close()
    // canary: in no output of any run, no saved plan, no file of the repository
    const status = await run(['status'])
    expect(status.code).toBe(0)
    const json = await run(['status', '--output', 'json'])
    expect(json.stdout).not.toContain(secret)
    const plan = await run(['diff', '--out', path.join(homeFor(repo), 'plan.json')])
    expect(plan.code).toBe(0)
    expect(transcript.join('\n')).not.toContain(secret)
    expect(readFileSync(path.join(homeFor(repo), 'plan.json'), 'utf8')).not.toContain(secret)
    // git grep exits 1 when nothing matches
    expect(() => git(repo, 'grep', '-c', secret)).toThrow()
  })

  it('a token the daemon creates: its secret is in no log line, status, metric or page of the daemon', async () => {
    commit({ ...estate, 'token/lab/ci2.yaml': doc('Token', 'ci2', '  userid: alice@pve\n  comment: CI 2\n') })
    const port = await freePort()
    const daemon = start(['run', '--listen', `127.0.0.1:${port}`], { cwd: repo, env: baseEnv(repo) })
    try {
      const file = path.join(homeFor(repo), '.local/share/proxops/token-secrets/lab/alice@pve_ci2.age')
      const status = await waitFor(async () => {
        const s = await httpGet(port, '/status')
        return s?.status === 200 && /"result":\s*"converged"/.test(s.body) ? s : undefined
      }, 60_000)
      const fresh = await openSealed(
        readFileSync(file, 'utf8'),
        identitiesFromStrings([readFileSync(AGE_KEY_FILE, 'utf8')]),
        file,
      )
      expect(fresh).toMatch(/^[0-9a-f-]{36}$/)
      const page = await httpGet(port, '/')
      const metrics = await httpGet(port, '/metrics')
      expect(page?.status).toBe(200)
      expect(metrics?.body).toMatch(/proxops_cycles_total/)
      for (const body of [status.body, page?.body ?? '', metrics?.body ?? '', daemon.stderrSoFar()])
        expect(body).not.toContain(fresh)
      daemon.child.kill('SIGTERM')
      const ended = await daemon.done
      expect(ended.stdout + ended.stderr).not.toContain(fresh)
    } finally {
      daemon.child.kill('SIGTERM')
      await daemon.done
      commit(estate)
    }
  })

  it('lock-out: what grants the running credential is blocked in diff with the reason, and apply writes nothing', async () => {
    // an operator's own token with Administrator on /, made by hand; ProxOps runs as it
    // (its own cluster entry `ops`, in a repository without a SOPS file: the credential comes from the environment)
    await admin.createUser({ userid: 'deploy@pve', comment: 'managed-by=proxops.ops' })
    const made = await admin.createToken('deploy@pve', 'ops', { privsep: 0 })
    await admin.updateAcl({ path: '/', roles: 'Administrator', users: 'deploy@pve' })
    // each cluster entry its own role prefix: a role carries no entry marker
    const ops = await makeRepo(sim, {
      cluster: 'ops',
      manifests: {},
      sops: false,
      clusterExtra: '      access:\n        role-prefix: ops-',
    })
    const env = { PROXOPS_PVE_TOKEN_VALUE: `deploy@pve!ops=${made.value.reveal()}` }
    const run = (args: string[]) => proxops(args, { cwd: ops, env: baseEnv(ops, env) })
    const write = (files: Record<string, string>) => {
      for (const [file, text] of Object.entries(files)) {
        mkdirSync(path.dirname(path.join(ops, file)), { recursive: true })
        writeFileSync(path.join(ops, file), text)
      }
      writeFileSync(
        path.join(ops, 'clusters/ops/resources.yaml'),
        `resources:\n${Object.keys(files)
          .map((f) => `  - ../../${f}\n`)
          .join('')}`,
      )
      git(ops, 'add', '-A')
      git(ops, 'commit', '-q', '-m', 'lock-out')
    }
    const user = doc('User', 'deploy', '  userid: deploy@pve\n  enable: false\n')
    const grant = doc('ACL', 'deploy', '  path: /\n  roles: [Administrator]\n  users: [deploy@pve]\n')
    const writes = () =>
      sim.stats.requests.filter((r) => r.method !== 'GET' && !r.rawPath.startsWith('/access/ticket')).length
    // 1. disabling the credential's own user
    write({ 'user/ops/deploy.yaml': user, 'acl/ops/deploy.yaml': grant })
    const before = writes()
    const disabled = await run(['diff'])
    expect(disabled.stdout).toContain(
      'User/deploy@pve: it disables user deploy@pve, which the running credential deploy@pve!ops holds; blocked (set access.acknowledge-lockout in the cluster config to allow it) [lockout]',
    )
    const apply = await run(['apply', '--yes'])
    expect(apply.stdout).toContain(
      'anomaly: it disables user deploy@pve, which the running credential deploy@pve!ops holds',
    )
    expect(writes()).toBe(before)
    expect((await admin.accessUsers()).find((u) => u.userid === 'deploy@pve')?.enable).toBe(true)
    // 2. the ACL entry that grants it leaves git (its principal is this entry's, so it would be pruned)
    write({
      'user/ops/deploy.yaml': doc('User', 'deploy', '  userid: deploy@pve\n'),
      'acl/ops/deploy.yaml': doc('ACL', 'other', '  path: /vms\n  roles: [PVEAuditor]\n  users: [deploy@pve]\n'),
    })
    const ungranted = await run(['apply', '--yes', '--prune-budget', 'unlimited'])
    expect(ungranted.stdout).toContain(
      'it removes an ACL entry on / that grants it, which the running credential deploy@pve!ops holds; blocked',
    )
    expect((await admin.acl()).some((e) => e.path === '/' && e.ugid === 'deploy@pve')).toBe(true)
    // 3. its token, marked as this entry's, is not declared: the token is the credential
    await admin.updateToken('deploy@pve', 'ops', { comment: 'managed-by=proxops.ops' })
    const tokenGone = await run(['diff', '--prune-budget', 'unlimited'])
    expect(tokenGone.stdout).toContain(
      'it deletes token deploy@pve!ops, which the running credential deploy@pve!ops holds; blocked',
    )
    rmSync(ops, { recursive: true, force: true })
    // the operator's own grant goes by hand, so that the last-holder case below starts from root's token alone
    await admin.updateAcl({ path: '/', roles: 'Administrator', users: 'deploy@pve', delete: 1 })
  })
})

describe('random access estates', () => {
  it('converge in one apply and never change an unowned principal', async () => {
    // a principal nobody declares, with a grant: it must come out of every apply as it went in
    await admin.createUser({ userid: 'bystander@pve', comment: 'theirs' })
    await admin.createRole({ roleid: 'theirs', privs: 'VM.Audit' })
    await admin.updateAcl({ path: '/vms', roles: 'theirs', users: 'bystander@pve' })
    const snapshot = async () => ({
      user: (await admin.accessUsers()).find((u) => u.userid === 'bystander@pve'),
      acl: (await admin.acl()).filter((e) => e.ugid === 'bystander@pve'),
    })
    const untouched = await snapshot()
    const run = (args: string[]) => proxops(args, { cwd: repo, env: baseEnv(repo) })
    const privs = ['VM.Audit', 'Sys.Audit', 'Datastore.Audit', 'Pool.Audit']
    const estateArb = fc.record({
      groups: fc.uniqueArray(fc.constantFrom('g1', 'g2', 'g3'), { maxLength: 3 }),
      users: fc.uniqueArray(fc.constantFrom('u1', 'u2', 'u3'), { maxLength: 3 }),
      role: fc.subarray(privs, { minLength: 1 }),
      tokens: fc.boolean(),
      path: fc.constantFrom('/', '/vms', '/storage', '/pool'),
    })
    await fc.assert(
      fc.asyncProperty(estateArb, async (e) => {
        const files: Record<string, string> = {
          'role/lab/r.yaml': doc('Role', 'px-rand', `  privs: [${e.role.join(', ')}]\n`),
        }
        for (const g of e.groups) files[`group/lab/${g}.yaml`] = doc('Group', g, '  {}\n')
        for (const u of e.users)
          files[`user/lab/${u}.yaml`] = doc('User', u, `  userid: ${u}@pve\n  groups: [${e.groups.join(', ')}]\n`)
        if (e.tokens && e.users[0]) files['token/lab/t.yaml'] = doc('Token', 't1', `  userid: ${e.users[0]}@pve\n`)
        const principals = [
          ...(e.users.length ? [`  users: [${e.users.map((u) => `${u}@pve`).join(', ')}]`] : []),
          ...(e.groups.length ? [`  groups: [${e.groups.join(', ')}]`] : []),
        ]
        if (principals.length > 0)
          files['acl/lab/a.yaml'] = doc(
            'ACL',
            'rand',
            `  path: ${e.path}\n  roles: [px-rand]\n${principals.join('\n')}\n`,
          )
        commit(files)
        const applied = await run([
          'apply',
          '--yes',
          '--allow-empty',
          'Role',
          '--allow-empty',
          'Group',
          '--allow-empty',
          'User',
          '--allow-empty',
          'Token',
          '--allow-empty',
          'ACL',
          '--prune-budget',
          'unlimited',
        ])
        expect(applied.stderr).not.toMatch(/proxops: error/)
        expect(applied.code, applied.stdout + applied.stderr).toBe(0)
        expect((await run(['diff', '--detailed-exitcode'])).code).toBe(0)
        expect(await snapshot()).toEqual(untouched)
      }),
      { numRuns: 4, seed: 40 },
    )
  })
})

describe('the last holder of Permissions.Modify on /', () => {
  it('disabling it is blocked in diff with the reason, and apply writes nothing', async () => {
    // an owned admin user, the only principal an ACL on / gives Permissions.Modify (root@pam does not count)
    await admin.createUser({ userid: 'boss@pve', comment: 'managed-by=proxops.lab' })
    await admin.updateAcl({ path: '/', roles: 'Administrator', users: 'boss@pve' })
    commit({ 'user/lab/boss.yaml': doc('User', 'boss', '  userid: boss@pve\n  enable: false\n') })
    const run = (args: string[]) => proxops(args, { cwd: repo, env: baseEnv(repo) })
    const before = sim.stats.requests.filter((r) => r.method !== 'GET').length
    const diff = await run(['diff'])
    expect(diff.stdout).toContain(
      'User/boss@pve: the plan takes Permissions.Modify on / from its last holders (user boss@pve (Administrator on /)); root@pam alone would be left; blocked',
    )
    await run(['apply', '--yes'])
    expect(sim.stats.requests.filter((r) => r.method !== 'GET').length).toBe(before)
    expect((await admin.accessUsers()).find((u) => u.userid === 'boss@pve')?.enable).toBe(true)
  })
})
