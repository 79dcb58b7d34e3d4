/**
 * HA rules (9.x), each test named after the pve-ha-manager function it follows: PVE::API2::HA::Rules
 * create_rule/update_rule/delete_rule/index/read_rule with PVE::SectionConfig::check_config and delete_from_config,
 * $assert_valid_resources_param, $assert_valid_nodes_param, $assert_feasibility (the checks themselves are tested in
 * ha-feasibility.test.ts), PVE::HA::Rules::get_next_ordinal, PVE::HA::Config::lock_ha_domain's message prefix and
 * delete_service_from_config's purge.
 */
import { describe, expect, it } from 'vitest'
import { makeSim, type Sim } from '../test-support/sim.js'

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
      resources: 'vm:101,vm:100',
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

const NOT_TWO = 'rule is ineffective as there are less than two resources'

async function withResources(s: Sim, ...vmids: number[]): Promise<void> {
  await withGuests(s, ...vmids)
  for (const vmid of vmids) await s.call('POST', '/cluster/ha/resources', { sid: `vm:${vmid}`, state: 'stopped' })
}

describe('PVE::API2::HA::Rules resource-affinity rules and $assert_feasibility', () => {
  it('create_rule stores a resource-affinity rule with its affinity; read returns it', async () => {
    const s = makeSim()
    await withResources(s, 100, 101)
    await s.call('POST', '/cluster/ha/rules', {
      rule: 'keep-apart',
      type: 'resource-affinity',
      affinity: 'negative',
      resources: 'vm:101,vm:100',
    })
    expect(await s.call('GET', '/cluster/ha/rules/keep-apart')).toEqual({
      rule: 'keep-apart',
      type: 'resource-affinity',
      affinity: 'negative',
      resources: 'vm:100,vm:101',
      order: 1,
      digest: expect.stringMatching(/^[0-9a-f]{40}$/),
    })
  })

  it('check_config: a property of the other rule type is unexpected, a required one missing (before the lock)', async () => {
    const s = makeSim()
    await withResources(s, 100, 101)
    const base = { rule: 'r', type: 'resource-affinity', resources: 'vm:100,vm:101' }
    expect(await s.error('POST', '/cluster/ha/rules', { ...base, affinity: 'positive', nodes: 'pve1' })).toMatchObject({
      status: 500,
      message: "unexpected property 'nodes'",
    })
    expect((await s.error('POST', '/cluster/ha/rules', base)).message).toBe(
      "missing value for required option 'affinity'",
    )
    expect(
      (await s.error('POST', '/cluster/ha/rules', { rule: 'n', type: 'node-affinity', resources: 'vm:100' })).message,
    ).toBe("missing value for required option 'nodes'")
    expect(
      (await s.error('POST', '/cluster/ha/rules', { ...base, affinity: 'positive', comment: 'two\nlines' })).message,
    ).toBe('property contains a line feed')
  })

  it('decode_value drops resource entries that are no `type:name` (a bare vmid), leaving none to use', async () => {
    const s = makeSim()
    await withResources(s, 100)
    expect(
      (
        await s.error('POST', '/cluster/ha/rules', {
          rule: 'r',
          type: 'node-affinity',
          resources: '100',
          nodes: 'pve1',
        })
      ).message,
    ).toBe('create ha rule failed: no resources were specified')
  })

  it('$assert_feasibility refuses the created rule it blames, with the messages joined per option, and writes nothing', async () => {
    const s = makeSim()
    await withResources(s, 100, 101)
    const one = await s.error('POST', '/cluster/ha/rules', {
      rule: 'alone',
      type: 'resource-affinity',
      affinity: 'positive',
      resources: 'vm:100',
    })
    expect([one.status, one.message]).toEqual([
      500,
      `create ha rule failed: 400 Rule 'alone' is invalid.\nresources: ${NOT_TWO}`,
    ])
    await s.call('POST', '/cluster/ha/rules', {
      rule: 'together',
      type: 'resource-affinity',
      affinity: 'positive',
      resources: 'vm:100,vm:101',
    })
    const contra = await s.error('POST', '/cluster/ha/rules', {
      rule: 'apart',
      type: 'resource-affinity',
      affinity: 'negative',
      resources: 'vm:100,vm:101',
    })
    expect(contra.message).toBe(
      "create ha rule failed: 400 Rule 'apart' is invalid.\nresources: rule shares two or more resources with a positive resource affinity rule",
    )
    expect(((await s.call('GET', '/cluster/ha/rules')) as { rule: string }[]).map((r) => r.rule)).toEqual(['together'])
  })

  it('$assert_feasibility on update: a node-affinity rule given two priorities over a resource-affinity rule', async () => {
    const s = makeSim()
    await withResources(s, 100, 101)
    await s.call('POST', '/cluster/ha/rules', {
      rule: 'together',
      type: 'resource-affinity',
      affinity: 'positive',
      resources: 'vm:100,vm:101',
    })
    await s.call('POST', '/cluster/ha/rules', {
      rule: 'pin',
      type: 'node-affinity',
      resources: 'vm:100',
      nodes: 'pve1',
    })
    const e = await s.error('PUT', '/cluster/ha/rules/pin', { type: 'node-affinity', nodes: 'pve1:2,pve2:1' })
    expect(e.message).toBe(
      "update HA rules failed: 400 Rule 'pin' is invalid.\nresources: resources are in a resource affinity rule and cannot be in a node affinity rule with multiple priorities",
    )
    expect(((await s.call('GET', '/cluster/ha/rules/pin')) as { nodes: string }).nodes).toBe('pve1')
  })

  it('update_rule: a `type` other than the rule`s is an unexpected property; set and delete of one option is refused', async () => {
    const s = makeSim()
    await withResources(s, 100)
    await s.call('POST', '/cluster/ha/rules', {
      rule: 'pin',
      type: 'node-affinity',
      resources: 'vm:100',
      nodes: 'pve1',
    })
    expect((await s.error('PUT', '/cluster/ha/rules/pin', { type: 'resource-affinity', comment: 'x' })).message).toBe(
      "update HA rules failed: unexpected property 'type'",
    )
    expect((await s.error('PUT', '/cluster/ha/rules/pin', { comment: 'x', delete: 'comment' })).message).toBe(
      "update HA rules failed: cannot set and delete property 'comment' at the same time!",
    )
    expect((await s.error('PUT', '/cluster/ha/rules/pin', { delete: 'type' })).message).toBe(
      "update HA rules failed: no such option 'type'",
    )
  })

  it('index and read_rule attach `errors` to rules the checks blame (a purge left a rule with one resource)', async () => {
    const s = makeSim()
    await withResources(s, 100, 101)
    await s.call('POST', '/cluster/ha/rules', {
      rule: 'together',
      type: 'resource-affinity',
      affinity: 'positive',
      resources: 'vm:100,vm:101',
    })
    await s.call('DELETE', '/cluster/ha/resources/vm:101')
    const [listed] = (await s.call('GET', '/cluster/ha/rules')) as Record<string, unknown>[]
    expect(listed).toMatchObject({ rule: 'together', resources: 'vm:100', errors: { resources: [NOT_TWO] } })
    expect(await s.call('GET', '/cluster/ha/rules/together')).toEqual(listed)
    // a disabled rule is not checked
    await s.call('PUT', '/cluster/ha/rules/together', { disable: true })
    expect((await s.call('GET', '/cluster/ha/rules/together')) as object).not.toHaveProperty('errors')
  })
})

describe('PVE::HA::Rules::get_next_ordinal and the file order', () => {
  it('a new rule takes the smallest order plus one: it lands second; a delete renumbers', async () => {
    const s = makeSim()
    await withResources(s, 100, 101, 102, 103)
    const create = (rule: string, vmid: number) =>
      s.call('POST', '/cluster/ha/rules', { rule, type: 'node-affinity', resources: `vm:${vmid}`, nodes: 'pve1' })
    await create('first', 100)
    await create('second', 101)
    await create('third', 102)
    const orders = async () =>
      ((await s.call('GET', '/cluster/ha/rules')) as { rule: string; order: number }[]).map(
        (r) => `${r.order}:${r.rule}`,
      )
    expect(await orders()).toEqual(['1:first', '2:third', '3:second'])
    await s.call('DELETE', '/cluster/ha/rules/first')
    expect(await orders()).toEqual(['1:third', '2:second'])
    await create('fourth', 103)
    expect(await orders()).toEqual(['1:third', '2:fourth', '3:second'])
  })
})
