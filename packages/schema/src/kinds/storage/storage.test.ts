/**
 * The Storage kind: pve-storage's plugin `options` (which keys each type has, SectionConfig check_config's
 * `unexpected property`), the required ones, parse_storage_id, validate_prune_backups and the sensitive properties
 * (Plugin::sensitive_properties) as SOPS references.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { loadRepository } from '../../loader/load.js'
import { clusterConfig, tempRepo, vmYaml, type TempRepo } from '../../test-support/repo.js'
import { parseManifest } from '../../manifest/parse.js'
import { clone, validManifests } from '../../test-support/manifests.js'

const problems = (doc: unknown): string[] => {
  const r = parseManifest(doc)
  return r.ok ? [] : r.issues.map((i) => `${i.path.join('.')}: ${i.code}: ${i.message}`)
}
const storage = (name: string, spec: Record<string, unknown>) => ({
  ...clone(validManifests.Storage),
  metadata: { name },
  spec,
})

describe('Storage', () => {
  it('spec.id defaults to metadata.name; content and nodes sorted and unique', () => {
    const r = parseManifest(
      storage('nas', {
        type: 'nfs',
        server: 's',
        export: '/e',
        content: ['iso', 'images', 'iso'],
        nodes: ['pve2', 'pve1'],
      }),
    )
    expect(r.ok && r.manifest.kind === 'Storage' && r.manifest.spec).toEqual({
      id: 'nas',
      type: 'nfs',
      server: 's',
      export: '/e',
      content: ['images', 'iso'],
      nodes: ['pve1', 'pve2'],
    })
  })

  it("check_config: an option the type's plugin has not is refused; the required ones must be there", () => {
    expect(problems(storage('zz', { type: 'zfspool', pool: 'rpool/data', path: '/x' }))).toEqual([
      "spec.path: field-invalid: a zfspool storage has no option path (pve-storage's zfspool plugin)",
    ])
    expect(problems(storage('bb', { type: 'pbs', server: 'pbs' }))).toEqual([
      'spec.datastore: field-invalid: a pbs storage needs datastore',
    ])
    expect(problems(storage('tt', { type: 'lvmthin', vgname: 'pve' }))).toEqual([
      'spec.thinpool: field-invalid: a lvmthin storage needs thinpool',
    ])
    expect(problems(storage('xx', { type: 'iscsi' }))[0]).toMatch(
      /^spec\.type: field-invalid: must be one of: dir, nfs/,
    )
  })

  it('parse_storage_id: a letter first, letters, digits, - _ . inside, no separator last', () => {
    expect(problems(storage('ok', { id: '9nas', type: 'dir', path: '/srv' }))[0]).toMatch(
      /^spec\.id: field-invalid: "9nas" cannot be a PVE storage id/,
    )
    expect(problems(storage('ok', { id: 'nas-', type: 'dir', path: '/srv' }))[0]).toMatch(/^spec\.id: field-invalid/)
  })

  it('sensitive properties are SOPS references `secrets.<name>`, only where the type has them', () => {
    expect(
      problems(
        storage('bb', {
          type: 'pbs',
          server: 'p',
          datastore: 'd',
          'password-ref': 'secrets.pbs-pw',
          'encryption-key-ref': 'secrets.pbs-key',
        }),
      ),
    ).toEqual([])
    expect(problems(storage('bb', { type: 'pbs', server: 'p', datastore: 'd', 'password-ref': 'hunter2' }))).toEqual([
      'spec.password-ref: ref-invalid: password-ref must look like secrets.<name> (lowercase letters, digits, "-"), got "hunter2"',
    ])
    expect(problems(storage('nn', { type: 'nfs', server: 's', export: '/e', 'password-ref': 'secrets.x' }))).toEqual([
      'spec.password-ref: field-invalid: a nfs storage has no password',
    ])
    expect(
      problems(storage('bb', { type: 'pbs', server: 'p', datastore: 'd', 'master-pubkey-ref': 'secrets.m' })),
    ).toEqual([
      'spec.master-pubkey-ref: field-invalid: master-pubkey needs encryption-key-ref too (PBSPlugin on_add_hook)',
    ])
    // a plain password field does not exist: a credential is never written into a manifest
    expect(problems(storage('cc', { type: 'cifs', server: 's', share: 'x', password: 'hunter2' }))[0]).toMatch(
      /^spec\.password: field-unknown/,
    )
  })

  it('validate_prune_backups: nothing positive is keep-all; keep-all with a positive keep-N is refused', () => {
    const r = parseManifest(
      storage('dd', { type: 'dir', path: '/srv', 'prune-backups': { 'keep-daily': 7, 'keep-last': 0 } }),
    )
    expect(r.ok && r.manifest.kind === 'Storage' && r.manifest.spec['prune-backups']).toEqual({ 'keep-daily': 7 })
    const all = parseManifest(storage('dd', { type: 'dir', path: '/srv', 'prune-backups': {} }))
    expect(all.ok && all.manifest.kind === 'Storage' && all.manifest.spec['prune-backups']).toEqual({ 'keep-all': 1 })
    expect(
      problems(storage('dd', { type: 'dir', path: '/srv', 'prune-backups': { 'keep-all': true, 'keep-last': 2 } })),
    ).toEqual(['spec.prune-backups.keep-all: field-invalid: keep-all cannot be set together with a positive keep-N'])
  })
})

describe('Storage in a cluster', () => {
  let repo: TempRepo | undefined
  afterEach(() => repo?.cleanup())
  const yaml = (name: string, id?: string) =>
    `apiVersion: proxops/v1alpha1\nkind: Storage\nmetadata:\n  name: ${name}\nspec:\n${id ? `  id: ${id}\n` : ''}  type: dir\n  path: /srv/${name}\n`

  it('storage-id-duplicate: two Storages cannot declare one storage.cfg section', async () => {
    repo = tempRepo({
      'clusters/lab/config.yaml': clusterConfig('lab'),
      'clusters/lab/resources.yaml': 'resources:\n  - ../../storage/base/s.yaml\n',
      'storage/base/s.yaml': `${yaml('data')}---\n${yaml('other', 'data')}`,
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors.map((e) => e.code)).toEqual(['storage-id-duplicate'])
    expect(m.errors[0]?.message).toMatch(/^PVE storage id "data" is declared by both Storage\/data/)
  })
})

describe('what names a storage depends on the Storage declaring it', () => {
  let repo: TempRepo | undefined
  afterEach(() => repo?.cleanup())
  it('a guest on a declared storage, and a backup job to one, come after it; a storage PVE has is no edge', async () => {
    repo = tempRepo({
      'clusters/lab/config.yaml': clusterConfig('lab'),
      'clusters/lab/resources.yaml':
        'resources:\n  - ../../storage/base/s.yaml\n  - ../../vm/base/a.yaml\n  - ../../backupjob/base/j.yaml\n',
      'storage/base/s.yaml':
        'apiVersion: proxops/v1alpha1\nkind: Storage\nmetadata:\n  name: fast\nspec:\n  type: zfspool\n  pool: tank/vm\n',
      'vm/base/a.yaml': vmYaml('a', 100).replace(
        'disks: [{storage: local-lvm, size: 8GiB}]',
        'disks: [{storage: fast, size: 8GiB}, {storage: local-lvm, size: 8GiB}]',
      ),
      'backupjob/base/j.yaml':
        'apiVersion: proxops/v1alpha1\nkind: BackupJob\nmetadata:\n  name: nightly\nspec:\n  schedule: daily\n  storage: fast\n  selection: {vmids: [100]}\n',
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors).toEqual([])
    const graph = m.clusters[0]!.graph
    expect(graph.dependsOn.get('VM/a')).toEqual(['Storage/fast'])
    expect(graph.dependsOn.get('BackupJob/nightly')).toEqual(['Storage/fast'])
  })
})
