/**
 * Resource pools, each test named after the PVE function it follows: pve-manager PVE::API2::Pool (index,
 * create_pool, update_pool, read_pool, delete_pool), pve-access-control AccessControl add_vm_to_pool /
 * remove_vm_access / remove_storage_access / check_pool_exist, qemu-server and pve-container create_vm /
 * clone_vm with `pool`, and pve-manager API2/Cluster.pm resources (pool rows, a guest's `pool`).
 */
import { describe, expect, it } from 'vitest'
import { makeSim, type Sim } from '../test-support/sim.js'

const TMPL = 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst'

function sim(pveVersion: '9.1' | '8.4' = '9.1'): Sim {
  const s = makeSim({ pveVersion })
  s.sim.addVolume('pve1', 'local', { filename: 'debian-12-standard_12.7-1_amd64.tar.zst', content: 'vztmpl' })
  return s
}

describe.each(['9.1', '8.4'] as const)('PVE::API2::Pool on %s', (version) => {
  it('create_pool / index: sorted list, comment only when non-empty; duplicates, names and parents checked', async () => {
    const s = sim(version)
    expect(await s.call('POST', '/pools', { poolid: 'web', comment: 'managed-by: proxops' })).toBeNull()
    await s.call('POST', '/pools', { poolid: 'db', comment: '' })
    expect(await s.call('GET', '/pools')).toEqual([{ poolid: 'db' }, { poolid: 'web', comment: 'managed-by: proxops' }])
    expect((await s.error('POST', '/pools', { poolid: 'web' })).message).toBe(
      "create pool failed: pool 'web' already exists",
    )
    expect((await s.error('POST', '/pools', { poolid: '1st' })).message).toBe(
      'create pool failed: pool name must start with a letter',
    )
    expect((await s.error('POST', '/pools', { poolid: 'no/child' })).message).toBe(
      "create pool failed: parent 'no' of pool 'no/child' does not exist",
    )
    await s.call('POST', '/pools', { poolid: 'web/blue' })
    expect((await s.call('GET', '/pools')).map((p: { poolid: string }) => p.poolid)).toEqual(['db', 'web', 'web/blue'])
  })

  it('update_pool: vms added and removed, allow-move, comment, and an error leaves the pool as it was', async () => {
    const s = sim(version)
    await s.call('POST', '/pools', { poolid: 'a' })
    await s.call('POST', '/pools', { poolid: 'b' })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512 })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 101, memory: 512 })
    await s.call('PUT', '/pools', { poolid: 'a', vms: '100,101', comment: 'x' })
    const info = await s.call('GET', '/pools', { poolid: 'a' })
    expect(info).toEqual([
      {
        poolid: 'a',
        comment: 'x',
        members: [
          expect.objectContaining({ id: 'qemu/100', vmid: 100, type: 'qemu', node: 'pve1' }),
          expect.objectContaining({ id: 'qemu/101', vmid: 101 }),
        ],
      },
    ])
    // extract_vm_stats alone: no pool, tags, lock or hastate on a member
    expect(info[0].members[0].pool).toBeUndefined()
    expect((await s.error('PUT', '/pools', { poolid: 'a', vms: '100' })).message).toBe(
      'update pools failed: VM 100 is already a pool member',
    )
    expect((await s.error('PUT', '/pools', { poolid: 'b', vms: '100' })).message).toBe(
      "update pools failed: VM 100 belongs already to pool 'a' and 'allow-move' is not set",
    )
    // 102 fails after 101 would have moved: nothing is written
    expect((await s.error('PUT', '/pools', { poolid: 'a', vms: '101,102', delete: 1 })).message).toBe(
      'update pools failed: VM 102 is not a pool member',
    )
    expect((await s.call('GET', '/pools/a')).members).toHaveLength(2)
    await s.call('PUT', '/pools/b', { vms: '100', 'allow-move': 1, poolid: 'b' })
    expect((await s.call('GET', '/pools/a')).members.map((m: { vmid: number }) => m.vmid)).toEqual([101])
    expect((await s.call('GET', '/pools/b')).members.map((m: { vmid: number }) => m.vmid)).toEqual([100])
    // an empty comment removes it (parse_user_config keeps only a non-empty one)
    await s.call('PUT', '/pools', { poolid: 'a', comment: '' })
    expect((await s.call('GET', '/pools/a')).comment).toBeUndefined()
    expect((await s.error('PUT', '/pools', { poolid: 'zz' })).message).toBe(
      "update pools failed: pool 'zz' does not exist",
    )
  })

  it('index with poolid and type: members filtered; storages listed with the answering node', async () => {
    const s = sim(version)
    await s.call('POST', '/pools', { poolid: 'p' })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512 })
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 101, ostemplate: TMPL, rootfs: 'local-lvm:2' })
    await s.call('PUT', '/pools', { poolid: 'p', vms: '101 100', storage: 'local-lvm' })
    const all = (await s.call('GET', '/pools', { poolid: 'p' }))[0].members.map((m: { id: string }) => m.id)
    expect(all).toEqual(['qemu/100', 'lxc/101', 'storage/pve1/local-lvm'])
    const lxc = (await s.call('GET', '/pools', { poolid: 'p', type: 'lxc' }))[0].members
    expect(lxc.map((m: { id: string }) => m.id)).toEqual(['lxc/101'])
    expect((await s.error('GET', '/pools', { type: 'lxc' })).errors).toEqual({
      poolid: "missing property required by 'type'",
    })
    expect((await s.error('GET', '/pools', { poolid: 'nope' })).message).toBe("pool 'nope' does not exist")
  })

  it('delete_pool: refused with a sub-pool, a live member or a configured storage; destroyed guests do not count', async () => {
    const s = sim(version)
    await s.call('POST', '/pools', { poolid: 'p' })
    await s.call('POST', '/pools', { poolid: 'p/q' })
    expect((await s.error('DELETE', '/pools', { poolid: 'p' })).message).toBe(
      "delete pool failed: pool 'p' is not empty (contains pool 'p/q')",
    )
    await s.call('DELETE', '/pools', { poolid: 'p/q' })
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512, pool: 'p' })
    // a vmid no guest has yet may be added (only its ACL path is checked); delete ignores it
    await s.call('PUT', '/pools', { poolid: 'p', vms: '999' })
    expect((await s.error('DELETE', '/pools/p')).message).toBe(
      "delete pool failed: pool 'p' is not empty (contains VM 100)",
    )
    await s.call('PUT', '/pools', { poolid: 'p', storage: 'local' })
    await s.run('DELETE', '/nodes/pve1/qemu/100')
    expect((await s.error('DELETE', '/pools', { poolid: 'p' })).message).toBe(
      "delete pool failed: pool 'p' is not empty (contains storage 'local')",
    )
    await s.call('PUT', '/pools', { poolid: 'p', storage: 'local', delete: 1 })
    expect(await s.call('DELETE', '/pools', { poolid: 'p' })).toBeNull()
    expect(await s.call('GET', '/pools')).toEqual([])
    expect((await s.error('DELETE', '/pools', { poolid: 'p' })).message).toBe(
      "delete pool failed: pool 'p' does not exist",
    )
  })
})

