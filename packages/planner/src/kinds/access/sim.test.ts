/**
 * The access kinds against the simulator's /access (pve-access-control API2::Role, Group, User, ACL and the token
 * endpoints) with the real client: an estate of every kind converges in one apply and the next plan is empty; a
 * new token's secret reaches only the token sink; drift is put back; owned objects are pruned and unowned ones
 * are never touched; the lock-out guards block what would take the running credential's access.
 */
import { expect, it } from 'vitest'
import { createPveClient, type PveClient } from '@proxops/pve-client'
import type { Manifest } from '@proxops/schema'
import type { SimPve } from '../../test-support/sim.js'
import { useSimPve } from '../../test-support/use-sim.js'
import { reconcile } from '../../reconcile/reconcile.js'
import { accessManifest as a, desired, policy } from '../../fixtures.test.helpers.js'
import type { Policy } from '../../plan-types.js'
import { serializePlan } from '../../serialize.js'

let env: SimPve
let pve: PveClient
useSimPve({}, 'file', (e) => {
  env = e
  pve = e.client
})

const stored = new Map<string, string>()
const sink = (full: string, secret: { reveal(): string }) => {
  stored.set(full, secret.reveal())
  return Promise.resolve(`/data/tokens/${full}.age`)
}
const pol = (over: Partial<Policy['access']> = {}): Policy =>
  policy({
    nodes: [],
    pruneRatioLimit: 1,
    pruneBudget: 'unlimited',
    allowEmpty: ['Role', 'Group', 'User', 'Token', 'ACL'],
    access: { rolePrefix: 'px-', ...over },
  })

async function apply(ms: Manifest[], p = pol()) {
  const all = desired(...ms)
  const run = await reconcile({
    desired: all,
    reader: pve,
    writer: pve,
    policy: p,
    execute: { confirmAttempts: 1, confirmDelayMs: 0, tokenSecrets: sink },
  })
  expect(run.report?.results.map((r) => [r.address, r.status, r.error ?? ''])).toEqual(
    run.plan.actions.map((x) => [x.address, 'ok', '']),
  )
  return run
}
const diff = async (ms: Manifest[], p = pol()) =>
  (await reconcile({ desired: desired(...ms), reader: pve, policy: p })).plan

const estate = (): Manifest[] => [
  a('Role', 'px-ops', { privs: ['VM.Audit', 'Sys.Audit'] }),
  a('Group', 'ops', { comment: 'operators' }),
  a('User', 'alice', { userid: 'alice@pve', groups: ['ops'], email: 'alice@example.invalid', firstname: 'Alice' }),
  a('Token', 'ci', { userid: 'alice@pve', comment: 'CI', privsep: true }),
  a('ACL', 'ops-vms', { path: '/vms', roles: ['px-ops'], groups: ['ops'] }),
  a('ACL', 'ci', { path: '/', roles: ['PVEAuditor'], tokens: ['alice@pve!ci'], propagate: false }),
]

it('an estate of every kind converges in one apply; the next diff is empty; the secret only reaches the sink', async () => {
  const run = await apply(estate())
  expect(run.plan.actions.map((x) => [x.address, x.type])).toEqual([
    ['Group/ops', 'create'],
    ['Role/px-ops', 'create'],
    ['ACL//vms(ops-vms)', 'create'],
    ['User/alice@pve', 'create'],
    ['Token/alice@pve!ci', 'create'],
    ['ACL//(ci)', 'create'],
  ])
  expect((await diff(estate())).actions).toEqual([])
  const secret = stored.get('alice@pve!ci')
  expect(secret).toMatch(/^[0-9a-f-]{36}$/)
  // the secret is in no plan, report or note; the note says where it went
  const text = serializePlan(run.plan) + JSON.stringify(run.report)
  expect(text).not.toContain(secret)
  expect(run.report?.results.find((r) => r.address === 'Token/alice@pve!ci')?.notes).toEqual([
    'the secret of token alice@pve!ci was written, age-encrypted, to /data/tokens/alice@pve!ci.age',
  ])
  // and it is the token PVE made: it authenticates (a wrong secret is a 401); privilege-separated, its PVEAuditor on /
  // is cut to what its user holds there, which is nothing (RPCEnvironment permissions)
  const ci = createPveClient({
    baseUrl: env.sim.url,
    auth: { type: 'token', tokenId: 'alice@pve!ci', secret: secret ?? '' },
    dispatcher: env.sim.dispatcher,
  })
  expect(await ci.privileges('/')).toEqual([])
  await ci.close()
  const onPve = await pve.get('/access/users/{userid}', { pathParams: { userid: 'alice@pve' } })
  expect(onPve).toMatchObject({ comment: 'managed-by=proxops', email: 'alice@example.invalid', groups: ['ops'] })
})

