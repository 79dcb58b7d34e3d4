import { describe, expect, it } from 'vitest'
import { policyFor, readHint } from './cycle.js'
import { mergeConfig } from '../config/resolve.js'
import { parseConfigFile } from '../config/raw.js'

describe('policyFor', () => {
  it('maps config to the planner policy: entry, allowlist, budget, disruption (cluster over process), shutdown timeout', () => {
    const raw = parseConfigFile(
      '/r/clusters/a/config.yaml',
      'pve:\n  clusters:\n    a:\n      base-url: https://a:8006\n      nodes: [n1]\n      disruption: none\n',
      'a',
    )
    const config = mergeConfig({ root: '/r', clusterFiles: [{ name: 'a', raw }], flags: {}, home: '/h', cwd: '/r' })
    const cluster = {
      ...(config.clusters[0] as (typeof config.clusters)[0]),
      credentials: { method: 'token' as const, tokenId: 'a@b!c', secret: 's' },
    }
    const resolved = { ...config, clusters: [cluster] }
    const policy = policyFor({ cluster, config: resolved, pruneBudget: 0, allowEmpty: ['VM'] })
    expect(policy).toMatchObject({
      nodes: ['n1'],
      pruneBudget: 0,
      allowEmpty: ['VM'],
      disruption: 'none',
      shutdownTimeoutSeconds: 120,
      ownershipTag: 'proxops',
      clusterEntry: 'a',
    })
    const { disruption: _d, ...noOwn } = cluster
    expect(policyFor({ cluster: noOwn, config: resolved, pruneBudget: 'unlimited' }).disruption).toBe('stop')
  })
})

describe('readHint', () => {
  const cluster = { name: 'lab', baseUrl: 'https://pve:8006' } as Parameters<typeof readHint>[1]
  it('points at credentials, TLS or the endpoint', () => {
    expect(readHint('GET /version: 401 Authentication failed!', cluster)).toBe(
      'check the PVE credentials of pve.clusters.lab (token or password, and its privileges)',
    )
    expect(readHint('PVE cert fingerprint mismatch', cluster)).toBe(
      'check pve.clusters.lab.tls (fingerprint or ca) against the PVE certificate',
    )
    expect(readHint('network error (ECONNREFUSED)', cluster)).toBe(
      'check that pve.clusters.lab.base-url (https://pve:8006) is right and PVE is reachable',
    )
  })
})
