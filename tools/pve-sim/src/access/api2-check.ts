/**
 * The generic per-route check: RPCEnvironment `check_api2_permissions` / `exec_api2_perm_check` over the
 * `permissions` entry apidoc.json gives every method (`user: 'all' | 'world'`, `check: [...]` with `perm`,
 * `and`, `or`, `userid-param`, `userid-group`, `perm-modify`). Runs before the parameters are validated,
 * on the raw path + query/body parameters, as pve-manager's HTTPServer `rest_handler` does.
 */
import type { ApiMethodInfo } from '../apidoc/load.js'
import { PveHttpError } from '../model/errors.js'
import { AccessState, normalizePath, permError } from './state.js'

type Params = Record<string, unknown>

/** PVE::Tools::template_replace: `{name}` -> the parameter's value */
function templateReplace(tmpl: string, params: Params): string {
  return tmpl.replace(/\{([^}]+)\}/g, (_, k: string) => {
    const v = params[k]
    return v === undefined || v === null ? '' : String(v)
  })
}

const realmOf = (userid: string): string => userid.slice(userid.lastIndexOf('@') + 1)

function userExists(a: AccessState, userid: string, noerr: boolean): boolean {
  if (a.users.has(userid)) return true
  if (noerr) return false
  throw new PveHttpError(500, `no such user ('${userid}')`)
}

/** exec_api2_perm_check: true, or false with noerr, else throws 403 */
export function execCheck(a: AccessState, check: unknown[], actor: string, params: Params, noerr = false): boolean {
  const [test, ...rest] = check
  if (test === 'and') {
    for (const sub of rest) execCheck(a, sub as unknown[], actor, params)
    return true
  }
  if (test === 'or') {
    for (const sub of rest) if (execCheck(a, sub as unknown[], actor, params, true)) return true
    if (noerr) return false
    throw permError()
  }
  if (test === 'perm') {
    const [tmpl, privs, ...optList] = rest as [string, string[], ...unknown[]]
    const opts: Record<string, unknown> = {}
    for (let i = 0; i + 1 < optList.length; i += 2) opts[String(optList[i])] = optList[i + 1]
    const req = opts.require_param
    if (typeof req === 'string' && (params[req] === undefined || params[req] === null)) {
      if (noerr) return false
      throw permError()
    }
    const path = normalizePath(templateReplace(tmpl, params)) ?? ''
    const any = opts.any !== undefined && opts.any !== 0 && opts.any !== '0'
    return any ? a.checkAny(actor, path, privs, noerr) : a.check(actor, path, privs, noerr)
  }
  if (test === 'userid-param') {
    const userid = String(params.userid ?? '')
    if (rest[0] === 'self') {
      if (!userExists(a, userid, noerr)) return false
      if (actor === userid) return true
      if (noerr) return false
      throw permError()
    }
    return a.check(actor, `/access/realm/${realmOf(userid)}`, ['Realm.AllocateUser'], noerr)
  }
  if (test === 'userid-group') {
    const [privs, ...optList] = rest as [string[], ...unknown[]]
    const groupsParam = optList[0] === 'groups_param' ? String(optList[1]) : undefined
    const userid = String(params.userid ?? '')
    const checkExisting = groupsParam !== 'create'
    if (checkExisting && !userExists(a, userid, noerr)) return false
    // any of the privileges on /access/groups reaches every group and so every user
    if (a.checkAny(actor, '/access/groups', privs, true)) return true
    const groups = a.filterGroups(actor, privs)
    if (groupsParam !== undefined) {
      // every group the request names must be one of them (none named: only the global check would do)
      const named = String(params.groups ?? '')
        .split(/[,;\s]+/)
        .filter(Boolean)
      if (named.length === 0) throw permError(`/access/groups, ${privs.join('|')}`)
      for (const g of named) if (!groups.includes(g)) throw permError(`/access/groups/${g}, ${privs.join('|')}`)
    }
    // and an existing user must be a member of one of them
    if (checkExisting && !a.groupMemberJoin(groups).has(userid)) {
      if (noerr) return false
      throw permError()
    }
    return true
  }
  if (test === 'perm-modify') {
    const path = normalizePath(templateReplace(String(rest[0]), params))
    if (path === undefined) return false
    return a.checkPermModify(actor, path, noerr)
  }
  throw new Error(`pve-sim: unknown permission test ${JSON.stringify(test)}`)
}

/** check_api2_permissions; `actor` undefined = not logged in */
export function checkApi2Permissions(
  a: AccessState,
  perm: ApiMethodInfo['permissions'],
  actor: string | undefined,
  params: Params,
): void {
  if (actor === undefined) {
    if (perm?.user === 'world') return
    throw permError('user != null')
  }
  if (actor === 'root@pam') return
  if (!perm) throw permError('user != root@pam')
  if (perm.user === 'all' || perm.user === 'world') return
  if (perm.check) {
    execCheck(a, perm.check, actor, params)
    return
  }
  throw permError()
}