it('drift is put back; foreign principals keep what git does not declare; owned objects absent in git are pruned', async () => {
  await pve.request('PUT', '/access/roles/{roleid}', {
    pathParams: { roleid: 'px-ops' },
    params: { privs: 'VM.Audit' },
  })
  await pve.request('PUT', '/access/users/{userid}', {
    pathParams: { userid: 'alice@pve' },
    params: { email: 'x@y.z' },
  })
  // someone else's user and role, granted by hand on a path git also grants on
  await pve.request('POST', '/access/users', { params: { userid: 'bob@pve' } })
  await pve.request('POST', '/access/roles', { params: { roleid: 'theirs', privs: 'VM.Audit' } })
  await pve.request('PUT', '/access/acl', { params: { path: '/vms', roles: 'theirs', users: 'bob@pve' } })
  const drift = await apply(estate())
  expect(drift.plan.actions.map((x) => [x.address, x.type, x.diffs.map((d) => d.key).join(',')])).toEqual([
    ['Role/px-ops', 'update', 'privs'],
    ['User/alice@pve', 'update', 'email'],
  ])
  // the user, token, group, role and ACLs leave git: all owned, all pruned; bob and `theirs` stay
  const gone = await apply([])
  // the token and the ACL entries go with their user and group (delete_user, delete_group)
  expect(gone.plan.actions.map((x) => [x.address, x.type])).toEqual([
    ['Group/ops', 'delete'],
    ['Role/px-ops', 'delete'],
    ['User/alice@pve', 'delete'],
  ])
  expect(gone.plan.actions[2]?.disruption).toBe('stop')
  expect(await pve.acl()).toEqual([{ path: '/vms', type: 'user', ugid: 'bob@pve', roleid: 'theirs', propagate: true }])
  expect((await pve.accessRoles()).some((r) => r.roleid === 'theirs')).toBe(true)
  expect((await diff([])).actions).toEqual([])
})

it('diff foresees refusals: unknown privilege, missing realm, an ACL naming what neither git nor PVE has', async () => {
  const p = await diff([
    a('Role', 'px-bad', { privs: ['VM.Audit', 'VM.Fly'] }),
    a('User', 'eve', { userid: 'eve@ldap' }),
    a('ACL', 'ghost', { path: '/', roles: ['nope'], users: ['ghost@pve'] }),
  ])
  expect(p.actions).toEqual([])
  expect(p.anomalies.map((x) => [x.code, x.address])).toEqual([
    ['access-refused', 'ACL//(ghost)'],
    ['access-refused', 'Role/px-bad'],
    ['access-refused', 'User/eve@ldap'],
  ])
  expect(p.anomalies[1]?.message).toMatch(/does not know the privilege VM\.Fly/)
})

it('lock-out: what grants the running credential is not removed or weakened unless acknowledged', async () => {
  const mine = [
    a('Role', 'px-deploy', { privs: ['Sys.Audit', 'VM.Audit', 'Permissions.Modify'] }),
    a('User', 'deploy', { userid: 'deploy@pve' }),
    a('Token', 'ops', { userid: 'deploy@pve', privsep: false }),
    a('ACL', 'deploy', { path: '/', roles: ['px-deploy'], users: ['deploy@pve'] }),
  ]
  await apply(mine)
  const cred = pol({ credential: 'deploy@pve!ops' })
  const before = env.requests().filter((r) => !r.startsWith('GET')).length
  // dropping the token, disabling the user, and taking Permissions.Modify from the role: all blocked, no write
  const weaker = [mine[0]!, a('User', 'deploy', { userid: 'deploy@pve', enable: false }), mine[3]!]
  const weakerRole = a('Role', 'px-deploy', { privs: ['Sys.Audit'] })
  const p = (
    await reconcile({ desired: desired(weakerRole, ...weaker.slice(1)), reader: pve, writer: pve, policy: cred })
  ).plan
  expect(p.actions).toEqual([])
  expect(p.anomalies.filter((x) => x.code === 'lockout').map((x) => x.address)).toEqual([
    'Role/px-deploy',
    'Token/deploy@pve!ops',
    'User/deploy@pve',
  ])
  expect(p.anomalies.find((x) => x.address === 'Token/deploy@pve!ops')?.message).toMatch(
    /it deletes token deploy@pve!ops, which the running credential deploy@pve!ops holds; blocked/,
  )
  expect(env.requests().filter((r) => !r.startsWith('GET')).length).toBe(before)
  // acknowledged: the anomalies stay, the actions run
  const ack = await diff(
    [weakerRole, ...weaker.slice(1)],
    pol({ credential: 'deploy@pve!ops', acknowledgeLockout: true }),
  )
  expect(ack.actions.map((x) => x.address)).toEqual(['Role/px-deploy', 'User/deploy@pve', 'Token/deploy@pve!ops'])
  // the last holder of Permissions.Modify on / (deploy@pve through px-deploy) keeps it, with or without a credential
  const last = await diff([], pol())
  expect(last.actions).toEqual([])
  expect(last.anomalies.filter((x) => x.code === 'lockout').length).toBeGreaterThan(0)
})
