import { describe, expect, it } from 'vitest'
import { makeSim } from '../test-support/sim.js'

// pve-guest-common PVE::ReplicationConfig behind pve-manager API2::ReplicationConfig; the runner is pvescheduler's
// per-minute replication run, which removes jobs marked `remove_job`
describe('ReplicationConfig: a job marked for removal and the replication runner', () => {
  it('stays listed, and still blocks a destroy without purge, until the next full minute has begun', async () => {
    const s = makeSim()
    s.clock.t = Date.parse('2025-06-01T10:00:20Z')
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512, scsi0: 'local-zfs:1' })
    await s.call('POST', '/cluster/replication', { id: '100-0', type: 'local', target: 'pve2' })
    s.clock.t = Date.parse('2025-06-01T10:01:30Z')
    await s.call('DELETE', '/cluster/replication/100-0')
    s.advance(29_000) // 10:01:59
    expect((await s.error('DELETE', '/nodes/pve1/qemu/100')).message).toBe(
      "There is a replication job '100-0' for guest '100' - Please remove that first.",
    )
    s.advance(1000) // 10:02:00: the runner has removed it
    expect(await s.call('GET', '/cluster/replication')).toEqual([])
    expect((await s.run('DELETE', '/nodes/pve1/qemu/100')).exitstatus).toBe('OK')
  })
})

describe('get_replicatable_volumes (pve-container LXC::Config)', () => {
  it('a bind mount point refuses replication unless replicate=0; the rootfs on zfs is replicatable', async () => {
    const s = makeSim()
    s.sim.addVolume('pve1', 'local', { filename: 'debian-12-standard_12.7-1_amd64.tar.zst', content: 'vztmpl' })
    await s.run('POST', '/nodes/pve1/lxc', {
      vmid: 200,
      ostemplate: 'local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst',
      rootfs: 'local-zfs:1',
    })
    s.sim.driftSet(200, 'mp0', '/srv/data,mp=/data')
    const create = () => s.call('POST', '/cluster/replication', { id: '200-0', type: 'local', target: 'pve2' })
    await expect(create()).rejects.toThrow("unable to replicate mountpoint type 'bind'")
    s.sim.driftSet(200, 'mp0', '/srv/data,mp=/data,replicate=0')
    await create()
    expect(await s.call('GET', '/cluster/replication/200-0')).toMatchObject({ guest: 200, source: 'pve1' })
  })
})
