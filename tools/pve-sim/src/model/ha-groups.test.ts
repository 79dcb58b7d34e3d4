/**
 * HA groups (8.x), each test named after the pve-ha-manager function it follows: PVE::API2::HA::Groups
 * create/update/delete with PVE::SectionConfig::check_config, PVE::HA::Groups decode_value / encode_value, and the
 * group checks of PVE::API2::HA::Resources.
 */
import { describe, expect, it } from 'vitest'
import { makeSim, type Sim } from '../test-support/sim.js'

async function withGuests(s: Sim, ...vmids: number[]): Promise<void> {
  for (const vmid of vmids) await s.run('POST', '/nodes/pve1/qemu', { vmid, memory: 512 })
}

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

describe('PVE::API2::HA::Groups with PVE::SectionConfig::check_config (8.x)', () => {
  it('create: `nodes` is required, values hold no line feed, `type` must be `group`', async () => {
    const s = makeSim({ pveVersion: '8.4' })
    expect((await s.error('POST', '/cluster/ha/groups', { group: 'g1' })).message).toBe(
      "missing value for required option 'nodes'",
    )
    expect((await s.error('POST', '/cluster/ha/groups', { group: 'g1', nodes: 'pve1', comment: 'a\nb' })).message).toBe(
      'property contains a line feed',
    )
    expect((await s.error('POST', '/cluster/ha/groups', { group: 'g1', nodes: 'pve1', type: 'rule' })).message).toBe(
      'types does not match',
    )
    expect(await s.call('GET', '/cluster/ha/groups')).toEqual([])
  })

  it('decode_value keeps each `node[:prio]` entry as written (two priorities of one node are two entries)', async () => {
    const s = makeSim({ pveVersion: '8.4' })
    await s.call('POST', '/cluster/ha/groups', { group: 'g1', nodes: 'pve1:2,pve1:3,pve2,pve2' })
    expect(((await s.call('GET', '/cluster/ha/groups/g1')) as { nodes: string }).nodes).toBe('pve2,pve1:3,pve1:2')
  })

  it('update: a failing `delete` writes nothing (the options set before it are not kept)', async () => {
    const s = makeSim({ pveVersion: '8.4' })
    await s.call('POST', '/cluster/ha/groups', { group: 'g1', nodes: 'pve1' })
    expect((await s.error('PUT', '/cluster/ha/groups/g1', { comment: 'x', delete: 'bogus' })).message).toBe(
      "update ha group failed: no such option 'bogus'",
    )
    expect(((await s.call('GET', '/cluster/ha/groups/g1')) as { comment?: string }).comment).toBeUndefined()
    // no set-and-delete check in the groups handler: the delete wins
    await s.call('PUT', '/cluster/ha/groups/g1', { comment: 'x', delete: 'comment' })
    expect(((await s.call('GET', '/cluster/ha/groups/g1')) as { comment?: string }).comment).toBeUndefined()
  })

  it('delete of a group that does not exist is no error', async () => {
    const s = makeSim({ pveVersion: '8.4' })
    expect(await s.call('DELETE', '/cluster/ha/groups/nope')).toBeNull()
  })
})
