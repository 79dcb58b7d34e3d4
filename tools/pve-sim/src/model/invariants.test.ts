import { createHash } from 'node:crypto'
import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { PveHttpError } from './errors.js'
import { addDirStorage, makeSim } from '../test-support/sim.js'

/**
 * Model invariants under random operation sequences: handlers only ever fail the way
 * PVE does (PveHttpError), every task stops, digests are the SHA-1 of the file text, and no image
 * volume is leaked (each one belongs to a guest whose config refers to it).
 */
const vmid = fc.constantFrom(100, 101, 102, 103)
const op = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('create' as const),
      vmid,
      disk: fc.constantFrom('local-lvm:1', 'vmdir:1', 'local-zfs:1'),
      start: fc.boolean(),
    }),
  },
  fc.record({ k: fc.constant('createct' as const), vmid }),
  fc.record({
    k: fc.constantFrom(
      'start' as const,
      'stop' as const,
      'shutdown' as const,
      'reboot' as const,
      'template' as const,
      'destroy' as const,
    ),
    vmid,
  }),
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant('config' as const),
      vmid,
      async: fc.boolean(),
      change: fc.constantFrom<Record<string, unknown>>(
        { cores: 2 },
        { scsi1: 'local-lvm:1' },
        { delete: 'scsi0' },
        { delete: 'scsi1' },
        { delete: 'unused0' },
        { net0: 'virtio,bridge=vmbr0' },
        { sata0: 'local-lvm:1' },
        { revert: 'sata0' },
        { tags: 'A;b' },
        { delete: 'scsi1', force: 1 },
      ),
    }),
  },
  fc.record({ k: fc.constant('resize' as const), vmid, size: fc.constantFrom('+1G', '1G', '5G') }),
  fc.record({ k: fc.constant('clone' as const), vmid, newid: vmid, full: fc.boolean() }),
  fc.record({ k: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 3000 }) }),
)

describe('model invariants (property)', () => {
  test.prop([fc.array(fc.tuple(op, fc.integer({ min: 0, max: 1500 })), { minLength: 8, maxLength: 25 })], {
    numRuns: 150,
  })('random operations keep the model consistent', async (steps) => {
    const s = makeSim({ nodes: ['pve1'] })
    await addDirStorage(s)
    s.sim.addVolume('pve1', 'local', { filename: 't.tar.zst', content: 'vztmpl' })
    for (const [o, after] of steps) {
      const type = s.sim.guest('vmid' in o ? o.vmid : 0)?.type ?? 'qemu'
      const base = 'vmid' in o ? `/nodes/pve1/${type}/${o.vmid}` : ''
      try {
        switch (o.k) {
          case 'create':
            await s.call('POST', '/nodes/pve1/qemu', { vmid: o.vmid, scsi0: o.disk, start: o.start })
            break
          case 'createct':
            await s.call('POST', '/nodes/pve1/lxc', {
              vmid: o.vmid,
              ostemplate: 'local:vztmpl/t.tar.zst',
              rootfs: 'local-lvm:1',
            })
            break
          case 'start':
          case 'stop':
          case 'shutdown':
          case 'reboot':
            await s.call('POST', `${base}/status/${o.k}`)
            break
          case 'template':
            await s.call('POST', `${base}/template`)
            break
          case 'destroy':
            await s.call('DELETE', base)
            break
          case 'config':
            await s.call(
              type === 'qemu' && o.async ? 'POST' : 'PUT',
              `${base}/config`,
              type === 'lxc' ? { cores: 2 } : o.change,
            )
            break
          case 'resize':
            await s.call('PUT', `${base}/resize`, { disk: type === 'lxc' ? 'rootfs' : 'scsi0', size: o.size })
            break
          case 'clone':
            await s.call('POST', `${base}/clone`, { newid: o.newid, full: o.full })
            break
          case 'wait':
            s.advance(o.ms)
            break
        }
      } catch (e) {
        expect(e).toBeInstanceOf(PveHttpError)
      }
      s.advance(after)
    }
    s.advance(120_000)
    expect(s.sim.tasks().every((t) => t.status === 'stopped' && typeof t.exitstatus === 'string')).toBe(true)
    const guests = s.sim.guests()
    for (const g of guests) {
      expect(g.digest).toBe(
        createHash('sha1')
          .update(s.sim.configText(g.vmid) ?? '')
          .digest('hex'),
      )
      expect(g.lock).toBeUndefined()
    }
    for (const storage of ['vmdir', 'local-lvm', 'local-zfs']) {
      for (const v of s.sim.storageContent('pve1', storage)) {
        if (v.content !== 'images' && v.content !== 'rootdir') continue
        const volname = String(v.volid).split(':')[1] ?? ''
        const all = s.sim.storageContent('pve1', storage)
        // a base volume linked clones use: its template's destroy is refused, or the clone keeps it
        if (all.some((x) => x.parent === volname || String(x.volid).includes(`${volname}/`))) continue
        const owner = guests.find((g) => g.vmid === v.vmid)
        expect(owner, `${String(v.volid)} has no owner`).toBeDefined()
        const text = s.sim.configText(owner?.vmid ?? 0) ?? ''
        expect(
          text.includes(String(v.volid).split(':')[1] ?? '?'),
          `${String(v.volid)} is not referenced by ${owner?.vmid}`,
        ).toBe(true)
      }
    }
  })
})
