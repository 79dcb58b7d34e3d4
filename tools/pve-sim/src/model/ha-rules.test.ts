/**
 * HA groups (8.x) and rules (9.x), each test named after the pve-ha-manager function it follows:
 * PVE::API2::HA::Groups create/update/delete, PVE::API2::HA::Rules create_rule/update_rule/delete_rule with
 * $assert_valid_resources_param, $assert_valid_nodes_param and NodeAffinity check_single_resource_reference,
 * PVE::HA::Config::lock_ha_domain's message prefix and delete_service_from_config's purge.
 */
import { describe, expect, it } from 'vitest'
import { makeSim, type Sim } from '../api/testing.js'

async function withGuests(s: Sim, ...vmids: number[]): Promise<void> {
  for (const vmid of vmids) await s.run('POST', '/nodes/pve1/qemu', { vmid, memory: 512 })
}

describe('PVE::API2::HA::Rules (9.x)', () => {
  it('create_rule: resources must be configured, nodes must exist; lock_ha_domain prefixes the error', async () => {
    const s = makeSim()
    await withGuests(s, 100, 101)
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100' })
    const unmanaged = await s.error('POST', '/cluster/ha/rules', {
      rule: 'r1',
      type: 'node-affinity',
      resources: 'vm:100,vm:101',
      nodes: 'pve1',
    })
    expect([unmanaged.status, unmanaged.message]).toEqual([
      500,
      'create ha rule failed: cannot use unmanaged resource(s) vm:101.',
    ])
    const nodes = await s.error('POST', '/cluster/ha/rules', {
      rule: 'r1',
      type: 'node-affinity',
      resources: 'vm:100',
      nodes: 'pve9:2,pve1',
    })
    expect(nodes.message).toBe('create ha rule failed: cannot use non-existent node(s) pve9.')
    expect(await s.call('GET', '/cluster/ha/rules')).toEqual([])
  })

  it('$get_api_ha_rule: resources sorted, nodes sorted with `:prio` (0 left out), order and digest', async () => {
    const s = makeSim()
    await withGuests(s, 100, 101)
    for (const sid of ['vm:101', 'vm:100']) await s.call('POST', '/cluster/ha/resources', { sid })
    await s.call('POST', '/cluster/ha/rules', {
      rule: 'prefer-pve2',
      type: 'node-affinity',
      resources: '101,vm:100',
      nodes: 'pve2:2,pve1:0',
      strict: true,
      comment: 'web tier',
    })
    const rule = (await s.call('GET', '/cluster/ha/rules/prefer-pve2')) as Record<string, unknown>
    expect(rule).toEqual({
      rule: 'prefer-pve2',
      type: 'node-affinity',
      resources: 'vm:100,vm:101',
      nodes: 'pve1,pve2:2',
      strict: 1,
      comment: 'web tier',
      order: 1,
      digest: expect.stringMatching(/^[0-9a-f]{40}$/),
    })
    expect((await s.error('GET', '/cluster/ha/rules/nope')).message).toBe("no such ha rule 'nope'")
  })

  it('check_single_resource_reference: a resource in a second enabled node-affinity rule is refused with 400 lines', async () => {
    const s = makeSim()
    await withGuests(s, 100)
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100' })
    await s.call('POST', '/cluster/ha/rules', { rule: 'a', type: 'node-affinity', resources: 'vm:100', nodes: 'pve1' })
    const e = await s.error('POST', '/cluster/ha/rules', {
      rule: 'b',
      type: 'node-affinity',
      resources: 'vm:100',
      nodes: 'pve2',
    })
    expect([e.status, e.message]).toEqual([
      500,
      "create ha rule failed: 400 Rule 'b' is invalid.\nresources: resource 'vm:100' is already used in another node affinity rule",
    ])
    // a disabled rule does not count
    await s.call('POST', '/cluster/ha/rules', {
      rule: 'b',
      type: 'node-affinity',
      resources: 'vm:100',
      nodes: 'pve2',
      disable: true,
    })
    const enable = await s.error('PUT', '/cluster/ha/rules/b', { delete: 'disable' })
    expect(enable.message).toMatch(/^update HA rules failed: 400 Rule 'b' is invalid\./)
    expect(((await s.call('GET', '/cluster/ha/rules/b')) as { disable?: number }).disable).toBe(1)
  })

  it('update_rule: digest first, then the rule; options set, `delete` removes; required options stay', async () => {
    const s = makeSim()
    await withGuests(s, 100, 101)
    for (const sid of ['vm:100', 'vm:101']) await s.call('POST', '/cluster/ha/resources', { sid })
    await s.call('POST', '/cluster/ha/rules', {
      rule: 'r',
      type: 'node-affinity',
      resources: 'vm:100',
      nodes: 'pve1',
      comment: 'x',
    })
    const stale = await s.error('PUT', '/cluster/ha/rules/r', { nodes: 'pve2', digest: '0'.repeat(40) })
    expect(stale.message).toBe(
      'update HA rules failed: detected modified configuration - file changed by other user? Try again.',
    )
    expect((await s.error('PUT', '/cluster/ha/rules/nope', { nodes: 'pve2' })).message).toBe(
      "update HA rules failed: HA rule 'nope' does not exist",
    )
    const { digest } = (await s.call('GET', '/cluster/ha/rules/r')) as { digest: string }
    await s.call('PUT', '/cluster/ha/rules/r', {
      nodes: 'pve2:1',
      resources: 'vm:100,vm:101',
      delete: 'comment',
      digest,
    })
    const after = (await s.call('GET', '/cluster/ha/rules/r')) as Record<string, unknown>
    expect([after.nodes, after.resources, after.comment, after.digest === digest]).toEqual([
      'pve2:1',
      'vm:100,vm:101',
      undefined,
      false,
    ])
    expect((await s.error('PUT', '/cluster/ha/rules/r', { delete: 'nodes' })).message).toBe(
      "update HA rules failed: unable to delete required option 'nodes'",
    )
  })

  it('delete_rule of a missing rule is not an error; deleting a resource purges it from its rules', async () => {
    const s = makeSim()
    await withGuests(s, 100, 101)
    for (const sid of ['vm:100', 'vm:101']) await s.call('POST', '/cluster/ha/resources', { sid })
    await s.call('POST', '/cluster/ha/rules', {
      rule: 'one',
      type: 'node-affinity',
      resources: 'vm:100',
      nodes: 'pve1',
    })
    await s.call('POST', '/cluster/ha/rules', {
      rule: 'two',
      type: 'node-affinity',
      resources: 'vm:101',
      nodes: 'pve2',
    })
    expect(await s.call('DELETE', '/cluster/ha/rules/nope')).toBeNull()
    await s.call('DELETE', '/cluster/ha/resources/vm:100')
    expect(((await s.call('GET', '/cluster/ha/rules')) as { rule: string }[]).map((r) => r.rule)).toEqual(['two'])
    // purge=0 leaves the rule naming a resource that is gone
    await s.call('DELETE', '/cluster/ha/resources/vm:101', { purge: false })
    expect(((await s.call('GET', '/cluster/ha/rules/two')) as { resources: string }).resources).toBe('vm:101')
  })
})

