/** The README example, run as written. */
import { describe, expect, it } from 'vitest'
import { DEFAULT_POLICY, plan, serializePlan, type DesiredState, type LiveInventory } from './index.js'

describe('README example', () => {
  it('plans one create with the documented request', () => {
    const desired: DesiredState = {
      cluster: 'homelab',
      manifests: [
        {
          kind: 'VM',
          metadata: { name: 'web', annotations: {} },
          spec: {
            node: 'pve1',
            vmid: 100,
            state: 'started',
            memory: 2048,
            cpu: { type: 'host', cores: 2 },
            disks: [{ storage: 'local-lvm', size: 32 * 1024 ** 3, interface: 'scsi0', iothread: true }],
            networks: [{ model: 'virtio', bridge: 'vmbr0', firewall: false, slot: 'net0' }],
            'pve-name': 'web',
            tags: ['prod'],
            extra: {},
          },
        },
      ],
    }
    const live: LiveInventory = {
      cluster: 'homelab',
      pveVersion: '9.1',
      nodes: [{ node: 'pve1', online: true }],
      guests: [],
      unknownGuests: [],
      storages: [],
      volumes: [],
      unreadableStorages: [],
    }
    const p = plan(desired, live, { ...DEFAULT_POLICY, nodes: ['pve1'] })
    expect(p.actions.map((a) => `${a.type} ${a.address}: ${a.reason}`)).toEqual([
      'create VM/pve1/100(web): VM/web: not on PVE; will create',
    ])
    expect(p.actions[0]?.requests[0]).toEqual({
      call: 'createGuest',
      node: 'pve1',
      guest: 'qemu',
      params: {
        cores: 2,
        cpu: 'host',
        memory: 2048,
        name: 'web',
        net0: 'virtio,bridge=vmbr0',
        scsi0: 'local-lvm:32,iothread=1',
        start: 1,
        tags: 'prod;proxops',
        vmid: 100,
      },
    })
    expect(serializePlan(p)).toBe(serializePlan(plan(desired, live, { ...DEFAULT_POLICY, nodes: ['pve1'] })))
  })
})
