/**
 * Groups and the shape of users over raw HTTP, each test naming the pve-access-control function it follows:
 * API2/Group.pm (index, create_group, read_group, update_group, delete_group), API2/User.pm (create_user,
 * update_user, read_user and index through $extract_user_data), API2/ACL.pm update_acl / read_acl with groups,
 * AccessControl::roles (a user's entry wins over its groups') and RPCEnvironment's `userid-group` check.
 */
import { afterAll, beforeAll, describe as suite, expect, it } from 'vitest'
import { apidocForTests } from '../apidoc/test-data.js'
import { startSimulator, type Simulator } from '../index.js'
import { apiRequest, okData, raw, type RawResponse } from '../http/test-support/raw.js'

// the privileges and parameters checked here come from the PVE API schema: without it the file skips
const describe = suite.skipIf(!apidocForTests())

let sim: Simulator
let root: Record<string, string>
const call = (
  auth: Record<string, string>,
  method: string,
  path: string,
  params?: Record<string, string>,
): Promise<RawResponse> => {
  return apiRequest(sim, auth, method, path, params)
}
/** a JSON body: the way to send an empty string (a form's `key=` decodes to undef, as in PVE) */
const callJson = (method: string, path: string, body: Record<string, string>): Promise<RawResponse> =>
  raw(sim, method, `/api2/json${path}`, {
    headers: { ...root, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  })
const ok = okData
const failure = (r: RawResponse): [number, string, unknown] => {
  const j = r.json as { message: string; errors?: unknown }
  return [r.status, j.message, j.errors]
}
async function tokenOf(userid: string): Promise<Record<string, string>> {
  const t = await ok<{ 'full-tokenid': string; value: string }>(
    call(root, 'POST', `/access/users/${encodeURIComponent(userid)}/token/tk`, { privsep: '0' }),
  )
  return { Authorization: `PVEAPIToken=${t['full-tokenid']}=${t.value}` }
}

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 10, resourcesLagMs: 0, log: () => {} })
  root = { Authorization: sim.token.header }
})
afterAll(async () => {
  await sim.close()
})

describe('API2/Group.pm create_group / index / read_group / update_group / delete_group', () => {
  it('create, list (users always a string), read (members), update the comment, delete', async () => {
    await ok(call(root, 'POST', '/access/groups', { groupid: 'ops', comment: 'operators' }))
    await ok(call(root, 'POST', '/access/groups', { groupid: 'empty' }))
    expect(failure(await call(root, 'POST', '/access/groups', { groupid: 'ops' }))).toEqual([
      500,
      "create group failed: group 'ops' already exists\n",
      undefined,
    ])
    expect((await call(root, 'POST', '/access/groups', { groupid: 'bad/name' })).status).toBe(400)
    expect(await ok(call(root, 'GET', '/access/groups'))).toEqual([
      { groupid: 'empty', users: '' },
      { groupid: 'ops', comment: 'operators', users: '' },
    ])
    expect(await ok(call(root, 'GET', '/access/groups/ops'))).toEqual({ members: [], comment: 'operators' })
    await ok(call(root, 'PUT', '/access/groups/ops', { comment: 'on call' }))
    expect(await ok(call(root, 'GET', '/access/groups/ops'))).toEqual({ members: [], comment: 'on call' })
    expect(failure(await call(root, 'GET', '/access/groups/nope'))).toEqual([
      500,
      "group 'nope' does not exist\n",
      undefined,
    ])
    expect(failure(await call(root, 'PUT', '/access/groups/nope', { comment: 'x' }))[1]).toBe(
      "update group failed: group 'nope' does not exist\n",
    )
    await ok(call(root, 'DELETE', '/access/groups/empty'))
    expect(failure(await call(root, 'DELETE', '/access/groups/empty'))[1]).toBe(
      "delete group failed: group 'empty' does not exist\n",
    )
  })
})

