/**
 * HA resources, each test named after the pve-ha-manager function it follows: PVE::API2::HA::Resources create /
 * update with PVE::HA::Config::parse_sid, the resource plugins' verify_name and exists, and PVE::SectionConfig's
 * check_config.
 */
import { describe, expect, it } from 'vitest'
import { makeSim } from '../test-support/sim.js'

describe('PVE::API2::HA::Resources create / update', () => {
  it('create: the resource type must be a plugin, the name a VMID (verify_name)', async () => {
    const s = makeSim()
    expect((await s.error('POST', '/cluster/ha/resources', { sid: 'fs:data' })).message).toBe(
      "unknown section type 'fs'",
    )
    expect((await s.error('POST', '/cluster/ha/resources', { sid: 'vm:abc' })).message).toBe('invalid VMID')
  })

  it('check_config: values hold no line feed (create before the lock, update under it); failback is 9.x only', async () => {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512 })
    expect((await s.error('POST', '/cluster/ha/resources', { sid: 'vm:100', comment: 'a\nb' })).message).toBe(
      'property contains a line feed',
    )
    await s.call('POST', '/cluster/ha/resources', { sid: 'vm:100', state: 'stopped', failback: false })
    expect((await s.error('PUT', '/cluster/ha/resources/vm:100', { comment: 'a\rb' })).message).toBe(
      'update resources config failed: property contains a line feed',
    )
    expect(((await s.call('GET', '/cluster/ha/resources/vm:100')) as { failback: number }).failback).toBe(0)
    const s8 = makeSim({ pveVersion: '8.4' })
    await s8.run('POST', '/nodes/pve1/qemu', { vmid: 100, memory: 512 })
    expect((await s8.error('POST', '/cluster/ha/resources', { sid: 'vm:100', failback: true })).message).toBe(
      "unexpected property 'failback'",
    )
  })
})
