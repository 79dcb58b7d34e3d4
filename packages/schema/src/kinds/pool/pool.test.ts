/**
 * The Pool kind and `spec.pool`: pve-access-control verify_poolname (`pve-poolid`) and pve-manager
 * PVE::API2::Pool create_pool (every new level starts with a letter, the parent must exist first).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { parseManifest } from '../../manifest/parse.js'
import { poolNeeded } from '../../graph.js'
import { clone, validManifests } from '../../test-support/manifests.js'
import { loadRepository } from '../../loader/load.js'
import { clusterConfig, tempRepo, vmYaml, type TempRepo } from '../../test-support/repo.js'

const problems = (doc: unknown): string[] => {
  const r = parseManifest(doc)
  return r.ok ? [] : r.issues.map((i) => `${i.path.join('.')}: ${i.code}: ${i.message}`)
}
const pool = (metadata: Record<string, unknown>, spec: Record<string, unknown>) => ({
  ...clone(validManifests.Pool),
  metadata,
  spec,
})

describe('Pool', () => {
  it('spec.id defaults to metadata.name; the comment is kept as written', () => {
    const r = parseManifest(validManifests.Pool)
    expect(r.ok && r.manifest.kind === 'Pool' && r.manifest.spec).toEqual({ id: 'web', comment: 'web tier' })
    const nested = parseManifest(pool({ name: 'blue' }, { id: 'web/blue' }))
    expect(nested.ok && nested.manifest.spec).toEqual({ id: 'web/blue' })
    expect(nested.ok && poolNeeded(nested.manifest)).toEqual({ id: 'web', path: ['spec', 'id'] })
  })

  it('create_pool: each level starts with a letter, at most three levels, one-line comments', () => {
    expect(problems(pool({ name: '1st' }, {}))).toEqual([
      'metadata.name: field-invalid: "1st" cannot be a PVE pool id: letters, digits, ".", "-" and "_", in at most three "/"-separated levels each starting with a letter; set spec.id',
    ])
    expect(problems(pool({ name: 'a' }, { id: 'a/b/c/d' }))[0]).toMatch(
      /^spec\.id: field-invalid: must be a PVE pool id/,
    )
    expect(problems(pool({ name: 'a' }, { id: 'a/9' }))[0]).toMatch(/^spec\.id: field-invalid/)
    expect(problems(pool({ name: 'a' }, { comment: 'two\nlines' }))).toEqual([
      'spec.comment: field-invalid: must be a single line',
    ])
    expect(problems(pool({ name: 'a' }, { members: [100] }))[0]).toMatch(/^spec\.members: field-unknown: unknown field/)
  })

  it('spec.pool on guests takes any pve-poolid (a pool made by hand may start with a digit)', () => {
    const vm = clone(validManifests.VM)
    vm.spec.pool = '1legacy/sub'
    const r = parseManifest(vm)
    expect(r.ok && r.manifest.kind === 'VM' && r.manifest.spec.pool).toBe('1legacy/sub')
    expect(r.ok && poolNeeded(r.manifest)).toEqual({ id: '1legacy/sub', path: ['spec', 'pool'] })
    const ct = clone(validManifests.TemplateCT)
    ct.spec.pool = 'bad pool'
    expect(problems(ct)[0]).toMatch(/^spec\.pool: field-invalid: must be a PVE pool id/)
    const iso = parseManifest(validManifests.ISO)
    expect(iso.ok && poolNeeded(iso.manifest)).toBeUndefined()
  })
})

describe('Pool in a cluster', () => {
  let repo: TempRepo | undefined
  afterEach(() => repo?.cleanup())
  const poolYaml = (name: string, id?: string) =>
    `apiVersion: proxops/v1alpha1\nkind: Pool\nmetadata:\n  name: ${name}\nspec:\n${id ? `  id: ${id}\n` : '  {}\n'}`

  it('a guest and a nested pool come after the Pool they name; an undeclared pool is PVE-managed', async () => {
    repo = tempRepo({
      'clusters/lab/config.yaml': clusterConfig('lab'),
      'clusters/lab/resources.yaml':
        'resources:\n  - ../../pool/base/p.yaml\n  - ../../vm/base/a.yaml\n  - ../../vm/base/b.yaml\n',
      'pool/base/p.yaml': `${poolYaml('web')}---\n${poolYaml('blue', 'web/blue')}`,
      'vm/base/a.yaml': vmYaml('a', 100, 'pve1', '  pool: web/blue\n'),
      'vm/base/b.yaml': vmYaml('b', 101, 'pve1', '  pool: by-hand\n'),
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors).toEqual([])
    const graph = m.clusters[0]!.graph
    expect(graph.dependsOn.get('VM/a')).toEqual(['Pool/blue'])
    expect(graph.dependsOn.get('Pool/blue')).toEqual(['Pool/web'])
    expect(graph.dependsOn.get('VM/b')).toEqual([])
    expect(graph.level.get('VM/a')).toBe(2)
  })

  it('pool-id-duplicate: two Pools cannot declare one PVE pool', async () => {
    repo = tempRepo({
      'clusters/lab/config.yaml': clusterConfig('lab'),
      'clusters/lab/resources.yaml': 'resources:\n  - ../../pool/base/p.yaml\n',
      'pool/base/p.yaml': `${poolYaml('web')}---\n${poolYaml('other', 'web')}`,
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors.map((e) => `${e.file}:${e.line} ${e.code}`)).toEqual(['pool/base/p.yaml:13 pool-id-duplicate'])
    expect(m.errors[0]?.message).toBe(
      'PVE pool id "web" is declared by both Pool/web (pool/base/p.yaml:1) and Pool/other',
    )
  })
})