describe('PVE::API2::HA::Groups (8.x)', () => {
  it('create / update with digest and delete / delete refused while a resource names the group', async () => {
    const s = makeSim({ pveVersion: '8.4' })
    await withGuests(s, 100)
    await s.call('POST', '/cluster/ha/groups', { group: 'g1', nodes: 'pve1:2,pve2', restricted: true })
    expect((await s.error('POST', '/cluster/ha/groups', { group: 'g1', nodes: 'pve1' })).message).toBe(
      "create ha group failed: ha group ID 'g1' already defined",
    )
    const g = (await s.call('GET', '/cluster/ha/groups/g1')) as { digest: string; restricted: number }
    expect(g.restricted).toBe(1)
    expect((await s.error('PUT', '/cluster/ha/groups/g1', { comment: 'x', digest: '0'.repeat(40) })).message).toBe(
      'update ha group failed: detected modified configuration - file changed by other user? Try again.',
    )
    await s.call('PUT', '/cluster/ha/groups/g1', { nodes: 'pve2:3', delete: 'restricted', digest: g.digest })
    expect(await s.call('GET', '/cluster/ha/groups/g1')).toEqual({
      group: 'g1',
      type: 'group',
      nodes: 'pve2:3',
      digest: expect.stringMatching(/^[0-9a-f]{40}$/),
    })
    expect((await s.error('PUT', '/cluster/ha/groups/g1', { delete: 'nodes' })).message).toBe(
      "update ha group failed: unable to delete required option 'nodes'",
    )
    // a resource may name a group that does not exist; the index says so
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', group: 'gone' })
    expect(((await s.call('GET', '/cluster/ha/resources')) as { errors?: unknown }[])[0]?.errors).toEqual({
      group: "group 'gone' does not exist",
    })
    await s.call('PUT', '/cluster/ha/resources/vm:100', { group: 'g1' })
    expect((await s.error('DELETE', '/cluster/ha/groups/g1')).message).toBe(
      "delete ha group failed: ha group is used by service 'vm:100'",
    )
    await s.call('PUT', '/cluster/ha/resources/vm:100', { delete: 'group' })
    expect(await s.call('DELETE', '/cluster/ha/groups/g1')).toBeNull()
    expect(await s.call('GET', '/cluster/ha/groups')).toEqual([])
  })

  it('update_resources_config: an unknown option in delete is refused; 8.x rules do not exist', async () => {
    const s = makeSim({ pveVersion: '8.4' })
    await withGuests(s, 100)
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', max_restart: 3 })
    expect((await s.error('PUT', '/cluster/ha/resources/vm:100', { delete: 'bogus' })).message).toBe(
      "update resources config failed: no such option 'bogus'",
    )
    await s.call('PUT', '/cluster/ha/resources/vm:100', { delete: 'max_restart', max_relocate: 2 })
    const r = (await s.call('GET', '/cluster/ha/resources/vm:100')) as Record<string, unknown>
    expect([r.max_restart, r.max_relocate]).toEqual([undefined, 2])
  })
})
