/**
 * ClusterOptions against the simulator's /cluster/options (pve-manager PVE::API2::Cluster get_options /
 * set_options) with the real client: the declared keys converge in one apply, a hand edit of one is put back, a key
 * removed from git is left as it is (never reset), and adopt writes a manifest that plans nothing.
 */
import { expect, it } from 'vitest'
import type { PveClient } from '@proxops/pve-client'
import { parseManifest, type Manifest } from '@proxops/schema'
import { useSimPve } from '../../test-support/use-sim.js'
import { reconcile } from '../../reconcile/reconcile.js'
import { observe } from '../../observe/observe.js'
import { adopt } from '../../adopt/adopt.js'
import { desired, policy } from '../../fixtures.test.helpers.js'
import { manifest } from '../../testing/manifest.js'

let pve: PveClient
useSimPve({ taskDurationMs: 10 }, 'file', (e) => {
  pve = e.client
})

const pol = policy({ nodes: [] })
const options = (spec: Record<string, unknown>) =>
  manifest({ kind: 'ClusterOptions', metadata: { name: 'datacenter' }, spec })

async function converge(m: Manifest) {
  const { plan: p, report } = await reconcile({ desired: desired(m), reader: pve, writer: pve, policy: pol })
  expect(report?.results.map((r) => r.status)).toEqual(p.actions.map(() => 'ok'))
  expect((await reconcile({ desired: desired(m), reader: pve, policy: pol })).plan.actions).toEqual([])
  return p
}

it('declared keys converge; drift is put back; a key removed from git is never reset', async () => {
  const spec = {
    keyboard: 'de',
    migration: { type: 'secure', network: '10.0.0.0/24' },
    'next-id': { lower: 1000, upper: 2000 },
    description: 'lab cluster',
  }
  const first = await converge(options(spec))
  expect(first.actions.map((a) => [a.address, a.type, a.diffs.map((d) => d.key)])).toEqual([
    ['ClusterOptions/datacenter', 'update', ['description', 'keyboard', 'migration', 'next-id']],
  ])
  expect(await pve.clusterOptions()).toMatchObject({ keyboard: 'de', migration: 'network=10.0.0.0/24,type=secure' })

  await pve.setClusterOptions({ keyboard: 'fr', language: 'de' })
  const drift = await converge(options(spec))
  expect(drift.actions[0]?.diffs).toEqual([{ field: 'spec.keyboard', key: 'keyboard', before: 'fr', after: 'de' }])

  // keyboard leaves git: it stays `de` on PVE, nothing is planned
  const { keyboard, ...rest } = spec
  void keyboard
  expect((await converge(options(rest))).actions).toEqual([])
  expect((await pve.clusterOptions()).keyboard).toBe('de')
})

it('adopt writes the options PVE holds; the adopted manifest plans nothing', async () => {
  const live = await observe('homelab', pve, { clusterOptions: true })
  const files = adopt(live, { cluster: 'homelab' }).files.filter((f) => f.kind === 'ClusterOptions')
  expect(files.map((f) => f.path)).toEqual(['cluster-options/homelab/datacenter.yaml'])
  expect(files[0]?.document.spec).toMatchObject({
    keyboard: 'de',
    language: 'de',
    'next-id': { lower: '1000', upper: '2000' },
  })
  const r = parseManifest(files[0]!.document)
  if (!r.ok) throw new Error(JSON.stringify(r.issues))
  expect((await reconcile({ desired: desired(r.manifest), reader: pve, policy: pol })).plan.actions).toEqual([])
})
