/**
 * What ProxOps' access writes meet (issue 40), each test naming the pve-access-control function it follows:
 * PVE::API2::User generate_token (expire) with PVE::AccessControl write_user_config, PVE::API2::Role delete_role
 * with parse_user_config ('ignore invalid acl role'), PVE::AccessControl check_path, PVE::API2::User delete_user
 * (delete_user_group, delete_user_acl, its tokens), PVE::API2::Group delete_group (delete_group_acl).
 */
import { afterAll, beforeAll, describe as suite, expect, it } from 'vitest'
import { apidocForTests } from '../apidoc/test-data.js'
import { startSimulator, type Simulator } from '../index.js'
import { apiRequest, okData, type RawResponse } from '../http/test-support/raw.js'

const describe = suite.skipIf(!apidocForTests())

let sim: Simulator
let root: Record<string, string>
const call = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> =>
  apiRequest(sim, root, method, path, params)
const acl = () => okData<{ path: string; type: string; ugid: string; roleid: string }[]>(call('GET', '/access/acl'))

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 10, resourcesLagMs: 0, log: () => {} })
  root = { Authorization: sim.token.header }
})
afterAll(async () => {
  await sim.close()
})

describe('access writes', () => {
  it("generate_token: a token without `expire` never expires (write_user_config stores `expire || 0`), whatever its user's", async () => {
    await okData(call('POST', '/access/users', { userid: 'exp@pve', expire: '4102444800' }))
    await okData(call('POST', '/access/users/exp@pve/token/t1', {}))
    await okData(call('POST', '/access/users/exp@pve/token/t2', { expire: '4000000000' }))
    const tokens = await okData<{ tokenid: string; expire: number }[]>(call('GET', '/access/users/exp@pve/token'))
    expect(tokens.map((t) => [t.tokenid, t.expire])).toEqual([
      ['t1', 0],
      ['t2', 4000000000],
    ])
  })

  it("delete_role: the entries naming it are gone on the next read (parse_user_config 'ignore invalid acl role'), groups' too", async () => {
    await okData(call('POST', '/access/roles', { roleid: 'gone', privs: 'VM.Audit' }))
    await okData(call('POST', '/access/groups', { groupid: 'g' }))
    await okData(call('POST', '/access/users', { userid: 'u@pve' }))
    await okData(call('PUT', '/access/acl', { path: '/vms', roles: 'gone', groups: 'g', users: 'u@pve' }))
    expect((await acl()).filter((e) => e.roleid === 'gone').map((e) => e.type)).toEqual(['user', 'group'])
    await okData(call('DELETE', '/access/roles/gone'))
    expect((await acl()).filter((e) => e.roleid === 'gone')).toEqual([])
  })

  it("delete_user: its tokens, group memberships and ACL entries (its own and its tokens') go with it", async () => {
    await okData(call('POST', '/access/users', { userid: 'del@pve', groups: 'g' }))
    await okData(call('POST', '/access/users/del@pve/token/tk', {}))
    await okData(call('PUT', '/access/acl', { path: '/', roles: 'PVEAuditor', users: 'del@pve', tokens: 'del@pve!tk' }))
    await okData(call('DELETE', '/access/users/del@pve'))
    expect((await acl()).filter((e) => e.ugid.startsWith('del@pve'))).toEqual([])
    const groups = await okData<{ groupid: string; users: string }[]>(call('GET', '/access/groups'))
    expect(groups.find((g) => g.groupid === 'g')?.users).toBe('')
  })

  it('delete_group: delete_group_acl removes its entries; its members stay', async () => {
    await okData(call('PUT', '/access/acl', { path: '/storage', roles: 'PVEAuditor', groups: 'g' }))
    await okData(call('DELETE', '/access/groups/g'))
    expect((await acl()).filter((e) => e.type === 'group')).toEqual([])
    const users = await okData<{ userid: string }[]>(call('GET', '/access/users'))
    expect(users.some((u) => u.userid === 'u@pve')).toBe(true)
  })

  it('check_path: /sdn/dns, fabrics, ipams, prefix-lists and route-maps ids are alphanumeric; controllers also take - and _', async () => {
    const put = (path: string) => call('PUT', '/access/acl', { path, roles: 'PVEAuditor', users: 'u@pve' })
    expect((await put('/sdn/dns/pdns1')).status).toBe(200)
    expect((await put('/sdn/dns/p-dns')).status).toBe(400)
    expect((await put('/sdn/ipams/a_b')).status).toBe(400)
    expect((await put('/sdn/controllers/evpn-1_a')).status).toBe(200)
    expect((await put('/vms/99')).status).toBe(400)
  })
})