describe('guests and pools', () => {
  it('create_vm / create (LXC) with pool: check_pool_exist before forking (403), add_vm_to_pool at the end', async () => {
    const s = sim()
    const e = await s.error('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512, pool: 'web' })
    expect([e.status, e.message]).toEqual([403, "Permission check failed (pool 'web' does not exist)"])
    expect(s.sim.guest(100)).toBeUndefined()
    const e2 = await s.error('POST', '/nodes/pve1/lxc', { vmid: 101, ostemplate: TMPL, pool: 'web' })
    expect(e2.status).toBe(403)
    await s.call('POST', '/pools', { poolid: 'web' })
    const upid = await s.call('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512, pool: 'web' })
    expect(upid).toContain(':qmcreate:100:')
    // not a member while the create task runs
    expect((await s.call('GET', '/pools/web')).members).toEqual([])
    s.advance(60_000)
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 101, ostemplate: TMPL, rootfs: 'local-lvm:2', pool: 'web' })
    const rows = (await s.call('GET', '/cluster/resources')) as Record<string, unknown>[]
    expect(rows[0]).toEqual({ id: '/pool/web', pool: 'web', type: 'pool' })
    expect(rows.filter((r) => r.vmid !== undefined).map((r) => [r.vmid, r.pool])).toEqual([
      [100, 'web'],
      [101, 'web'],
    ])
    // with a type filter there are no pool rows, but guests keep their pool
    const vms = (await s.call('GET', '/cluster/resources', { type: 'vm' })) as Record<string, unknown>[]
    expect(vms.map((r) => r.type)).toEqual(['qemu', 'lxc'])
    expect(vms.map((r) => r.pool)).toEqual(['web', 'web'])
    // `pool` is a create/clone parameter only: it is not stored in the config
    expect((await s.call('GET', '/nodes/pve1/qemu/100/config')).pool).toBeUndefined()
  })

  it('a failed create adds nothing; remove_vm_access after destroy_vm takes the guest out of its pool', async () => {
    const s = sim()
    await s.call('POST', '/pools', { poolid: 'web' })
    s.sim.setTaskBehaviour('qmcreate', { fail: 'disk full' })
    expect((await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512, pool: 'web' })).exitstatus).not.toBe('OK')
    s.sim.setTaskBehaviour('qmcreate', null)
    expect((await s.call('GET', '/pools/web')).members).toEqual([])
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512, pool: 'web' })
    expect((await s.call('GET', '/pools/web')).members).toHaveLength(1)
    await s.run('DELETE', '/nodes/pve1/qemu/100')
    // a new guest with the same vmid is in no pool
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512 })
    expect((await s.call('GET', '/pools/web')).members).toEqual([])
    expect(await s.call('DELETE', '/pools/web')).toBeNull()
  })

  it('remove_storage_access: deleting a storage takes it out of every pool', async () => {
    const s = sim()
    await s.call('POST', '/storage', { storage: 'vmdir', type: 'dir', path: '/srv/vmdir', content: 'images' })
    await s.call('POST', '/pools', { poolid: 'p' })
    await s.call('PUT', '/pools', { poolid: 'p', storage: 'vmdir' })
    await s.call('DELETE', '/storage/vmdir')
    expect((await s.call('GET', '/pools/p')).members).toEqual([])
    expect(await s.call('DELETE', '/pools/p')).toBeNull()
  })
})

