/** Read-back of an access action: the object is listed as written (or gone), the ACL entries are there (or not). */
import type { Action, PlanParams } from '../../plan-types.js'
import type { LiveReader } from '../../ports.js'

const list = (v: PlanParams[string] | undefined): string[] =>
  typeof v === 'string' ? v.split(',').filter(Boolean) : []

export async function confirmAccess(action: Action, reader: LiveReader): Promise<string | undefined> {
  const r = action.requests[0]
  if (!r) return undefined
  switch (r.call) {
    case 'createRole':
    case 'updateRole': {
      const id = r.call === 'createRole' ? String(r.params.roleid) : r.roleid
      const live = (await reader.accessRoles()).find((x) => x.roleid === id)
      if (!live) return `role ${id} is not listed`
      const want = list(r.params.privs).sort().join(',')
      return live.privs.join(',') === want
        ? undefined
        : `role ${id} has privileges ${live.privs.join(',')}, not ${want}`
    }
    case 'deleteRole':
      return stillListed(
        (await reader.accessRoles()).some((x) => x.roleid === r.roleid),
        `role ${r.roleid}`,
      )
    case 'createGroup':
    case 'updateGroup': {
      const id = r.call === 'createGroup' ? String(r.params.groupid) : r.groupid
      const live = (await reader.accessGroups()).find((x) => x.groupid === id)
      if (!live) return `group ${id} is not listed`
      return (live.comment ?? '') === String(r.params.comment) ? undefined : `group ${id} has another comment`
    }
    case 'deleteGroup':
      return stillListed(
        (await reader.accessGroups()).some((x) => x.groupid === r.groupid),
        `group ${r.groupid}`,
      )
    case 'createUser':
    case 'updateUser': {
      const id = r.call === 'createUser' ? String(r.params.userid) : r.userid
      const live = (await reader.accessUsers()).find((x) => x.userid === id)
      if (!live) return `user ${id} is not listed`
      if (r.params.comment !== undefined && (live.comment ?? '') !== String(r.params.comment))
        return `user ${id} has another comment`
      return undefined
    }
    case 'deleteUser':
      return stillListed(
        (await reader.accessUsers()).some((x) => x.userid === r.userid),
        `user ${r.userid}`,
      )
    case 'createToken':
    case 'updateToken':
    case 'deleteToken': {
      const user = (await reader.accessUsers()).find((x) => x.userid === r.userid)
      const there = user?.tokens.some((t) => t.tokenid === r.tokenid) ?? false
      if (r.call === 'deleteToken') return there ? `token ${r.userid}!${r.tokenid} is still listed` : undefined
      return there ? undefined : `token ${r.userid}!${r.tokenid} is not listed`
    }
    case 'updateAcl': {
      const path = String(r.params.path)
      const live = (await reader.acl()).filter((e) => e.path === path)
      const want = r.params.delete !== 1
      for (const [type, key] of [
        ['user', 'users'],
        ['group', 'groups'],
        ['token', 'tokens'],
      ] as const)
        for (const ugid of list(r.params[key]))
          for (const roleid of list(r.params.roles)) {
            const there = live.some((e) => e.type === type && e.ugid === ugid && e.roleid === roleid)
            if (there !== want)
              return `ACL entry ${roleid} for ${type} ${ugid} on ${path} is ${want ? 'not' : 'still'} listed`
          }
      return undefined
    }
    default:
      return undefined
  }
}

/** a delete's confirm: the object must no longer be listed */
const stillListed = (listed: boolean, what: string): string | undefined =>
  listed ? `${what} is still listed` : undefined
