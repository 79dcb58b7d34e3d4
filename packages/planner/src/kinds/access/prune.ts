/**
 * The access objects this entry may delete, for the one prune stage (plan/prune.ts): in deletion order, ACL
 * entries, tokens, users, groups, roles. Each is deleted only when it is this entry's (the comment marker; a role:
 * the configured prefix) and git no longer declares it, and only when the delete changes no principal this entry
 * does not own: a group whose members are not all this entry's users being deleted too, or a role an ACL entry
 * that stays still grants, is left with a prune-guard skip. An ACL entry goes only when its principal is this
 * entry's and stays declared (an undeclared principal's entries go with it: delete_user_acl, delete_group_acl).
 */
import type { AclEntry } from '@proxops/pve-client/wire'
import type { Skip } from '../../plan-types.js'
import type { Draft } from '../../kit/draft.js'
import type { PruneCandidate, PruneGroup } from '../../kit/kind.js'
import { commentMarker } from '../../kit/ownership.js'
import { aclEntryAddress, entryKey, groupAddress, roleAddress, tokenAddress, userAddress } from './model.js'
import type { AccessEnv } from './plan.js'

export interface AccessPrunes {
  all: PruneCandidate[]
  /** the prune group over the candidates `keep` lets through (the lock-out guard removes the others) */
  group(keep: (c: PruneCandidate) => boolean): PruneGroup
}

const del = (
  kind: Draft['kind'],
  address: string,
  reason: string,
  request: Draft['requests'][number],
  disruptive?: string,
): Draft => ({
  id: `${address}#delete`,
  address,
  kind,
  node: '',
  type: 'delete',
  reason: disruptive === undefined ? reason : `${reason}; disruptive: ${disruptive}`,
  diffs: [],
  // a token's delete ends every client that uses it: shown as the most disruptive class
  disruption: disruptive === undefined ? 'none' : 'stop',
  tier: 9,
  level: 0,
  requests: [request],
})

