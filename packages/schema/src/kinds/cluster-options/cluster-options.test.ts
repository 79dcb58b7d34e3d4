/** ClusterOptions: one per cluster (one datacenter.cfg), keys as pve-cluster's DataCenterConfig schema names them. */
import { afterEach, describe, expect, it } from 'vitest'
import { parseManifest } from '../../manifest/parse.js'
import { loadRepository } from '../../loader/load.js'
import { clusterConfig, tempRepo, type TempRepo } from '../../test-support/repo.js'

const doc = (spec: Record<string, unknown>) => ({
  apiVersion: 'proxops/v1alpha1',
  kind: 'ClusterOptions',
  metadata: { name: 'datacenter' },
  spec,
})
const problems = (d: unknown): string[] => {
  const r = parseManifest(d)
  return r.ok ? [] : r.issues.map((i) => `${i.path.join('.')}: ${i.code}`)
}

describe('ClusterOptions', () => {
  it('property-string options are mappings, registered-tags a list; an unknown key is refused', () => {
    const r = parseManifest(
      doc({ migration: { type: 'secure', network: '10.0.0.0/24' }, 'registered-tags': ['prod'], max_workers: 4 }),
    )
    expect(r.ok && r.manifest.spec).toEqual({
      migration: { type: 'secure', network: '10.0.0.0/24' },
      'registered-tags': ['prod'],
      max_workers: 4,
    })
    expect(problems(doc({ u2f: 'x' }))).toEqual(['spec.u2f: field-unknown'])
    expect(problems(doc({ migration: 'type=secure' }))).toEqual(['spec.migration: field-type'])
  })

  let repo: TempRepo | undefined
  afterEach(() => repo?.cleanup())
  it('cluster-options-duplicate: a cluster has one datacenter.cfg', async () => {
    const yaml = (name: string) =>
      `apiVersion: proxops/v1alpha1\nkind: ClusterOptions\nmetadata:\n  name: ${name}\nspec:\n  keyboard: de\n`
    repo = tempRepo({
      'clusters/lab/config.yaml': clusterConfig('lab'),
      'clusters/lab/resources.yaml': 'resources:\n  - ../../cluster-options/lab/o.yaml\n',
      'cluster-options/lab/o.yaml': `${yaml('a')}---\n${yaml('b')}`,
    })
    const m = await loadRepository({ root: repo.root })
    expect(m.errors.map((e) => e.code)).toEqual(['cluster-options-duplicate'])
  })
})
