import { describe, expect, it } from 'vitest'
import { KIND_ALIASES, KINDS, type Kind, type Manifest } from '@proxops/schema'
import { keyOf, levels } from './deps.js'
import { manifest } from '../testing/manifest.js'
import { plan } from '../plan/plan.js'
import { PlanInputError } from '../errors.js'
import {
  accessManifest,
  artifact,
  backupJob,
  desired,
  inventory,
  lxc,
  policy,
  pool,
  storage,
  vm,
} from '../fixtures.test.helpers.js'

const withDeps = <M extends Manifest>(m: M, deps: string): M => ({
  ...m,
  metadata: { ...m.metadata, annotations: { 'proxops/depends-on': deps } },
})
const index = (...ms: Manifest[]) => new Map(ms.map((m) => [keyOf(m.kind, m.metadata.name), m]))

/** one manifest of `kind` named `name` (guests at `vmid`), as the parser reads it */
function ofKind(kind: Kind, name: string, vmid: number): Manifest {
  switch (kind) {
    case 'VM':
    case 'TemplateVM':
      return vm(name, vmid, {}, kind)
    case 'LXC':
    case 'TemplateCT':
      return lxc(name, vmid, {}, kind)
    case 'ISO':
    case 'CTTemplate':
    case 'DiskImage':
      return artifact(kind, name, `${name}.${kind === 'ISO' ? 'iso' : kind === 'DiskImage' ? 'qcow2' : 'tar.zst'}`)
    case 'BackupJob':
      // a job may select only guests this entry manages: `all` reaches none in an empty cluster
      return backupJob(name, { selection: { all: true } })
    case 'Pool':
      return pool(name)
    case 'Role':
      return accessManifest(kind, name, { privs: ['VM.Audit'] })
    case 'Group':
      return accessManifest(kind, name, {})
    case 'User':
      return accessManifest(kind, name, { userid: `${name}@pve` })
    case 'Token':
      return accessManifest(kind, name, { userid: 'root@pam' })
    case 'ACL':
      return accessManifest(kind, name, { path: `/vms/${vmid}`, roles: ['PVEAuditor'], users: ['root@pam'] })
    case 'SdnController':
      return manifest({ kind, metadata: { name }, spec: { asn: 65000, peers: ['10.0.0.1'] } })
    case 'Zone':
      return manifest({ kind, metadata: { name: name.slice(0, 8) }, spec: { type: 'simple' } })
    case 'VNet':
      return manifest({ kind, metadata: { name: name.slice(0, 8) }, spec: { zone: 'byhand' } })
    case 'Subnet':
      return manifest({ kind, metadata: { name }, spec: { vnet: 'byhand', cidr: `10.${name.length}.0.0/24` } })
    case 'Storage':
      return storage(name)
    case 'ClusterOptions':
      return manifest({ kind: 'ClusterOptions', metadata: { name }, spec: { keyboard: 'de' } })
  }
}

/** where plan() records a manifest's actions (what a dependant's `requires` names) */
function addressOf(m: Manifest): string {
  if (
    m.kind === 'BackupJob' ||
    m.kind === 'Pool' ||
    m.kind === 'Storage' ||
    m.kind === 'Zone' ||
    m.kind === 'VNet' ||
    m.kind === 'SdnController'
  )
    return `${m.kind}/${m.spec.id}`
  if (m.kind === 'Subnet') return `Subnet/${m.spec.vnet}/${m.spec.cidr}`
  if (m.kind === 'Role') return `Role/${m.spec.roleid}`
  if (m.kind === 'Group') return `Group/${m.spec.groupid}`
  if (m.kind === 'User') return `User/${m.spec.userid}`
  if (m.kind === 'Token') return `Token/${m.spec.userid}!${m.spec.tokenid}`
  if (m.kind === 'ACL') return `ACL/${m.spec.path}(${m.metadata.name})`
  if (m.kind === 'ClusterOptions') return 'ClusterOptions/datacenter'
  if (m.kind === 'ISO' || m.kind === 'CTTemplate' || m.kind === 'DiskImage')
    return `${m.kind}/pve1/${m.spec.storage}/${m.spec.filename}`
  return `${m.kind}/pve1/${m.spec.vmid}(${m.metadata.name})`
}

describe('dependency levels (the schema graph)', () => {
  it('levels: 0 without prerequisites, else 1 + the highest; prerequisites are the structured edges and the annotation', () => {
    const l = levels(
      index(
        artifact('CTTemplate', 'debian-12', 'd.tar.zst'),
        pool('web'),
        lxc('db', 200, { pool: 'web' }),
        withDeps(vm('web', 100), ' lxc:db , , POOL:web'),
      ),
    )
    expect([...l].map(([k, v]) => [k, v.level, v.prereqs])).toEqual([
      ['CTTemplate/debian-12', 0, []],
      ['Pool/web', 0, []],
      ['LXC/db', 1, ['CTTemplate/debian-12', 'Pool/web']],
      ['VM/web', 2, ['LXC/db', 'Pool/web']],
    ])
  })

  it('rejects cycles (showing the path), unknown targets and malformed items, naming the manifest', () => {
    const a = withDeps(vm('a', 100), 'VM:b')
    const b = withDeps(vm('b', 101), 'VM:a')
    expect(() => levels(index(a, b))).toThrow('VM/a: dependency cycle: VM/a → VM/b → VM/a')
    const unknown = (): unknown => levels(index(withDeps(vm('a', 100), 'VM:nope')))
    expect(unknown).toThrow(PlanInputError)
    expect(unknown).toThrow('VM/a: depends on VM/nope, which is not in this cluster')
    expect(() => levels(index(withDeps(vm('a', 100), 'Bogus:x')))).toThrow(/VM\/a: .*unknown kind "Bogus"/)
  })

  it("a pool id no Pool declares is PVE's own: no prerequisite and no error", () => {
    expect(levels(index(vm('a', 100, { pool: 'elsewhere' }))).get('VM/a')).toEqual({ level: 0, prereqs: [] })
  })

  // validate accepts `proxops/depends-on` naming any kind, in any accepted spelling: plan() orders by every one
  for (const dependant of KINDS)
    it(`plan(): a ${dependant} with depends-on naming each kind waits for it`, () => {
      for (const target of KINDS)
        for (const spelling of KIND_ALIASES[target]) {
          // a cluster has one datacenter.cfg: two ClusterOptions are a duplicate, not a dependency
          if (target === 'ClusterOptions' && dependant === 'ClusterOptions') continue
          const t = ofKind(target, 'target', 101)
          const d = withDeps(ofKind(dependant, 'dependant', 201), `${spelling.toLowerCase()}:target`)
          const manifests = [artifact('CTTemplate', 'debian-12', 'debian-12.tar.zst'), t, d]
          const p = plan(
            desired(...manifests),
            inventory([], { storageConfigs: { known: [] }, clusterOptions: { known: {} } }),
            policy(),
          )
          const mine = p.actions.filter((a) => a.address === addressOf(d))
          const theirs = p.actions.filter((a) => a.address === addressOf(t))
          expect(mine.length, `${dependant} → ${spelling}`).toBeGreaterThan(0)
          expect(theirs.length, `${dependant} → ${spelling}`).toBeGreaterThan(0)
          for (const a of mine) {
            expect(a.requires, `${dependant} → ${spelling}`).toContain(addressOf(t))
            for (const b of theirs) {
              expect(a.dependsOn, `${dependant} → ${spelling}`).toContain(b.id)
              expect(a.level).toBeGreaterThan(b.level)
            }
          }
        }
    })
})
