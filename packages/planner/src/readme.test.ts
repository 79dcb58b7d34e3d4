/** The README example, run as written. */
import { parseManifest } from '@proxops/schema'
import { describe, expect, it } from 'vitest'
import { DEFAULT_POLICY, plan, serializePlan, type DesiredState, type LiveInventory } from './index.js'

describe('README example', () => {
  it('plans one create with the documented request', () => {
    const web = parseManifest({
      apiVersion: 'proxops/v1alpha1',
      kind: 'VM',
      metadata: { name: 'web' },
      spec: {
        node: 'pve1',
        vmid: 100,
        memory: '2GiB',
        cpu: { type: 'host', cores: 2 },
        disks: [{ storage: 'local-lvm', size: '32GiB', iothread: true }],
        networks: [{ bridge: 'vmbr0' }],
        tags: ['prod'],
      },
    })
    if (!web.ok) throw new Error(web.issues.map((i) => i.message).join('; '))
    const desired: DesiredState = { cluster: 'homelab', manifests: [web.manifest] }
    const live: LiveInventory = {
      cluster: 'homelab',
      pveVersion: '9.1',
      nodes: [{ node: 'pve1', online: true }],
      guests: [],
      unknownGuests: [],
      storages: [],
      volumes: [],
      unreadableStorages: [],
      firewalls: [],
      ha: { known: { form: 'rules', resources: [], preferences: [] } },
      backupJobs: { known: [] },
      heldVmids: [],
      pools: { known: [] },
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
