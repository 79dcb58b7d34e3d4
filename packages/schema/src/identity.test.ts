import { afterEach, describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { conflictMessage, identitiesOf, identityIndex } from './identity.js'
import { KINDS, type Kind } from './kinds.js'
import { loadRepository } from './loader/load.js'
import { parseManifest } from './manifest/parse.js'
import type { Manifest } from './manifest/types.js'
import { clone, validManifests } from './test-support/manifests.js'
import { clusterConfig, tempRepo, vmYaml, type TempRepo } from './test-support/repo.js'

/** the valid manifest of `kind`, renamed, with `patch` applied to its spec */
function manifest(kind: Kind, name: string, patch: Record<string, unknown> = {}): Manifest {
  const doc = clone(validManifests[kind])
  doc.metadata.name = name
  Object.assign(doc.spec, patch)
  const r = parseManifest(doc)
  if (!r.ok) throw new Error(JSON.stringify(r.issues))
  return r.manifest
}

/** a second manifest of each kind declaring the PVE object of the first under another name */
const twin: Record<Kind, Record<string, unknown>> = {
  VM: {},
  TemplateVM: {},
  LXC: {},
  TemplateCT: {},
  ISO: {},
  CTTemplate: {},
  DiskImage: {},
  BackupJob: { id: 'nightly' },
  Storage: { id: 'nas' },
  ClusterOptions: {},
  Pool: { id: 'web' },
  Role: { roleid: 'ops-auditor' },
  Group: { groupid: 'ops' },
  User: {},
  Token: { tokenid: 'ci' },
  ACL: {},
  SdnController: { id: 'evpn1' },
  Zone: { id: 'lab' },
  VNet: { id: 'web' },
  Subnet: {},
}

describe('identityIndex', () => {
  it.each(KINDS)('refuses two %s manifests declaring one PVE object, naming both', (kind) => {
    const first = manifest(kind, validManifests[kind].metadata.name)
    const second = manifest(kind, 'second', twin[kind])
    const { conflicts, owner } = identityIndex([first, second])
    expect(conflicts).toHaveLength(1)
    expect(conflicts[0]!.first.manifest).toBe(first)
    expect(conflicts[0]!.second.manifest).toBe(second)
    expect(owner(identitiesOf(second)[0]!.key)).toBe(first)
    const message = conflictMessage(conflicts[0]!, 'a.yaml:1')
    expect(message).toContain(`${kind}/${first.metadata.name}`)
    expect(message).toContain(`${kind}/second`)
    expect(message).toContain('(a.yaml:1)')
  })

  it('guests of any kinds and nodes share one vmid space (PVE vmids are cluster-wide)', () => {
    const vm = manifest('VM', 'a', { vmid: 500 })
    const ct = manifest('LXC', 'b', { vmid: 500, node: 'pve2' })
    const [c] = identityIndex([vm, ct]).conflicts
    expect(c && conflictMessage(c)).toBe(
      'PVE id 500 is declared by both VM/a on node "pve1" and LXC/b on node "pve2"; vmids are unique across the whole cluster',
    )
  })

  it('one file name is two objects in two contents, or on two nodes; one on a shared node is one', () => {
    const iso = manifest('ISO', 'a', { filename: 'x.img', nodes: ['pve1', 'pve2'] })
    const other = manifest('DiskImage', 'b', { filename: 'x.raw' })
    expect(identityIndex([iso, other, manifest('ISO', 'c', { filename: 'x.img', nodes: ['pve3'] })]).conflicts).toEqual(
      [],
    )
    const [c] = identityIndex([iso, manifest('ISO', 'd', { filename: 'x.img', nodes: ['pve3', 'pve2'] })]).conflicts
    expect(c?.second.identity).toMatchObject({ key: 'volume:pve2/local:iso/x.img', code: 'artifact-duplicate' })
  })

  it('a backup job id and a pool id of one spelling are two objects', () => {
    const job = manifest('BackupJob', 'web', {})
    const pool = manifest('Pool', 'web', {})
    expect(identityIndex([job, pool]).conflicts).toEqual([])
  })

  test.prop([fc.array(fc.record({ vmid: fc.integer({ min: 100, max: 105 }), pool: fc.constantFrom('a', 'b', 'c') }))])(
    'reports every declaration after the first of each object, the first as owner',
    (rows) => {
      const manifests = rows.flatMap((r, i) => [
        manifest('VM', `vm${i}`, { vmid: r.vmid }),
        manifest('Pool', `p${i}`, { id: r.pool }),
      ])
      const { conflicts, owner } = identityIndex(manifests)
      const keys = manifests.flatMap((m) => identitiesOf(m).map((x) => x.key))
      expect(conflicts).toHaveLength(keys.length - new Set(keys).size)
      for (const c of conflicts) {
        expect(c.first.identity.key).toBe(c.second.identity.key)
        expect(owner(c.first.identity.key)).toBe(c.first.manifest)
        expect(manifests.indexOf(c.first.manifest)).toBeLessThan(manifests.indexOf(c.second.manifest))
      }
    },
  )
})

describe('validate: one PVE object, one manifest (loader)', () => {
  let repo: TempRepo | undefined
  afterEach(() => repo?.cleanup())
  const jobYaml = (name: string, id?: string) =>
    `apiVersion: proxops/v1alpha1\nkind: BackupJob\nmetadata:\n  name: ${name}\nspec:\n${id ? `  id: ${id}\n` : ''}  schedule: daily\n  storage: local\n  selection: {all: true}\n`

  it('backup-job-id-duplicate: two BackupJobs of one PVE job id, naming both files', async () => {
    repo = tempRepo({
      'clusters/lab/config.yaml': clusterConfig('lab'),
      'clusters/lab/resources.yaml': 'resources:\n  - ../../backupjob/base/a.yaml\n  - ../../backupjob/lab/b.yaml\n',
      'backupjob/base/a.yaml': jobYaml('nightly'),
      'backupjob/lab/b.yaml': jobYaml('weekly', 'nightly'),
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors.map((e) => `${e.file}:${e.line} ${e.code}`)).toEqual([
      'backupjob/lab/b.yaml:6 backup-job-id-duplicate',
    ])
    expect(m.errors[0]?.message).toBe(
      'PVE backup job id "nightly" is declared by both BackupJob/nightly (backupjob/base/a.yaml:1) and BackupJob/weekly',
    )
  })

  it('artifact-duplicate: two ISOs of one file on one node; duplicate-vmid across guest kinds', async () => {
    const iso = (name: string) =>
      `apiVersion: proxops/v1alpha1\nkind: ISO\nmetadata:\n  name: ${name}\nspec:\n  nodes: [pve1]\n  storage: local\n  filename: same.iso\n  url: https://downloads.example.invalid/same.iso\n`
    repo = tempRepo({
      'clusters/lab/config.yaml': clusterConfig('lab'),
      'clusters/lab/resources.yaml':
        'resources:\n  - ../../iso/base/a.yaml\n  - ../../iso/base/b.yaml\n  - ../../vm/base/v.yaml\n  - ../../templatevm/base/t.yaml\n',
      'iso/base/a.yaml': iso('one'),
      'iso/base/b.yaml': iso('two'),
      'vm/base/v.yaml': vmYaml('v', 300),
      'templatevm/base/t.yaml': vmYaml('t', 300, 'pve2').replace('kind: VM', 'kind: TemplateVM'),
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors.map((e) => `${e.file}:${e.line} ${e.code}`)).toEqual([
      'iso/base/b.yaml:8 artifact-duplicate',
      'vm/base/v.yaml:7 duplicate-vmid',
    ])
    expect(m.errors[0]?.message).toBe(
      'file local:iso/same.iso on node "pve1" is declared by both ISO/one (iso/base/a.yaml:1) and ISO/two',
    )
  })
})