export function accessPrunes(env: AccessEnv): AccessPrunes {
  const { d, live, own } = env
  const skips: Skip[] = []
  const marker = commentMarker(own.policy)
  const why = `present on PVE (${marker} marker) but absent in git`
  const skip = (code: Skip['code'], kind: Skip['kind'], address: string, message: string) =>
    skips.push({ code, kind, address, node: '', message })
  /** comment-marked objects: only this entry's are candidates; the unmarked and other entries' are reported */
  const mine = (kind: Skip['kind'], address: string, comment: string | undefined): boolean => {
    const o = own.comment(comment)
    if (o === 'self') return true
    if (o === 'unmarked')
      skip(
        'unmarked',
        kind,
        address,
        `marked without a cluster entry and absent in git; not pruned: write ${marker} in its comment to let this entry prune it`,
      )
    else if (o === 'other') skip('owned-elsewhere', kind, address, "another cluster entry's; never touched")
    return false
  }

  const goingUsers = new Set<string>()
  const goingGroups = new Set<string>()
  const goingTokens = new Set<string>()
  for (const u of live.users.values())
    if (!d.users.has(u.userid) && u.userid !== 'root@pam' && mine('User', userAddress(u.userid), u.comment))
      goingUsers.add(u.userid)
  for (const [full, t] of live.tokens)
    if (!d.tokens.has(full) && !goingUsers.has(t.userid) && mine('Token', tokenAddress(full), t.comment))
      goingTokens.add(full)
  for (const g of live.groups.values())
    if (!d.groups.has(g.groupid) && mine('Group', groupAddress(g.groupid), g.comment)) goingGroups.add(g.groupid)

  /** an ACL principal this entry owns and still declares (an owned, undeclared one takes its entries with it) */
  const ownedDeclared = (e: AclEntry): boolean => {
    if (e.type === 'user') return d.users.has(e.ugid) && own.comment(live.users.get(e.ugid)?.comment) === 'self'
    if (e.type === 'group') return d.groups.has(e.ugid) && own.comment(live.groups.get(e.ugid)?.comment) === 'self'
    return d.tokens.has(e.ugid) && own.comment(live.tokens.get(e.ugid)?.comment) === 'self'
  }
  const ownedPrincipal = (e: AclEntry): boolean =>
    own.comment(
      e.type === 'user'
        ? live.users.get(e.ugid)?.comment
        : e.type === 'group'
          ? live.groups.get(e.ugid)?.comment
          : live.tokens.get(e.ugid)?.comment,
    ) === 'self'
  /** the entry disappears with its principal */
  const goesWithPrincipal = (e: AclEntry): boolean =>
    e.type === 'user'
      ? goingUsers.has(e.ugid)
      : e.type === 'group'
        ? goingGroups.has(e.ugid)
        : goingTokens.has(e.ugid) || goingUsers.has(e.ugid.slice(0, e.ugid.lastIndexOf('!')))

  const all: PruneCandidate[] = []
  const entryDeletes = new Map<string, string>()
  for (const e of live.entries.values()) {
    if (d.entries.has(entryKey(e)) || !ownedDeclared(e)) continue
    const address = aclEntryAddress(e)
    const draft = del('ACL', address, `ACL entry of ${e.type} ${e.ugid} (${marker} marker) absent in git`, {
      call: 'updateAcl',
      params: { path: e.path, roles: e.roleid, [`${e.type}s`]: e.ugid, delete: 1 },
    })
    entryDeletes.set(entryKey(e), draft.id ?? address)
    all.push({ kind: 'ACL', draft })
  }
  for (const full of [...goingTokens].sort()) {
    const [userid, tokenid] = [full.slice(0, full.lastIndexOf('!')), full.slice(full.lastIndexOf('!') + 1)]
    all.push({
      kind: 'Token',
      draft: del(
        'Token',
        tokenAddress(full),
        why,
        { call: 'deleteToken', userid, tokenid },
        'every client using this token loses access',
      ),
    })
  }
  for (const userid of [...goingUsers].sort()) {
    const tokens = live.users.get(userid)?.tokens.length ?? 0
    all.push({
      kind: 'User',
      draft: del(
        'User',
        userAddress(userid),
        `${why} (delete_user also removes its tokens, group memberships and ACL entries)`,
        { call: 'deleteUser', userid },
        tokens > 0 ? `its ${tokens} token(s) stop working` : undefined,
      ),
    })
  }
  for (const groupid of [...goingGroups].sort()) {
    // members that stay in it: not deleted, and not declared with a group list this plan writes without it
    const leaving = (u: string) => {
      const groups = d.users.get(u)?.spec.groups
      return goingUsers.has(u) || (groups !== undefined && !groups.includes(groupid))
    }
    const others = (live.groups.get(groupid)?.users ?? []).filter((u) => !leaving(u))
    if (others.length > 0) {
      skip(
        'prune-guard',
        'Group',
        groupAddress(groupid),
        `owned and absent in git, but not deleted: its members ${others.join(', ')} stay, and would lose what the group grants them`,
      )
      continue
    }
    all.push({
      kind: 'Group',
      draft: del('Group', groupAddress(groupid), `${why} (delete_group also removes its ACL entries)`, {
        call: 'deleteGroup',
        groupid,
      }),
    })
  }
  const ownedRoles = [...live.roles.values()].filter((r) => own.role(r.roleid, r.special))
  for (const r of ownedRoles) {
    if (d.roles.has(r.roleid)) continue
    const address = roleAddress(r.roleid)
    const users = [...live.entries.values()].filter((e) => e.roleid === r.roleid)
    const staying = users.filter((e) => !entryDeletes.has(entryKey(e)) && !goesWithPrincipal(e))
    if (staying.length > 0) {
      skip(
        'prune-guard',
        'Role',
        address,
        `owned (prefix ${own.policy.access?.rolePrefix ?? ''}) and absent in git, but not deleted: ACL entries that stay still grant it (${staying
          .slice(0, 3)
          .map((e) => `${e.type} ${e.ugid} on ${e.path}`)
          .join(', ')}${staying.length > 3 ? ', ...' : ''})`,
      )
      continue
    }
    const waitsFor = users.flatMap((e) => entryDeletes.get(entryKey(e)) ?? [])
    all.push({
      kind: 'Role',
      waitsFor,
      draft: {
        ...del('Role', address, `role with the ${own.policy.access?.rolePrefix ?? ''} prefix absent in git`, {
          call: 'deleteRole',
          roleid: r.roleid,
        }),
        after: waitsFor,
      },
    })
  }

  const counts = (entries: [string, number][]) => new Map(entries)
  return {
    all,
    group: (keep) => ({
      guarded: true,
      owner: 'owned',
      noun: 'live access object(s)',
      owned: counts([
        ['User', [...live.users.values()].filter((u) => own.comment(u.comment) === 'self').length],
        ['Token', [...live.tokens.values()].filter((t) => own.comment(t.comment) === 'self').length],
        ['Group', [...live.groups.values()].filter((g) => own.comment(g.comment) === 'self').length],
        ['Role', ownedRoles.length],
        ['ACL', [...live.entries.values()].filter(ownedPrincipal).length],
      ]),
      desired: counts([
        ['User', d.users.size],
        ['Token', d.tokens.size],
        ['Group', d.groups.size],
        ['Role', d.roles.size],
        ['ACL', d.acls.length],
      ]),
      candidates: () => ({ candidates: all.filter(keep), skips, anomalies: [] }),
    }),
  }
}
