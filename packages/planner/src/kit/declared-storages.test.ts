/**
 * Storage refusals foreseen against declared storages (issue 42 item 2): a guest on a Storage this plan creates is
 * not refused; one on a declared storage whose `content`, `nodes` or `disable` PVE would refuse is blocked in diff
 * (pve-storage storage_check_enabled, qemu-server create_disks' `images`).
 */
import { describe, expect, it } from 'vitest'
import { desired, inventory, policy, storage, vm } from '../fixtures.test.helpers.js'
import { plan } from '../plan/plan.js'
import { withDeclaredStorages } from './declared-storages.js'
import type { LiveStorage } from '../inventory.js'
import type { QemuManifest } from '@proxops/schema'

const row = (node: string, id: string, content: string[]): LiveStorage => ({
  node,
  storage: id,
  type: 'dir',
  content,
  active: true,
  enabled: true,
  shared: false,
})
const live = [
  row('pve1', 'local', ['iso']),
  row('pve1', 'local-lvm', ['images', 'rootdir']),
  row('pve2', 'local', ['iso']),
]
const onFast = (vmid: number): QemuManifest => {
  const m = vm(`g${vmid}`, vmid)
  return { ...m, spec: { ...m.spec, disks: m.spec.disks.map((d) => ({ ...d, storage: 'fast' })) } } as QemuManifest
}

describe('withDeclaredStorages', () => {
  it('adds a new declared storage on its nodes with its (or its type default) content; a disabled one is gone', () => {
    const out = withDeclaredStorages(live, [storage('fast', { type: 'zfspool', pool: 'tank', nodes: ['pve1'] })])
    expect(out.filter((s) => s.storage === 'fast').map((s) => [s.node, s.content])).toEqual([
      ['pve1', ['images', 'rootdir']],
    ])
    const off = withDeclaredStorages(live, [
      storage('local-lvm', { type: 'lvmthin', vgname: 'pve', thinpool: 'data', disable: true }),
    ])
    expect(off.some((s) => s.storage === 'local-lvm')).toBe(false)
  })
})

describe('storage refusals with declared storages', () => {
  const inv = () => inventory([], { storages: live, storageConfigs: { known: [] } })
  it('a guest on a Storage created in the same plan is planned', () => {
    const p = plan(desired(storage('fast', { type: 'zfspool', pool: 'tank' }), onFast(100)), inv(), policy())
    expect(p.anomalies).toEqual([])
    expect(p.actions.map((a) => [a.address.split('/')[0], a.type])).toEqual([
      ['Storage', 'create'],
      ['VM', 'create'],
    ])
  })
  it('a declared storage without images, off the node or disabled refuses the guest in diff', () => {
    for (const spec of [
      { type: 'dir', path: '/srv/fast', content: ['iso'] },
      { type: 'zfspool', pool: 'tank', nodes: ['pve2'] },
      { type: 'zfspool', pool: 'tank', disable: true },
    ]) {
      const p = plan(desired(storage('fast', spec), onFast(100)), inv(), policy())
      expect(p.actions.filter((a) => a.kind === 'VM')).toEqual([])
      expect(p.anomalies.map((a) => a.code)).toEqual(['storage-refused'])
    }
  })
})
