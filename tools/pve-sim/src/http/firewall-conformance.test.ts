/**
 * Guest firewall over raw HTTP, each test named after the pve-firewall function it follows: PVE::API2::Firewall
 * RulesBase (create_rule, update_rule with moveto, delete_rule), VMBase (get_options / set_options), IPSetBase /
 * BaseIPSetList, AliasesBase; PVE::Firewall verify_rule, parse_port_name_number_or_range, parse_address_list,
 * generic_fw_config_parser / save_vmfw_conf; qemu-server clone_vm (clone_vmfw_conf) and destroy_vm
 * (remove_vmfw_conf).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { apidocForTests, startSimulator, type Simulator } from '../index.js'
import { form, raw, waitTask, type RawResponse } from './test-support/raw.js'

let sim: Simulator
const req = (method: string, path: string, params?: Record<string, string>): Promise<RawResponse> => {
  const headers = { Authorization: sim.token.header }
  if (!params) return raw(sim, method, `/api2/json${path}`, { headers })
  if (method === 'GET' || method === 'DELETE') {
    return raw(sim, method, `/api2/json${path}?${new URLSearchParams(params).toString()}`, { headers })
  }
  const f = form(params)
  return raw(sim, method, `/api2/json${path}`, { headers: { ...headers, ...f.headers }, body: f.body })
}
const data = <T>(r: RawResponse): T => (r.json as { data: T }).data
const answer = (r: RawResponse) => ({
  status: r.status,
  message: (r.json as { message?: string } | undefined)?.message,
  errors: (r.json as { errors?: unknown } | undefined)?.errors,
})
const FW = '/nodes/pve1/qemu/300/firewall'
type Row = Record<string, unknown>
const rules = async (base = FW): Promise<Row[]> => data<Row[]>(await req('GET', `${base}/rules`))
const brief = (list: Row[]) => list.map((r) => r.comment)

async function ok(r: Promise<RawResponse>): Promise<void> {
  const res = await r
  expect(res.status, res.body).toBe(200)
}

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 20, resourcesLagMs: 0, log: () => {} })
  const res = await req('POST', '/nodes/pve1/qemu', { vmid: '300', name: 'fw', memory: '512' })
  await waitTask(sim, { Authorization: sim.token.header }, 'pve1', data<string>(res))
})
afterAll(async () => {
  await sim.close()
})

describe('PVE::API2::Firewall::RulesBase', () => {
  it('create_rule puts the new rule first whatever pos says, enable defaults to 0, macro names take their preferred case', async () => {
    await ok(req('POST', `${FW}/rules`, { type: 'in', action: 'ACCEPT', macro: 'ssh', comment: 'a', enable: '1' }))
    await ok(
      req('POST', `${FW}/rules`, { type: 'in', action: 'DROP', proto: 'tcp', dport: '80', comment: 'b', pos: '1' }),
    )
    const list = await rules()
    expect(list).toEqual([
      {
        pos: 0,
        type: 'in',
        action: 'DROP',
        proto: 'tcp',
        dport: '80',
        enable: 0,
        comment: 'b',
        digest: expect.stringMatching(/^[0-9a-f]{40}$/),
      },
      { pos: 1, type: 'in', action: 'ACCEPT', macro: 'SSH', enable: 1, comment: 'a', digest: list[0]?.digest },
    ])
    expect(sim.control.firewallText(300)).toBe('[RULES]\n\n|IN DROP -p tcp -dport 80 # b\nIN SSH(ACCEPT) # a\n\n')
  })

  it('update_rule with moveto takes the rule out and puts it before the rule that was at moveto (pos+1 moves nothing)', async () => {
    await ok(req('POST', `${FW}/rules`, { type: 'out', action: 'ACCEPT', comment: 'c', enable: '1' }))
    expect(brief(await rules())).toEqual(['c', 'b', 'a'])
    await ok(req('PUT', `${FW}/rules/0`, { moveto: '1' }))
    expect(brief(await rules())).toEqual(['c', 'b', 'a'])
    await ok(req('PUT', `${FW}/rules/0`, { moveto: '2' }))
    expect(brief(await rules())).toEqual(['b', 'c', 'a'])
    await ok(req('PUT', `${FW}/rules/0`, { moveto: '99' }))
    expect(brief(await rules())).toEqual(['c', 'a', 'b'])
    await ok(req('PUT', `${FW}/rules/2`, { moveto: '0' }))
    expect(brief(await rules())).toEqual(['b', 'c', 'a'])
  })

  it('update_rule and delete_rule check the list digest (assert_if_modified); a wrong position dies', async () => {
    const digest = String((await rules())[0]?.digest)
    expect(answer(await req('PUT', `${FW}/rules/0`, { comment: 'x', digest: 'f'.repeat(40) }))).toMatchObject({
      status: 500,
      message: 'detected modified configuration - file changed by other user? Try again.\n',
    })
    await ok(req('PUT', `${FW}/rules/0`, { comment: 'b2', enable: '1', delete: 'dport', digest }))
    expect((await rules())[0]).toMatchObject({ comment: 'b2', enable: 1, proto: 'tcp' })
    expect((await rules())[0]).not.toHaveProperty('dport')
    expect(answer(await req('DELETE', `${FW}/rules/0`, { digest }))).toMatchObject({ status: 500 })
    expect(answer(await req('GET', `${FW}/rules/7`))).toMatchObject({ status: 500, message: 'no rule at position 7\n' })
    expect(answer(await req('PUT', `${FW}/rules/0`, { delete: 'action' }))).toMatchObject({
      status: 400,
      errors: { delete: "unable to delete required property 'action'" },
    })
    const fresh = String((await rules())[0]?.digest)
    await ok(req('DELETE', `${FW}/rules/0`, { digest: fresh }))
    expect(brief(await rules())).toEqual(['c', 'a'])
  })

  it('verify_rule refuses unknown macros, ports without a protocol, contradictions of the macro, unknown ipsets and aliases', async () => {
    const post = (p: Record<string, string>) => req('POST', `${FW}/rules`, { type: 'in', action: 'ACCEPT', ...p })
    expect(answer(await post({ macro: 'NoSuch' })).errors).toEqual({ macro: "unknown macro 'NoSuch'" })
    expect(answer(await post({ dport: '22' })).errors).toEqual({
      proto: "missing property - 'dport' requires this property",
    })
    expect(answer(await post({ proto: 'icmp', sport: '22' })).errors).toEqual({
      sport: "protocol 'icmp' does not support ports",
    })
    expect(answer(await post({ macro: 'SSH', proto: 'tcp', dport: '2222' })).errors).toEqual({
      dport: "parameter 'dport' already define in macro (value = '22')",
    })
    expect(answer(await post({ source: '+nosuch' })).errors).toEqual({ source: "no such ipset 'nosuch'" })
    expect(answer(await post({ dest: 'nosuch' })).errors).toEqual({ dest: "no such alias 'nosuch'" })
    expect(answer(await post({ iface: 'eth0' })).errors).toEqual({
      iface: "value does not match the regex pattern 'net\\d+'",
    })
    expect(answer(await post({ type: 'in', action: 'MAYBE' })).errors).toEqual({ action: "unknown action 'MAYBE'" })
  })

  // the format checks run in the schema-driven HTTP layer: without the API schema the handler's own check answers
  it.skipIf(!apidocForTests())(
    'the formats check ports and addresses before the handler (parse_port_name_number_or_range, parse_address_list)',
    async () => {
      const post = (p: Record<string, string>) => req('POST', `${FW}/rules`, { type: 'in', action: 'ACCEPT', ...p })
      expect(answer(await post({ proto: 'tcp', dport: '90:80' })).errors).toEqual({
        dport: "invalid format - backwards range '90:80' not allowed, did you mean '80:90'?\n",
      })
      expect(answer(await post({ proto: 'tcp', dport: 'nosuchservice' })).errors).toEqual({
        dport: "invalid format - invalid port 'nosuchservice'\n",
      })
      expect(answer(await post({ source: '10.0.0.1,fe80::1' })).errors).toEqual({
        source: "invalid format - detected mixed ipv4/ipv6 addresses in address list '10.0.0.1,fe80::1'\n",
      })
      expect(answer(await post({ proto: 'nosuchproto' })).errors).toEqual({
        proto: "invalid format - unknown protocol 'nosuchproto'\n",
      })
      await ok(post({ proto: 'tcp', dport: 'ssh,https,8000:8080', source: '10.0.0.0/8', comment: 'svc' }))
      expect((await rules())[0]).toMatchObject({ dport: 'ssh,https,8000:8080', ipversion: 4, enable: 0 })
    },
  )
})

describe('PVE::API2::Firewall::IPSetBase / BaseIPSetList and AliasesBase', () => {
  const BASE = '/nodes/pve1/lxc/301/firewall'
  it('ipset names are lower-cased by the config parser; entries are cleaned, sorted by cidr, /32 dropped', async () => {
    await ok(req('POST', `${BASE}/ipset`, { name: 'WebServers', comment: 'front' }))
    expect(data<Row[]>(await req('GET', `${BASE}/ipset`))).toEqual([
      { name: 'webservers', comment: 'front', digest: expect.stringMatching(/^[0-9a-f]{40}$/) },
    ])
    expect(answer(await req('POST', `${BASE}/ipset/WebServers`, { cidr: '10.0.0.1' }))).toMatchObject({
      status: 500,
      message: "no such IPSet 'WebServers'\n",
    })
    await ok(req('POST', `${BASE}/ipset/webservers`, { cidr: '10.0.0.5/24', comment: 'lan' }))
    await ok(req('POST', `${BASE}/ipset/webservers`, { cidr: '10.0.0.9/32', nomatch: '1' }))
    expect(answer(await req('POST', `${BASE}/ipset/webservers`, { cidr: '10.0.0.0/24' })).errors).toEqual({
      cidr: "address '10.0.0.0/24' already exists",
    })
    const entries = data<Row[]>(await req('GET', `${BASE}/ipset/webservers`))
    expect(entries.map(({ digest: _d, ...e }) => e)).toEqual([
      { cidr: '10.0.0.0/24', comment: 'lan' },
      { cidr: '10.0.0.9', nomatch: 1 },
    ])
    // update_ip sets nomatch and comment from the request: what is not sent is cleared
    await ok(req('PUT', `${BASE}/ipset/webservers/10.0.0.0%2F24`, { nomatch: '1', digest: String(entries[0]?.digest) }))
    expect(data<Row>(await req('GET', `${BASE}/ipset/webservers/10.0.0.0%2F24`))).toMatchObject({
      cidr: '10.0.0.0/24',
      nomatch: 1,
    })
    expect(data<Row>(await req('GET', `${BASE}/ipset/webservers/10.0.0.0%2F24`))).not.toHaveProperty('comment')
    expect(answer(await req('DELETE', `${BASE}/ipset/webservers`))).toMatchObject({
      status: 500,
      message: "IPSet 'webservers' is not empty\n",
    })
    await ok(req('DELETE', `${BASE}/ipset/webservers/10.0.0.9`))
    expect(data<Row[]>(await req('GET', `${BASE}/ipset/webservers`))).toHaveLength(1)
  })

  it('aliases: name kept as written, looked up case-insensitively, ipversion from the cidr, rename and digest', async () => {
    await ok(req('POST', `${BASE}/aliases`, { name: 'DbHost', cidr: '10.1.0.7/32', comment: 'db' }))
    expect(answer(await req('POST', `${BASE}/aliases`, { name: 'dbhost', cidr: '10.1.0.8' })).errors).toEqual({
      name: "alias 'dbhost' already exists",
    })
    const list = data<Row[]>(await req('GET', `${BASE}/aliases`))
    expect(list).toEqual([
      {
        name: 'DbHost',
        cidr: '10.1.0.7',
        ipversion: 4,
        comment: 'db',
        digest: expect.stringMatching(/^[0-9a-f]{40}$/),
      },
    ])
    expect(
      answer(await req('PUT', `${BASE}/aliases/dbhost`, { cidr: 'fd00::7', digest: '0'.repeat(40) })),
    ).toMatchObject({ status: 500 })
    await ok(req('PUT', `${BASE}/aliases/dbhost`, { cidr: 'fd00::7', rename: 'db6', digest: String(list[0]?.digest) }))
    expect(data<Row[]>(await req('GET', `${BASE}/aliases`)).map(({ digest: _d, ...a }) => a)).toEqual([
      { name: 'db6', cidr: 'fd00::7', ipversion: 6 },
    ])
    // a rule may name the alias in any case; an ipset entry may name it too
    await ok(req('POST', `${BASE}/rules`, { type: 'in', action: 'ACCEPT', source: 'DB6', enable: '1' }))
    expect((await rules(BASE))[0]).toMatchObject({ source: 'DB6', ipversion: 6 })
    await ok(req('POST', `${BASE}/ipset/webservers`, { cidr: 'db6' }))
    expect(answer(await req('POST', `${BASE}/ipset/webservers`, { cidr: 'dc/db6' }))).toMatchObject({
      status: 500,
      message: "no such alias 'db6'\n",
    })
  })
})

describe('VMBase get_options / set_options', () => {
  it('booleans are stored 0/1, delete removes, the object digest is checked', async () => {
    const O = '/nodes/pve1/qemu/302/firewall/options'
    const empty = data<Row>(await req('GET', O))
    expect(Object.keys(empty)).toEqual(['digest'])
    await ok(req('PUT', O, { enable: '1', policy_in: 'DROP', log_level_in: 'info', macfilter: '0' }))
    const opts = data<Row>(await req('GET', O))
    expect(opts).toEqual({
      enable: 1,
      policy_in: 'DROP',
      log_level_in: 'info',
      macfilter: 0,
      digest: expect.any(String),
    })
    expect(answer(await req('PUT', O, { delete: 'policy_in', digest: String(empty.digest) }))).toMatchObject({
      status: 500,
    })
    expect(answer(await req('PUT', O, { delete: 'nosuch' })).errors).toEqual({ delete: "no such option 'nosuch'" })
    await ok(req('PUT', O, { delete: 'policy_in,macfilter', digest: String(opts.digest) }))
    expect(data<Row>(await req('GET', O))).toMatchObject({ enable: 1, log_level_in: 'info' })
    expect(sim.control.firewallText(302)).toBe('[OPTIONS]\n\nenable: 1\nlog_level_in: info\n\n')
    expect(answer(await req('GET', '/nodes/nosuch/qemu/302/firewall/options')).status).toBe(500)
  })
})

describe('qemu-server clone_vm / destroy_vm', () => {
  it('a clone gets a copy of the source firewall; destroy removes the guest firewall', async () => {
    const h = { Authorization: sim.token.header }
    await waitTask(sim, h, 'pve1', data<string>(await req('POST', '/nodes/pve1/qemu/300/clone', { newid: '310' })))
    expect(brief(await rules('/nodes/pve1/qemu/310/firewall'))).toEqual(brief(await rules()))
    await waitTask(sim, h, 'pve1', data<string>(await req('DELETE', '/nodes/pve1/qemu/310')))
    expect(await rules('/nodes/pve1/qemu/310/firewall')).toEqual([])
    expect(sim.control.firewallText(310)).toBeUndefined()
  })
})
