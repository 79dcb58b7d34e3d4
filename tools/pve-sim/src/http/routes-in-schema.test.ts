/**
 * Every route the model serves exists in the PVE schema with that method (9.1 and 8.4), so the HTTP layer
 * validates all of them and no invented path slips in.
 */
import { describe, expect, it } from 'vitest'
import { loadApidoc } from '../apidoc/load.js'
import { RouteIndex } from '../apidoc/route-index.js'
import { createCluster } from '../sim-cluster.js'

describe.each(['9.1', '8.4'] as const)('model routes vs apidoc %s', (version) => {
  const apidoc = loadApidoc(version)
  it.skipIf(!apidoc.ok)('are all schema routes', () => {
    if (!apidoc.ok) return
    const index = RouteIndex.fromTree(apidoc.tree)
    const cluster = createCluster({ nodes: ['pve1'], pveVersion: version, seed: 1, taskDurationMs: 10 })
    const missing = cluster.routes
      .filter((r) => {
        const m = index.match(r.method, r.path.replace(/\{volume\}/, 'local:iso/x.iso').replace(/\{[^}]+\}/g, 'x1'))
        return m?.template !== r.path || !m.info
      })
      .map((r) => `${r.method} ${r.path}`)
    expect(missing).toEqual([])
  })
})
