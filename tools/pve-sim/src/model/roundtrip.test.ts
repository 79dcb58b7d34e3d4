import { fc, test } from '@fast-check/vitest'
import { describe, expect } from 'vitest'
import { makeSim } from '../test-support/sim.js'
import { normaliseTags } from './tags.js'

/** whatever is declared at create reads back in PVE's normalised, typed form */
const declared = fc.record(
  {
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/),
    cores: fc.integer({ min: 1, max: 16 }),
    sockets: fc.integer({ min: 1, max: 2 }),
    memory: fc.integer({ min: 16, max: 65536 }).map(String),
    onboot: fc.boolean(),
    tags: fc
      .array(fc.stringMatching(/^[A-Za-z0-9][a-z0-9_.+-]{0,6}$/), { minLength: 1, maxLength: 4 })
      .map((t) => t.join(';')),
    description: fc.stringMatching(/^[ -~\n]{0,30}$/),
    cpulimit: fc.constantFrom('0.5', '1', '2.25'),
  },
  { requiredKeys: ['name'] },
)

describe('create -> GET config round-trip (property)', () => {
  test.prop([declared, fc.integer({ min: 100, max: 999999 })], { numRuns: 60 })(
    'declared values come back normalised and typed',
    async (d, vmid) => {
      const s = makeSim()
      const r = await s.run('POST', '/nodes/pve1/qemu', {
        vmid,
        ...d,
        scsi0: 'local-lvm:1',
        net0: 'virtio,bridge=vmbr0',
      })
      expect(r.exitstatus).toBe('OK')
      const conf = await s.call('GET', `/nodes/pve1/qemu/${vmid}/config`)
      expect(conf.name).toBe(d.name)
      if (d.cores !== undefined) expect(conf.cores).toBe(d.cores)
      if (d.sockets !== undefined) expect(conf.sockets).toBe(d.sockets)
      if (d.memory !== undefined) expect(conf.memory).toBe(d.memory)
      if (d.onboot !== undefined) expect(conf.onboot).toBe(d.onboot ? 1 : 0)
      if (d.tags !== undefined) expect(conf.tags).toBe(normaliseTags(d.tags))
      if (d.cpulimit !== undefined) expect(conf.cpulimit).toBe(d.cpulimit)
      if (d.description !== undefined) {
        const trimmed = d.description.replace(/\s+$/, '')
        if (trimmed === '') expect(conf.description ?? '').toBe('')
        else expect(conf.description).toBe(trimmed)
      }
      expect(conf.scsi0).toBe(`local-lvm:vm-${vmid}-disk-0,size=1G`)
      // a second write of the read-back values is a no-op for the file
      const digest = conf.digest
      await s.call('PUT', `/nodes/pve1/qemu/${vmid}/config`, { name: conf.name, net0: conf.net0, scsi0: conf.scsi0 })
      expect((await s.call('GET', `/nodes/pve1/qemu/${vmid}/config`)).digest).toBe(digest)
    },
  )
})
