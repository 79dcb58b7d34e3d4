/**
 * adopt for storages, then plan: a storage adopted from `GET /storage` plans no change (every key read back the
 * way it is written), options Storage does not model are gaps, and a credential is never written into the
 * manifest: a `secrets.<name>` reference to fill in instead, the file listed as incomplete.
 */
import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { parseManifest, type Manifest } from '@proxops/schema'
import { adopt } from '../../adopt/adopt.js'
import { desired, inventory, policy } from '../../fixtures.test.helpers.js'
import { plan } from '../../plan/plan.js'
import type { LiveStorageConfig } from '../../inventory.js'

const parsed = (document: Record<string, unknown>): Manifest => {
  const r = parseManifest(document)
  if (!r.ok) throw new Error(JSON.stringify(r.issues))
  return r.manifest
}
const adoptThenPlan = (sections: LiveStorageConfig[]) => {
  const live = inventory([], { storageConfigs: { known: sections } })
  const result = adopt(live, { cluster: 'homelab' })
  const manifests = result.files.map((f) => parsed(f.document))
  const p = plan(desired(...manifests), live, policy(), { secrets: () => undefined })
  return { result, p }
}

describe('adopt Storage', () => {
  it('each section becomes a manifest that plans nothing; unmodelled keys are gaps', () => {
    const { result, p } = adoptThenPlan([
      {
        storage: 'local',
        type: 'dir',
        values: { path: '/var/lib/vz', content: 'backup,iso,vztmpl', 'content-dirs': 'iso=isos' },
      },
      {
        storage: 'local-lvm',
        type: 'lvmthin',
        values: { vgname: 'pve', thinpool: 'data', content: 'images,rootdir', nodes: 'pve2,pve1' },
      },
      {
        storage: 'nas',
        type: 'nfs',
        values: {
          server: '10.0.0.5',
          export: '/e',
          path: '/mnt/pve/nas',
          content: 'images',
          shared: '1',
          'prune-backups': 'keep-last=3,keep-daily=7',
          disable: '1',
        },
      },
      { storage: 'iscsi0', type: 'iscsi', values: { portal: '10.0.0.7', target: 'iqn.x' } },
    ])
    expect(result.files.map((f) => [f.path, f.incomplete])).toEqual([
      ['storage/homelab/local-lvm.yaml', []],
      ['storage/homelab/local.yaml', []],
      ['storage/homelab/nas.yaml', []],
    ])
    expect(result.files.find((f) => f.name === 'nas')?.document.spec).toEqual({
      type: 'nfs',
      content: ['images'],
      disable: true,
      export: '/e',
      path: '/mnt/pve/nas',
      'prune-backups': { 'keep-daily': 7, 'keep-last': 3 },
      server: '10.0.0.5',
    })
    // nfs is shared by type: `shared` is not an nfs option, so it is a gap, not a manifest key
    expect(result.gaps.map((g) => `${g.id}.${g.field}`)).toEqual(['iscsi0.type', 'nas.shared'])
    expect(p.actions).toEqual([])
    expect(p.anomalies).toEqual([])
  })

  it('a credential in use becomes a reference to fill in, never a value', () => {
    const { result } = adoptThenPlan([
      {
        storage: 'backup',
        type: 'pbs',
        values: { server: 'pbs', datastore: 'd', username: 'u@pbs', 'encryption-key': 'aa:bb', content: 'backup' },
      },
      { storage: 'ceph', type: 'rbd', values: { pool: 'rbd', monhost: '10.0.0.1', content: 'images' } },
    ])
    expect(result.files.map((f) => [f.name, f.document.spec, f.incomplete.length])).toEqual([
      [
        'backup',
        {
          type: 'pbs',
          content: ['backup'],
          datastore: 'd',
          server: 'pbs',
          username: 'u@pbs',
          'password-ref': 'secrets.storage-backup-password',
          'encryption-key-ref': 'secrets.storage-backup-encryption-key',
        },
        2,
      ],
      [
        'ceph',
        {
          type: 'rbd',
          content: ['images'],
          monhost: '10.0.0.1',
          pool: 'rbd',
          'keyring-ref': 'secrets.storage-ceph-keyring',
        },
        1,
      ],
    ])
    expect(JSON.stringify(result)).not.toContain('aa:bb')
  })

  const word = fc.stringMatching(/^[a-z][a-z0-9]{1,8}$/)
  const dirSection = fc.record({
    storage: word,
    type: fc.constant('dir'),
    values: fc.record(
      {
        path: word.map((w) => `/srv/${w}`),
        content: fc.subarray(['images', 'iso', 'vztmpl', 'backup', 'rootdir']).map((c) => c.join(',')),
        nodes: fc.subarray(['pve1', 'pve2', 'pve3'], { minLength: 1 }).map((n) => n.join(',')),
        disable: fc.constantFrom('0', '1'),
        shared: fc.constantFrom('0', '1'),
        'max-protected-backups': fc.integer({ min: -1, max: 9 }).map(String),
        format: fc.constantFrom('raw', 'qcow2'),
      },
      { requiredKeys: ['path'] },
    ),
  })
  test.prop([fc.uniqueArray(dirSection, { selector: (s) => s.storage, maxLength: 6 })])(
    'adopt then plan: no action for any set of dir storages',
    (sections) => {
      const { p } = adoptThenPlan(sections)
      expect(p.actions).toEqual([])
    },
  )
})
