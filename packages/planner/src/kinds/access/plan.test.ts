/**
 * The access plan as a pure function (fast-check): over random live user.cfg contents and random declarations,
 * the plan is byte-identical for the same inputs, never writes or deletes a principal that carries no marker of
 * this entry and is not declared, never touches root@pam or a built-in role, and what adopt writes for a live
 * user.cfg (marked as this entry's) plans nothing.
 */
import { describe, expect } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { parseManifest, type Manifest } from '@proxops/schema'
import type { AccessUser, AclEntry } from '@proxops/pve-client/wire'
import { plan } from '../../plan/plan.js'
import { serializePlan } from '../../serialize.js'
import { adopt } from '../../adopt/adopt.js'
import type { LiveAccess } from '../../inventory.js'
import { accessManifest as a, desired, emptyAccess, emptyInventory, policy } from '../../fixtures.test.helpers.js'

const MARK = 'managed-by=proxops.homelab'
const pol = policy({
  nodes: [],
  clusterEntry: 'homelab',
  pruneBudget: 'unlimited',
  pruneRatioLimit: 1,
  allowEmpty: ['Role', 'Group', 'User', 'Token', 'ACL'],
  access: { rolePrefix: 'px-' },
})

const name = fc.constantFrom('a', 'b', 'c', 'd')
const owned = fc.boolean()
/** a live user.cfg: users (some marked), their tokens, groups, px- and other roles, ACL entries among them */
const liveArb: fc.Arbitrary<LiveAccess> = fc
  .record({
    users: fc.uniqueArray(fc.tuple(name, owned, fc.boolean()), { selector: (u) => u[0], maxLength: 4 }),
    groups: fc.uniqueArray(fc.tuple(name, owned), { selector: (g) => g[0], maxLength: 3 }),
    roles: fc.uniqueArray(fc.tuple(name, fc.boolean()), { selector: (r) => r[0], maxLength: 3 }),
    acl: fc.array(fc.tuple(fc.constantFrom('/', '/vms', '/storage'), fc.nat(20), fc.nat(20), fc.boolean()), {
      maxLength: 6,
    }),
  })
  .map(({ users, groups, roles, acl }) => {
    const base = emptyAccess()
    const us: AccessUser[] = users.map(([n, mine, token]) => ({
      userid: `${n}@pve`,
      enable: true,
      expire: 0,
      ...(mine ? { comment: MARK } : { comment: 'by hand' }),
      groups: groups.filter(([, gm]) => gm === mine).map(([g]) => `g${g}`),
      tokens: token ? [{ tokenid: 'tk', privsep: true, expire: 0, ...(mine ? { comment: MARK } : {}) }] : [],
    }))
    const roleIds = roles.map(([n, prefixed]) => (prefixed ? `px-${n}` : `r${n}`))
    const principals: [AclEntry['type'], string][] = [
      ...us.map((u): [AclEntry['type'], string] => ['user', u.userid]),
      ...groups.map(([g]): [AclEntry['type'], string] => ['group', `g${g}`]),
      ...us.flatMap((u) => u.tokens.map((t): [AclEntry['type'], string] => ['token', `${u.userid}!${t.tokenid}`])),
    ]
    const allRoles = ['PVEAuditor', ...roleIds]
    const entries = new Map<string, AclEntry>()
    for (const [path, p, r, propagate] of acl) {
      const pr = principals[p % Math.max(principals.length, 1)]
      if (!pr) continue
      const e = { path, type: pr[0], ugid: pr[1], roleid: allRoles[r % allRoles.length]!, propagate }
      entries.set(`${path}|${e.type}|${e.ugid}|${e.roleid}`, e)
    }
    return {
      ...base,
      users: [...base.users, ...us],
      groups: groups.map(([g, mine]) => ({
        groupid: `g${g}`,
        ...(mine ? { comment: MARK } : {}),
        users: us.filter((u) => u.groups.includes(`g${g}`)).map((u) => u.userid),
      })),
      roles: [...base.roles, ...roleIds.map((roleid) => ({ roleid, privs: ['VM.Audit'], special: false }))],
      acl: [...entries.values()],
    }
  })