describe('API2/User.pm create_user / update_user: groups', () => {
  it('an unknown group fails and nothing is written; groups replace or (append) add; members follow', async () => {
    expect(failure(await call(root, 'POST', '/access/users', { userid: 'ann@pve', groups: 'ops,ghosts' }))).toEqual([
      500,
      "create user failed: no such group 'ghosts'\n",
      undefined,
    ])
    expect((await call(root, 'GET', '/access/users/ann@pve')).status).toBe(500)
    await ok(call(root, 'POST', '/access/users', { userid: 'ann@pve', groups: 'ops' }))
    await ok(call(root, 'POST', '/access/groups', { groupid: 'dev' }))
    expect(failure(await call(root, 'PUT', '/access/users/ann@pve', { groups: 'dev,ghosts' }))[1]).toBe(
      "update user failed: no such group 'ghosts'\n",
    )
    expect((await ok<{ groups: string[] }>(call(root, 'GET', '/access/users/ann@pve'))).groups).toEqual(['ops'])
    await ok(call(root, 'PUT', '/access/users/ann@pve', { groups: 'dev', append: '1' }))
    expect((await ok<{ groups: string[] }>(call(root, 'GET', '/access/users/ann@pve'))).groups).toEqual(['dev', 'ops'])
    expect(await ok(call(root, 'GET', '/access/groups/dev'))).toEqual({ members: ['ann@pve'] })
    await ok(call(root, 'PUT', '/access/users/ann@pve', { groups: 'dev' }))
    expect((await ok<{ groups: string[] }>(call(root, 'GET', '/access/users/ann@pve'))).groups).toEqual(['dev'])
    // a form's empty `groups=` is undef and changes nothing; an empty list without append leaves every group
    await ok(call(root, 'PUT', '/access/users/ann@pve', { groups: '' }))
    expect((await ok<{ groups: string[] }>(call(root, 'GET', '/access/users/ann@pve'))).groups).toEqual(['dev'])
    await ok(callJson('PUT', '/access/users/ann@pve', { groups: '' }))
    expect((await ok<{ groups: string[] }>(call(root, 'GET', '/access/users/ann@pve'))).groups).toEqual([])
    // a token (even root's) meets the `userid-group` check's check_user_exist before the handler's own
    expect(failure(await call(root, 'PUT', '/access/users/nobody@pve', { comment: 'x' }))[1]).toBe(
      "no such user ('nobody@pve')\n",
    )
  })
})

describe('API2/User.pm read_user and index: $extract_user_data', () => {
  it('read_user has groups and tokens (null without any), no userid or realm-type; the index differs', async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'bob@pve', groups: 'ops,dev', comment: 'on call' }))
    expect(await ok(call(root, 'GET', '/access/users/bob@pve'))).toEqual({
      enable: 1,
      expire: 0,
      // user.cfg keeps the empty email field before a comment, and parse_user_config reads it back as ''
      email: '',
      comment: 'on call',
      groups: ['dev', 'ops'],
      tokens: null,
    })
    await ok(call(root, 'POST', '/access/users/bob@pve/token/ci', { privsep: '1', comment: 'pipeline' }))
    expect((await ok<{ tokens: unknown }>(call(root, 'GET', '/access/users/bob@pve'))).tokens).toEqual({
      ci: { privsep: 1, expire: 0, comment: 'pipeline' },
    })
    const list = await ok<Record<string, unknown>[]>(call(root, 'GET', '/access/users'))
    expect(list.find((u) => u.userid === 'bob@pve')).toEqual({
      userid: 'bob@pve',
      enable: 1,
      expire: 0,
      email: '',
      comment: 'on call',
      'realm-type': 'pve',
    })
    const full = await ok<Record<string, unknown>[]>(call(root, 'GET', '/access/users', { full: '1' }))
    expect(full.find((u) => u.userid === 'bob@pve')).toMatchObject({
      groups: 'dev,ops',
      tokens: [{ tokenid: 'ci', privsep: 1, expire: 0, comment: 'pipeline' }],
    })
    expect(full.find((u) => u.userid === 'ann@pve')).toMatchObject({ groups: '', tokens: null })
  })

  it('text fields that are false in Perl (empty, "0") read back as unset', async () => {
    await ok(callJson('PUT', '/access/users/bob@pve', { comment: '', firstname: '0', lastname: 'Builder' }))
    const u = await ok<Record<string, unknown>>(call(root, 'GET', '/access/users/bob@pve'))
    expect(u).toMatchObject({ lastname: 'Builder' })
    expect(u).not.toHaveProperty('comment')
    expect(u).not.toHaveProperty('firstname')
    expect(u).not.toHaveProperty('email')
  })
})

