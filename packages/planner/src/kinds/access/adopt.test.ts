/**
 * The access kind beyond one apply: adopt of what a cluster holds (never a secret) plans nothing when applied;
 * the access objects cost five listings whatever user.cfg holds (no request per object); the privilege preflight
 * names what the token lacks for these writes (PVE::API2::Role, Group, User, ACL permissions).
 */
import { expect, it } from 'vitest'
import type { PveClient } from '@proxops/pve-client'
import { parseManifest, type Manifest } from '@proxops/schema'
import type { SimPve } from '../../test-support/sim.js'
import { useSimPve } from '../../test-support/use-sim.js'
import { reconcile } from '../../reconcile/reconcile.js'
import { observe } from '../../observe/observe.js'
import { adopt } from '../../adopt/adopt.js'
import { accessManifest as a, desired, policy } from '../../fixtures.test.helpers.js'
import type { Policy } from '../../plan-types.js'

let env: SimPve
let pve: PveClient
useSimPve({}, 'file', (e) => {
  env = e
  pve = e.client
})

const pol: Policy = policy({ nodes: [], clusterEntry: 'homelab', access: { rolePrefix: 'px-' } })

it('adopt writes every custom role, group, user, token and ACL (no secret); applying them changes nothing', async () => {
  await pve.createRole({ roleid: 'px-audit', privs: 'VM.Audit,Sys.Audit' })
  await pve.createGroup({ groupid: 'ops', comment: 'managed-by=proxops.homelab operators' })
  await pve.createUser({
    userid: 'ann@pve',
    groups: 'ops',
    email: 'ann@example.invalid',
    comment: 'managed-by=proxops.homelab',
  })
  const made = await pve.createToken('ann@pve', 'ci', { privsep: 1, comment: 'managed-by=proxops.homelab CI' })
  await pve.updateAcl({ path: '/vms', roles: 'px-audit', groups: 'ops', propagate: 0 })
  await pve.updateAcl({ path: '/', roles: 'PVEAuditor', tokens: 'ann@pve!ci' })
  const live = await observe('homelab', pve, { access: true })
  const result = adopt(live, { cluster: 'homelab' })
  const files = result.files.filter((f) => ['Role', 'Group', 'User', 'Token', 'ACL'].includes(f.kind))
  expect(files.map((f) => f.path).sort()).toEqual(
    [
      'acl/homelab/pveauditor.yaml',
      'acl/homelab/vms-px-audit-here.yaml',
      'group/homelab/ops.yaml',
      'role/homelab/px-audit.yaml',
      'token/homelab/ann-ci.yaml',
      'user/homelab/ann.yaml',
      // the simulator's own token and its user
      ...files.filter((f) => f.path.includes('proxops') || f.path.includes('sim')).map((f) => f.path),
    ].sort(),
  )
  expect(JSON.stringify(result)).not.toContain(made.value.reveal())
  const manifests: Manifest[] = files.map((f) => {
    const r = parseManifest(f.document)
    if (!r.ok) throw new Error(`${f.path}: ${JSON.stringify(r.issues)}`)
    return r.manifest
  })
  const p = (await reconcile({ desired: desired(...manifests), reader: pve, policy: pol })).plan
  expect(p.actions.filter((x) => x.address !== 'Token/root@pam!proxops')).toEqual([])
})

it('1,000 users, 200 groups and 2,000 ACL entries cost the same five listings as none', async () => {
  const count = async (): Promise<number> => {
    const before = env.requests().length
    await reconcile({ desired: desired(a('Group', 'g0', {})), reader: pve, policy: pol })
    return env
      .requests()
      .slice(before)
      .filter((r) => r.startsWith('GET /access/')).length
  }
  const small = await count()
  for (let g = 0; g < 200; g++) await pve.createGroup({ groupid: `bulk${g}` })
  for (let u = 0; u < 1000; u++) await pve.createUser({ userid: `bulk${u}@pve`, groups: `bulk${u % 200}` })
  for (let i = 0; i < 2000; i++)
    await pve.updateAcl({ path: `/vms/${1000 + i}`, roles: 'PVEAuditor', users: `bulk${i % 1000}@pve` })
  expect(await count()).toBe(small)
  // five listings (users with tokens, groups, roles, ACL, realms), plus the preflight's own permission reads
  expect(small).toBeLessThanOrEqual(7)
})

it('the privilege preflight names what the token lacks for access writes, before any write', async () => {
  const limited = await pve.createToken('ann@pve', 'limited', { privsep: 1 })
  await pve.updateAcl({ path: '/access', roles: 'PVEAuditor', tokens: 'ann@pve!limited' })
  await pve.updateAcl({ path: '/access', roles: 'PVEAuditor', users: 'ann@pve' })
  const { createPveClient } = await import('@proxops/pve-client')
  const client = createPveClient({
    baseUrl: env.sim.url,
    auth: { type: 'token', tokenId: 'ann@pve!limited', secret: limited.value.reveal() },
    dispatcher: env.sim.dispatcher,
  })
  const p = (
    await reconcile({
      desired: desired(a('Role', 'px-new', { privs: ['VM.Audit'] })),
      reader: client,
      policy: pol,
      actor: 'ann@pve!limited',
    })
  ).plan
  await client.close()
  expect(p.actions).toEqual([])
  const missing = p.anomalies.filter((x) => x.code === 'missing-privilege')
  expect(missing.map((x) => x.address)).toEqual(['Role/px-new'])
  expect(missing[0]?.message).toMatch(/Sys\.Modify on \/access/)
})
