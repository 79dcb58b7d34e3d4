/**
 * adopt for the access objects: custom roles, groups, users (never root@pam), tokens (never a secret: PVE shows it
 * only at creation) and ACL entries become Role, Group, User, Token and ACL manifests; comments lose ProxOps'
 * marker; objects another cluster entry marked are left out. ACL entries become one manifest per path, role set
 * and propagate flag, listing their principals. Pure. Applying the result changes nothing for objects that
 * already carry this entry's marker; an unmarked one is claimed (its comment gains the marker).
 */
import { API_VERSION, KIND_ROOT_OF, type Kind } from '@proxops/schema'
import type { LiveAccess } from '../../inventory.js'
import type { AdoptContext, AdoptedFile } from '../../kit/adopt.js'
import { commentOwner, commentText } from '../../kit/ownership.js'
import { sanitiseName } from '../../kit/names.js'

const doc = (kind: Kind, name: string, cluster: string, spec: Record<string, unknown>): AdoptedFile => ({
  path: `${KIND_ROOT_OF[kind]}/${cluster}/${name}.yaml`,
  kind,
  name,
  document: { apiVersion: API_VERSION, kind, metadata: { name }, spec },
  incomplete: [],
})

const opt = <T>(k: string, v: T | undefined): Record<string, T> => (v === undefined || v === '' ? {} : { [k]: v })

export function adoptAccess(live: LiveAccess, ctx: AdoptContext): AdoptedFile[] {
  const { cluster } = ctx.options
  const policy = { ownershipTag: ctx.tag }
  const foreign = (c: string | undefined) =>
    commentOwner(c, { ...policy, clusterEntry: ctx.options.cluster }) === 'other'
  const out: AdoptedFile[] = []
  // adopt's claim wants a name-like id for its suffix: PVE ids may hold upper case, `@`, `!` and `/`
  const claim = (kind: Kind, base: string, id: string) =>
    ctx.claim(kind, sanitiseName(base, kind.toLowerCase()), sanitiseName(id, kind.toLowerCase()))
  for (const r of live.roles) {
    if (r.special) continue
    const name = claim('Role', r.roleid, r.roleid)
    out.push(doc('Role', name, cluster, { ...(name !== r.roleid ? { roleid: r.roleid } : {}), privs: [...r.privs] }))
  }
  for (const g of live.groups) {
    if (foreign(g.comment)) continue
    const name = claim('Group', g.groupid, g.groupid)
    out.push(
      doc('Group', name, cluster, {
        ...(name !== g.groupid ? { groupid: g.groupid } : {}),
        ...opt('comment', commentText(g.comment, ctx.tag)),
      }),
    )
  }
  for (const u of live.users) {
    if (u.userid === 'root@pam' || foreign(u.comment)) continue
    const name = claim('User', u.userid.replace(/@.*$/, ''), u.userid)
    out.push(
      doc('User', name, cluster, {
        userid: u.userid,
        ...(u.groups.length > 0 ? { groups: [...u.groups] } : {}),
        ...opt('email', u.email),
        ...opt('firstname', u.firstname),
        ...opt('lastname', u.lastname),
        ...(u.enable ? {} : { enable: false }),
        ...(u.expire !== 0 ? { expire: u.expire } : {}),
        ...opt('comment', commentText(u.comment, ctx.tag)),
      }),
    )
    for (const t of u.tokens) {
      if (foreign(t.comment)) continue
      const full = `${u.userid}!${t.tokenid}`
      const tname = claim('Token', `${u.userid.replace(/@.*$/, '')}-${t.tokenid}`, full)
      out.push(
        doc('Token', tname, cluster, {
          userid: u.userid,
          ...(tname !== t.tokenid ? { tokenid: t.tokenid } : {}),
          privsep: t.privsep,
          ...(t.expire !== 0 ? { expire: t.expire } : {}),
          ...opt('comment', commentText(t.comment, ctx.tag)),
        }),
      )
    }
  }
  // one ACL manifest per path, propagate flag and role, listing its principals
  const acls = new Map<
    string,
    { path: string; roleid: string; propagate: boolean; users: string[]; groups: string[]; tokens: string[] }
  >()
  for (const e of live.acl) {
    const key = `${e.path}|${e.roleid}|${e.propagate ? 1 : 0}`
    const a = acls.get(key) ?? {
      path: e.path,
      roleid: e.roleid,
      propagate: e.propagate,
      users: [],
      groups: [],
      tokens: [],
    }
    a[`${e.type}s`].push(e.ugid)
    acls.set(key, a)
  }
  for (const a of acls.values()) {
    const name = claim(
      'ACL',
      `${a.path}-${a.roleid}${a.propagate ? '' : '-here'}`,
      `${a.path}-${a.roleid}-${a.propagate ? 1 : 0}`,
    )
    out.push(
      doc('ACL', name, cluster, {
        path: a.path,
        roles: [a.roleid],
        ...(a.users.length > 0 ? { users: a.users.sort() } : {}),
        ...(a.groups.length > 0 ? { groups: a.groups.sort() } : {}),
        ...(a.tokens.length > 0 ? { tokens: a.tokens.sort() } : {}),
        ...(a.propagate ? {} : { propagate: false }),
      }),
    )
  }
  return out
}