describe('API2/ACL.pm update_acl / read_acl with groups; AccessControl::roles', () => {
  it('a group ACL gives its members the role; a user entry on the same path wins; an unknown group fails', async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'cara@pve', groups: 'ops' }))
    const cara = await tokenOf('cara@pve')
    expect((await call(cara, 'GET', '/nodes/pve1/status')).status).toBe(403)
    await ok(call(root, 'PUT', '/access/acl', { path: '/nodes', roles: 'PVEAuditor', groups: 'ops' }))
    expect((await call(cara, 'GET', '/nodes/pve1/status')).status).toBe(200)
    const entries = await ok<Record<string, unknown>[]>(call(root, 'GET', '/access/acl'))
    expect(entries).toContainEqual({ path: '/nodes', type: 'group', ugid: 'ops', roleid: 'PVEAuditor', propagate: 1 })
    // the user's own entry on a deeper path replaces what the group gives there
    await ok(call(root, 'PUT', '/access/acl', { path: '/nodes/pve1', roles: 'NoAccess', users: 'cara@pve' }))
    expect((await call(cara, 'GET', '/nodes/pve1/status')).status).toBe(403)
    expect((await call(cara, 'GET', '/nodes/pve2/status')).status).toBe(200)
    // nothing is written when one of the groups does not exist
    expect(
      failure(await call(root, 'PUT', '/access/acl', { path: '/vms', roles: 'PVEAuditor', groups: 'dev,ghosts' })),
    ).toEqual([500, "ACL update failed: group 'ghosts' does not exist\n", undefined])
    expect((await ok<{ path: string }[]>(call(root, 'GET', '/access/acl'))).map((e) => e.path)).not.toContain('/vms')
  })

  it("delete_group takes the group's ACLs (delete_group_acl); delete_user leaves its groups", async () => {
    await ok(call(root, 'POST', '/access/groups', { groupid: 'temp' }))
    await ok(call(root, 'POST', '/access/users', { userid: 'dan@pve', groups: 'temp' }))
    await ok(call(root, 'PUT', '/access/acl', { path: '/storage', roles: 'PVEAuditor', groups: 'temp' }))
    await ok(call(root, 'DELETE', '/access/users/dan@pve'))
    expect(await ok(call(root, 'GET', '/access/groups/temp'))).toEqual({ members: [] })
    await ok(call(root, 'DELETE', '/access/groups/temp'))
    const paths = (await ok<{ ugid: string }[]>(call(root, 'GET', '/access/acl'))).map((e) => e.ugid)
    expect(paths).not.toContain('temp')
  })
})

describe("RPCEnvironment `userid-group` and the indexes' group filters", () => {
  it('User.Modify on one group: its members are listed and readable, edits must name only that group', async () => {
    await ok(call(root, 'POST', '/access/users', { userid: 'lead@pve' }))
    const lead = await tokenOf('lead@pve')
    await ok(call(root, 'PUT', '/access/acl', { path: '/access/groups/dev', roles: 'PVEUserAdmin', users: 'lead@pve' }))
    await ok(call(root, 'PUT', '/access/users/ann@pve', { groups: 'dev' }))
    const seen = (await ok<{ userid: string }[]>(call(lead, 'GET', '/access/users'))).map((u) => u.userid)
    // ann and bob are in dev; cara (ops only) is not listed
    expect(seen.sort()).toEqual(['ann@pve', 'bob@pve', 'lead@pve'])
    expect((await ok<{ groupid: string }[]>(call(lead, 'GET', '/access/groups'))).map((g) => g.groupid)).toEqual([
      'dev',
    ])
    // update_user's `groups_param => 'update'`: without groups, only a global User.Modify will do
    expect(failure(await call(lead, 'PUT', '/access/users/ann@pve', { comment: 'team' }))).toEqual([
      403,
      'Permission check failed (/access/groups, User.Modify)\n',
      undefined,
    ])
    expect((await call(lead, 'PUT', '/access/users/ann@pve', { comment: 'team', groups: 'dev' })).status).toBe(200)
    expect(failure(await call(lead, 'PUT', '/access/users/bob@pve', { comment: 'x', groups: 'ops' }))).toEqual([
      403,
      'Permission check failed (/access/groups/ops, User.Modify)\n',
      undefined,
    ])
    expect((await call(lead, 'GET', '/access/users/cara@pve')).status).toBe(403)
  })
})
