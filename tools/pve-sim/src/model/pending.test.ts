import { fc, test } from '@fast-check/vitest'
import { describe, expect, it } from 'vitest'
import { makeSim } from '../test-support/sim.js'

/**
 * Pending changes as a property: whatever sequence of config writes a running VM gets, GET config (pending
 * merged) shows what the same writes give a stopped VM, and a stop + start leaves nothing pending.
 */
const write = fc.oneof(
  fc.record({ cores: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ sockets: fc.integer({ min: 1, max: 2 }) }),
  fc.record({ memory: fc.constantFrom('1024', '2048', '4096') }),
  fc.record({ name: fc.constantFrom('a', 'b-1', 'web') }),
  fc.record({ tags: fc.constantFrom('x;Y', 'prod', 'a,b,a') }),
  fc.record({ onboot: fc.boolean() }),
  fc.record({ cpulimit: fc.constantFrom('0.5', '2') }),
  fc.record({ description: fc.constantFrom('one', 'two\n', '') }),
  fc.record({ delete: fc.constantFrom('cores', 'tags', 'name', 'cpulimit', 'onboot', 'vga') }),
)
// (revert is left out on purpose: reverting a pending change only means something on the running VM)

function strip(conf: Record<string, unknown>): Record<string, unknown> {
  const { digest: _d, ...rest } = conf
  return rest
}

describe('running vs stopped config writes (property)', () => {
  test.prop([fc.array(write, { minLength: 1, maxLength: 8 })], { numRuns: 60 })(
    'merged view of the running VM = current view of the stopped one',
    async (writes) => {
      const s = makeSim()
      const base = { cores: 1, memory: '1024', name: 'vm', scsi0: 'local-lvm:1' }
      await s.run('POST', '/nodes/pve1/qemu', { vmid: 100, ...base })
      await s.run('POST', '/nodes/pve1/qemu', { vmid: 101, ...base })
      await s.run('POST', '/nodes/pve1/qemu/101/status/start')
      for (const w of writes) {
        const a = await s.call('PUT', '/nodes/pve1/qemu/100/config', w).catch((e: Error) => e.message)
        const b = await s.call('PUT', '/nodes/pve1/qemu/101/config', w).catch((e: Error) => e.message)
        expect(b).toEqual(a)
      }
      const stopped = strip(await s.call('GET', '/nodes/pve1/qemu/100/config', { current: 1 }))
      const running = strip(await s.call('GET', '/nodes/pve1/qemu/101/config'))
      const ignore = ['scsi0', 'smbios1', 'vmgenid', 'meta', 'boot']
      for (const k of ignore) {
        delete stopped[k]
        delete running[k]
      }
      expect(running).toEqual(stopped)
      expect(s.sim.guest(100)?.pending).toEqual({})
      await s.run('POST', '/nodes/pve1/qemu/101/status/stop')
      await s.run('POST', '/nodes/pve1/qemu/101/status/start')
      const after = s.sim.guest(101)
      expect([after?.pending, after?.pendingDelete]).toEqual([{}, {}])
    },
  )
})

describe('deleting a drive whose new value is pending', () => {
  it('update_vm_api registers the pending volume as unused: no volume is left without a reference', async () => {
    const s = makeSim()
    await s.run('POST', '/nodes/pve1/qemu', { vmid: 103, scsi0: 'local-lvm:1', start: 1 })
    await s.call('PUT', '/nodes/pve1/qemu/103/config', { scsi1: 'local-lvm:1' })
    // a second disk on an occupied slot of a running VM waits in [PENDING]
    await s.call('PUT', '/nodes/pve1/qemu/103/config', { scsi1: 'local-lvm:1' })
    expect(s.sim.guest(103)?.pending.scsi1).toMatch(/^local-lvm:vm-103-disk-2,/)
    await s.call('PUT', '/nodes/pve1/qemu/103/config', { delete: 'scsi1', force: 1 })
    const text = s.sim.configText(103) ?? ''
    const volids = s.sim.storageContent('pve1', 'local-lvm').map((v) => String(v.volid))
    for (const volid of volids) expect(text, volid).toContain(volid.split(':')[1])
    expect(s.sim.guest(103)?.config.unused0).toBe('local-lvm:vm-103-disk-2')
  })
})
