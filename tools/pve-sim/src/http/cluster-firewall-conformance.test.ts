/**
 * The cluster firewall over raw HTTP, and how guests' rules name what it holds, each test named after the
 * pve-firewall function it follows: PVE::API2::Firewall::ClusterIPSetList / ClusterIPset, ClusterAliases,
 * Groups (create_security_group), GroupRules (delete_security_group and the RulesBase handlers), ClusterRules,
 * Cluster (get_options / set_options, refs), VMBase refs; PVE::Firewall verify_rule, resolve_alias,
 * generic_fw_config_parser / save_clusterfw_conf, parse_clusterfw_option; PVE::Firewall::Helpers collect_refs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSimulator, type Simulator } from '../index.js'
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
type Row = Record<string, unknown>
const DC = '/cluster/firewall'
const VM = '/nodes/pve1/qemu/400/firewall'
const CT = '/nodes/pve1/lxc/401/firewall'
const noDigest = (list: Row[]) => list.map(({ digest: _d, ...r }) => r)

async function ok(r: Promise<RawResponse>): Promise<void> {
  const res = await r
  expect(res.status, res.body).toBe(200)
}
const rule = (base: string, p: Record<string, string>) => req('POST', `${base}/rules`, { enable: '1', ...p })

beforeAll(async () => {
  sim = await startSimulator({ authFailureDelayMs: 0, taskDurationMs: 20, resourcesLagMs: 0, log: () => {} })
  const res = await req('POST', '/nodes/pve1/qemu', { vmid: '400', name: 'fw', memory: '512' })
  await waitTask(sim, { Authorization: sim.token.header }, 'pve1', data<string>(res))
})
afterAll(async () => {
  await sim.close()
})

describe('ClusterIPSetList / ClusterIPset and verify_rule', () => {
  it('a guest rule naming +dc/<set> resolves against cluster.fw; an unknown set is refused', async () => {
    await ok(req('POST', `${DC}/ipset`, { name: 'Web', comment: 'front ends' }))
    await ok(req('POST', `${DC}/ipset/web`, { cidr: '10.1.0.5/24' }))
    expect(noDigest(data<Row[]>(await req('GET', `${DC}/ipset`)))).toEqual([{ name: 'web', comment: 'front ends' }])
    expect(noDigest(data<Row[]>(await req('GET', `${DC}/ipset/web`)))).toEqual([{ cidr: '10.1.0.0/24' }])
    await ok(rule(VM, { type: 'in', action: 'ACCEPT', source: '+dc/web', comment: 'from web' }))
    expect(answer(await rule(VM, { type: 'in', action: 'ACCEPT', source: '+dc/nosuch' })).errors).toEqual({
      source: "no such ipset 'nosuch'",
    })
  })

  it('verify_rule asks both files whatever the prefix says: +guest/<set> finds a cluster set too', async () => {
    await ok(rule(VM, { type: 'out', action: 'ACCEPT', dest: '+guest/web', comment: 'quirk' }))
    await ok(req('POST', `${VM}/ipset`, { name: 'own' }))
    await ok(rule(VM, { type: 'out', action: 'DROP', dest: '+dc/own', comment: 'quirk2' }))
    // at the cluster level the guest's sets are not visible
    expect(answer(await rule(DC, { type: 'in', action: 'ACCEPT', source: '+own' })).errors).toEqual({
      source: "no such ipset 'own'",
    })
  })

  it('delete_ipset refuses only a set with entries (force empties it); a rule still naming it is not checked', async () => {
    expect(answer(await req('DELETE', `${DC}/ipset/web`))).toMatchObject({
      status: 500,
      message: "IPSet 'web' is not empty\n",
    })
    await ok(req('DELETE', `${DC}/ipset/web`, { force: '1' }))
    expect(answer(await req('GET', `${DC}/ipset/web`))).toMatchObject({ status: 500, message: "no such IPSet 'web'\n" })
    // the guest's rule stays; the parser now flags it (and pve-firewall skips it when compiling)
    const rules = data<Row[]>(await req('GET', `${VM}/rules`))
    const fromWeb = rules.find((r) => r.comment === 'from web')
    expect(fromWeb).toMatchObject({ source: '+dc/web', errors: { source: "no such ipset 'web'" } })
    expect(sim.control.firewallText(400)).toContain('IN ACCEPT -source +dc/web # from web')
  })
})

describe('ClusterAliases and resolve_alias', () => {
  it('a guest rule naming dc/<alias> takes the cluster alias and its IP version; remove_alias is never refused', async () => {
    await ok(req('POST', `${DC}/aliases`, { name: 'Gw6', cidr: 'fd00::1', comment: 'router' }))
    await ok(rule(CT, { type: 'in', action: 'ACCEPT', source: 'dc/gw6', comment: 'gw' }))
    expect(data<Row[]>(await req('GET', `${CT}/rules`))[0]).toMatchObject({ source: 'dc/gw6', ipversion: 6 })
    // dc/ names the cluster's alias even when the guest has one of the same name
    await ok(req('POST', `${CT}/aliases`, { name: 'gw6', cidr: '10.9.9.9' }))
    await ok(rule(CT, { type: 'in', action: 'ACCEPT', source: 'dc/gw6', proto: 'icmpv6', comment: 'v6' }))
    expect(answer(await rule(CT, { type: 'in', action: 'ACCEPT', source: 'gw6', proto: 'icmpv6' }))).toMatchObject({
      status: 500,
      message: 'detected mixed ipv4/ipv6 addresses in rule\n',
    })
    await ok(req('DELETE', `${CT}/aliases/gw6`))
    await ok(req('DELETE', `${DC}/aliases/gw6`))
    expect(data<Row[]>(await req('GET', `${CT}/rules`)).find((r) => r.comment === 'gw')).toMatchObject({
      errors: { source: "no such alias 'dc/gw6'" },
    })
  })

  it('resolve_alias for ipset entries: a guest set may name dc/<alias>; a cluster set cannot name guest/<alias>', async () => {
    await ok(req('POST', `${DC}/aliases`, { name: 'db', cidr: '10.2.0.7' }))
    await ok(req('POST', `${CT}/ipset`, { name: 'dbs' }))
    await ok(req('POST', `${CT}/ipset/dbs`, { cidr: 'dc/db' }))
    expect(answer(await req('POST', `${CT}/ipset/dbs`, { cidr: 'guest/db' }))).toMatchObject({
      status: 500,
      message: "no such alias 'db'\n",
    })
    await ok(req('POST', `${DC}/ipset`, { name: 'dbs' }))
    await ok(req('POST', `${DC}/ipset/dbs`, { cidr: 'db' }))
    expect(answer(await req('POST', `${DC}/ipset/dbs`, { cidr: 'guest/db' }))).toMatchObject({
      status: 500,
      message: "no such alias 'db'\n",
    })
    expect(noDigest(data<Row[]>(await req('GET', `${CT}/ipset/dbs`)))).toEqual([{ cidr: 'dc/db' }])
  })
})

describe('Groups create_security_group / GroupRules / delete_security_group', () => {
  it('group rules are verified as rule_env group: no -i, no nested group, no REJECT on forward', async () => {
    await ok(req('POST', `${DC}/groups`, { group: 'websg', comment: 'web tier' }))
    expect(answer(await req('POST', `${DC}/groups`, { group: 'websg' })).errors).toEqual({
      group: "Security group 'websg' already exists",
    })
    const G = `${DC}/groups/websg`
    await ok(req('POST', G, { type: 'in', action: 'ACCEPT', proto: 'tcp', dport: '80', enable: '1' }))
    expect(answer(await req('POST', G, { type: 'in', action: 'ACCEPT', iface: 'net0' })).errors).toEqual({
      type: 'parameter -i not allowed for this rule type',
    })
    expect(answer(await req('POST', G, { type: 'group', action: 'other' })).errors).toEqual({
      type: "invalid rule type 'group' for rule_env 'group'",
    })
    expect(answer(await req('POST', G, { type: 'forward', action: 'REJECT' })).errors).toEqual({
      action: 'cannot define REJECT rules on forward chain',
    })
    expect(noDigest(data<Row[]>(await req('GET', G)))).toEqual([
      { pos: 0, type: 'in', action: 'ACCEPT', proto: 'tcp', dport: '80', enable: 1 },
    ])
    expect(noDigest(data<Row[]>(await req('GET', `${DC}/groups`)))).toEqual([{ group: 'websg', comment: 'web tier' }])
    expect(answer(await req('GET', `${DC}/groups/nosuch`))).toMatchObject({
      status: 500,
      message: "no such security group 'nosuch'\n",
    })
  })

  it('a guest group rule is checked by name only (verify_rule does not look the group up)', async () => {
    await ok(rule(VM, { type: 'group', action: 'websg', iface: 'net0', comment: 'sg' }))
    await ok(rule(VM, { type: 'group', action: 'nosuchgroup', comment: 'dangling' }))
    expect(data<Row[]>(await req('GET', `${VM}/rules`)).slice(0, 2)).toMatchObject([
      { type: 'group', action: 'nosuchgroup', enable: 1 },
      { type: 'group', action: 'websg', iface: 'net0' },
    ])
    expect(sim.control.firewallText(400)).toContain('GROUP websg -i net0 # sg\n')
  })

  it('delete_security_group refuses a group with rules, not a group a rule names', async () => {
    expect(answer(await req('DELETE', `${DC}/groups/websg`))).toMatchObject({
      status: 500,
      message: "Security group 'websg' is not empty\n",
    })
    const digest = String(data<Row[]>(await req('GET', `${DC}/groups/websg`))[0]?.digest)
    await ok(req('DELETE', `${DC}/groups/websg/0`, { digest }))
    await ok(req('DELETE', `${DC}/groups/websg`))
    expect(data<Row[]>(await req('GET', `${DC}/groups`))).toEqual([])
    expect(data<Row[]>(await req('GET', `${VM}/rules`)).find((r) => r.comment === 'sg')).toMatchObject({
      action: 'websg',
    })
  })

  it('a rename with the list digest points every guest and cluster group rule at the new name', async () => {
    await ok(req('POST', `${DC}/groups`, { group: 'old' }))
    await ok(req('POST', `${DC}/groups/old`, { type: 'out', action: 'DROP', enable: '1' }))
    await ok(rule(VM, { type: 'group', action: 'old', comment: 'uses old' }))
    await ok(rule(DC, { type: 'group', action: 'old', comment: 'dc uses old' }))
    const digest = String(data<Row[]>(await req('GET', `${DC}/groups`))[0]?.digest)
    expect(
      answer(await req('POST', `${DC}/groups`, { group: 'new', rename: 'old', digest: '0'.repeat(40) })),
    ).toMatchObject({
      status: 500,
      message: 'detected modified configuration - file changed by other user? Try again.\n',
    })
    await ok(req('POST', `${DC}/groups`, { group: 'new', rename: 'old', digest, comment: 'renamed' }))
    expect(noDigest(data<Row[]>(await req('GET', `${DC}/groups`)))).toEqual([{ group: 'new', comment: 'renamed' }])
    expect(noDigest(data<Row[]>(await req('GET', `${DC}/groups/new`)))).toEqual([
      { pos: 0, type: 'out', action: 'DROP', enable: 1 },
    ])
    expect(data<Row[]>(await req('GET', `${VM}/rules`)).find((r) => r.comment === 'uses old')?.action).toBe('new')
    expect(data<Row[]>(await req('GET', `${DC}/rules`)).find((r) => r.comment === 'dc uses old')?.action).toBe('new')
    expect(answer(await req('POST', `${DC}/groups`, { group: 'xx', rename: 'gone' })).errors).toEqual({
      group: "Security group 'gone' does not exist",
    })
  })
})

describe('ClusterRules (RulesBase with rule_env cluster)', () => {
  it('cluster rules may name any interface and forward; a guest rule may not', async () => {
    await ok(rule(DC, { type: 'in', action: 'ACCEPT', iface: 'vmbr0', comment: 'dc in' }))
    await ok(rule(DC, { type: 'forward', action: 'ACCEPT', comment: 'fwd' }))
    expect(answer(await rule(VM, { type: 'in', action: 'ACCEPT', iface: 'vmbr0' })).errors).toEqual({
      iface: "value does not match the regex pattern 'net\\d+'",
    })
    expect(answer(await rule(VM, { type: 'forward', action: 'ACCEPT' })).errors).toEqual({
      type: "invalid rule type 'forward' for rule_env 'vm'",
    })
  })
})

describe('save_clusterfw_conf / generic_fw_config_parser', () => {
  it('cluster.fw holds options, aliases, ipsets, rules, then [group] sections; group names are lower-cased', async () => {
    await ok(req('POST', `${DC}/groups`, { group: 'MixedCase' }))
    expect(data<Row[]>(await req('GET', `${DC}/groups`)).map((g) => g.group)).toEqual(['mixedcase', 'new'])
    await ok(req('PUT', `${DC}/options`, { policy_in: 'DROP', ebtables: '0' }))
    expect(sim.control.clusterFirewallText()).toBe(
      [
        '[OPTIONS]\n\nebtables: 0\npolicy_in: DROP\n',
        '[ALIASES]\n\ndb 10.2.0.7\n',
        '[IPSET dbs]\n\ndb\n',
        '[RULES]\n\nFORWARD ACCEPT # fwd\nIN ACCEPT -i vmbr0 # dc in\nGROUP new # dc uses old\n',
        '[group mixedcase]\n\n',
        '[group new] # renamed\n\nOUT DROP\n',
      ].join('\n') + '\n',
    )
  })

  it('set_options: an enable above 1 is the anti-lockout timestamp, read as 0 after a minute (parse_clusterfw_option)', async () => {
    await ok(req('PUT', `${DC}/options`, { enable: '2' }))
    const stamped = data<Row>(await req('GET', `${DC}/options`))
    expect(Number(stamped.enable)).toBeGreaterThan(1_000_000_000)
    sim.control.setClusterFirewallText(
      (sim.control.clusterFirewallText() ?? '').replace(/enable: \d+/, `enable: ${Number(stamped.enable) - 120}`),
    )
    expect(data<Row>(await req('GET', `${DC}/options`))).toMatchObject({ enable: 0 })
    await ok(req('PUT', `${DC}/options`, { enable: '1', delete: 'ebtables' }))
    expect(noDigest([data<Row>(await req('GET', `${DC}/options`))])).toEqual([{ enable: 1, policy_in: 'DROP' }])
    expect(answer(await req('PUT', `${DC}/options`, { delete: 'nosuch' })).errors).toEqual({
      delete: "no such option 'nosuch'",
    })
  })
})

describe('VMBase refs / Cluster refs (collect_refs)', () => {
  it("a guest lists cluster.fw's ipsets and aliases (scope dc) before its own (scope guest)", async () => {
    await ok(req('POST', `${CT}/aliases`, { name: 'Local1', cidr: '10.3.0.1', comment: 'mine' }))
    expect(data<Row[]>(await req('GET', `${CT}/refs`))).toEqual([
      { type: 'ipset', name: 'dbs', ref: '+dbs', scope: 'dc' },
      { type: 'alias', name: 'db', ref: 'db', scope: 'dc' },
      { type: 'ipset', name: 'dbs', ref: '+dbs', scope: 'guest' },
      { type: 'alias', name: 'local1', ref: 'local1', scope: 'guest', comment: 'mine' },
    ])
    expect(data<Row[]>(await req('GET', `${CT}/refs`, { type: 'alias' })).map((r) => r.scope)).toEqual(['dc', 'guest'])
    expect(data<Row[]>(await req('GET', `${DC}/refs`))).toEqual([
      { type: 'ipset', name: 'dbs', ref: '+dbs', scope: 'dc' },
      { type: 'alias', name: 'db', ref: 'db', scope: 'dc' },
    ])
  })
})