/** a random subset of declarations over the same names */
const desiredArb = fc.record({
  users: fc.subarray(['a', 'b', 'c']),
  groups: fc.subarray(['a', 'b']),
  role: fc.boolean(),
})
const declare = (d: { users: string[]; groups: string[]; role: boolean }): Manifest[] => [
  ...d.groups.map((g) => a('Group', `g${g}`, {})),
  ...d.users.map((u) => a('User', u, { userid: `${u}@pve`, groups: d.groups.map((g) => `g${g}`) })),
  ...(d.role ? [a('Role', 'px-a', { privs: ['VM.Audit'] })] : []),
  ...(d.role && d.users[0] ? [a('ACL', 'grant', { path: '/vms', roles: ['px-a'], users: [`${d.users[0]}@pve`] })] : []),
]

describe('access plan', () => {
  test.prop([liveArb, desiredArb], { numRuns: 150 })(
    'deterministic; never writes an unmarked, undeclared principal, root@pam or a built-in role',
    (live, d) => {
      const inv = emptyInventory({ access: { known: live } })
      const manifests = declare(d)
      const p = plan(desired(...manifests), inv, pol)
      expect(serializePlan(plan(desired(...manifests), inv, pol))).toBe(serializePlan(p))
      const declaredUsers = new Set(d.users.map((u) => `${u}@pve`))
      const declaredGroups = new Set(d.groups.map((g) => `g${g}`))
      const marked = (comment: string | undefined) => comment?.startsWith(MARK) ?? false
      for (const action of p.actions)
        for (const r of action.requests) {
          if ('userid' in r && r.call !== 'createToken' && r.call !== 'updateToken' && r.call !== 'deleteToken') {
            const u = live.users.find((x) => x.userid === r.userid)
            expect(r.userid).not.toBe('root@pam')
            if (!declaredUsers.has(r.userid)) expect(marked(u?.comment), action.id).toBe(true)
          }
          if ('groupid' in r && !declaredGroups.has(r.groupid))
            expect(marked(live.groups.find((g) => g.groupid === r.groupid)?.comment), action.id).toBe(true)
          if (r.call === 'deleteRole' || r.call === 'updateRole') expect(r.roleid.startsWith('px-')).toBe(true)
          if (r.call === 'updateAcl' && r.params.delete === 1) {
            const ugid = String(r.params.users ?? r.params.groups ?? r.params.tokens)
            const owner =
              live.users.find((u) => u.userid === ugid)?.comment ??
              live.groups.find((g) => g.groupid === ugid)?.comment ??
              live.users
                .flatMap((u) => u.tokens.map((t) => ({ id: `${u.userid}!${t.tokenid}`, c: t.comment })))
                .find((t) => t.id === ugid)?.c
            expect(marked(owner), action.id).toBe(true)
          }
        }
    },
  )

  test.prop([liveArb], { numRuns: 100 })("adopt of a user.cfg marked as this entry's plans nothing", (live) => {
    const marked: LiveAccess = {
      ...live,
      users: live.users.map((u) =>
        u.userid === 'root@pam' ? u : { ...u, comment: MARK, tokens: u.tokens.map((t) => ({ ...t, comment: MARK })) },
      ),
      groups: live.groups.map((g) => ({ ...g, comment: MARK })),
    }
    const inv = emptyInventory({ access: { known: marked } })
    const result = adopt(inv, { cluster: 'homelab' })
    const manifests = result.files.map((f) => {
      const r = parseManifest(f.document)
      if (!r.ok) throw new Error(`${f.path}: ${JSON.stringify(r.issues)}`)
      return r.manifest
    })
    const p = plan(desired(...manifests), inv, pol)
    expect(p.actions).toEqual([])
  })
})