describe('pve-container clone_vm', () => {
  async function template(s: Sim): Promise<void> {
    await s.run('POST', '/nodes/pve1/lxc', {
      vmid: 120,
      ostemplate: TMPL,
      rootfs: 'local-lvm:4',
      hostname: 'base',
      net0: 'name=eth0,bridge=vmbr0',
    })
    await s.call('POST', '/nodes/pve1/lxc/120/template')
    s.advance(60_000)
  }

  it('full clone of a template: new volume on the target storage, hostname and pool applied, template flag dropped', async () => {
    const s = sim()
    await template(s)
    await s.call('POST', '/pools', { poolid: 'web' })
    const upid = await s.call('POST', '/nodes/pve1/lxc/120/clone', {
      newid: 121,
      full: 1,
      hostname: 'web1',
      pool: 'web',
      storage: 'local-lvm',
    })
    expect(upid).toContain(':vzclone:120:')
    // while it runs: the source holds `lock: disk`, the target exists with `lock: create`
    expect((await s.call('GET', '/nodes/pve1/lxc/120/config')).lock).toBe('disk')
    expect((await s.call('GET', '/nodes/pve1/lxc/121/config')).lock).toBe('create')
    expect((await s.error('PUT', '/nodes/pve1/lxc/120/config', { cores: 2 })).message).toBe('CT is locked (disk)')
    s.advance(60_000)
    const src = await s.call('GET', '/nodes/pve1/lxc/120/config')
    const cc = await s.call('GET', '/nodes/pve1/lxc/121/config')
    expect(src.lock).toBeUndefined()
    expect([cc.lock, cc.template, cc.hostname, cc.rootfs]).toEqual([
      undefined,
      undefined,
      'web1',
      'local-lvm:vm-121-disk-0,size=4G',
    ])
    expect(cc.net0).not.toBe(src.net0)
    expect((await s.call('GET', '/pools/web')).members.map((m: { vmid: number }) => m.vmid)).toEqual([121])
  })

  it('refusals before forking: unknown pool (403), storage with a linked clone, running CT without a snapshot', async () => {
    const s = sim()
    await template(s)
    expect((await s.error('POST', '/nodes/pve1/lxc/120/clone', { newid: 121, pool: 'nope' })).status).toBe(403)
    expect((await s.error('POST', '/nodes/pve1/lxc/120/clone', { newid: 121, storage: 'local-lvm' })).message).toBe(
      "parameter 'storage' not allowed for linked clones",
    )
    await s.run('POST', '/nodes/pve1/lxc', { vmid: 130, ostemplate: TMPL, rootfs: 'local-lvm:2' })
    await s.run('POST', '/nodes/pve1/lxc/130/status/start')
    expect((await s.error('POST', '/nodes/pve1/lxc/130/clone', { newid: 131 })).message).toBe(
      'Full clone of a running container is only possible from a snapshot',
    )
    expect(s.sim.guest(121)).toBeUndefined()
    expect(s.sim.guest(131)).toBeUndefined()
  })

  it('a failed clone removes the target and releases the source lock', async () => {
    const s = sim()
    await template(s)
    s.sim.setTaskBehaviour('vzclone', { fail: 'copy failed' })
    expect((await s.run('POST', '/nodes/pve1/lxc/120/clone', { newid: 121, full: 1 })).exitstatus).not.toBe('OK')
    expect(s.sim.guest(121)).toBeUndefined()
    expect(s.sim.guest(120)?.lock).toBeUndefined()
  })
})
