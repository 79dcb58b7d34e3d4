import { describe, expect, it } from 'vitest'
import type { LiveInventory } from '@proxops/planner'
import { CliError } from '../errors.js'
import { fixturePlan } from '../render/fixtures.test-support.js'
import { checkSavedPlan, policyFor, readHint } from './cycle.js'
import { mergeConfig } from '../config/resolve.js'
import { parseConfigFile } from '../config/raw.js'

const tree = { root: '/r', commit: '0123456789abcdef0123456789abcdef01234567', dirty: false, stale: false }
const guest = (vmid: number, digest: string) => ({
  type: 'qemu' as const,
  vmid,
  node: 'pve2',
  template: false,
  status: 'running',
  tags: [],
  digest,
  config: {},
  pending: {},
  pendingDeletes: [],
})
const live = (guests: ReturnType<typeof guest>[], unknown: number[] = []): LiveInventory => ({
  cluster: 'homelab',
  pveVersion: '9.1',
  nodes: [],
  guests,
  unknownGuests: unknown.map((vmid) => ({
    type: 'qemu' as const,
    vmid,
    node: 'pve1',
    tags: [],
    reason: 'read failed',
  })),
  storages: [],
  volumes: [],
  unreadableStorages: [],
})

function refusal(fn: () => void): string {
  try {
    fn()
  } catch (e) {
    expect(e).toBeInstanceOf(CliError)
    return (e as CliError).message
  }
  return ''
}

describe('checkSavedPlan', () => {
  const plan = fixturePlan()
  it('accepts the plan when commit and digests still hold', () => {
    expect(refusal(() => checkSavedPlan(plan, tree, live([guest(101, 'abc'), guest(300, 'x')])))).toBe('')
  })
  it('refuses a moved commit, a changed digest, an unreadable object and a create that exists', () => {
    expect(refusal(() => checkSavedPlan(plan, { ...tree, commit: 'fff' }, live([guest(101, 'abc')])))).toMatch(
      /made at commit 0123456789abcdef0123456789abcdef01234567, the repository is now at fff/,
    )
    expect(refusal(() => checkSavedPlan(plan, tree, live([guest(101, 'changed')])))).toMatch(
      /VM\/pve2\/101\(db\) changed on PVE since the plan was made/,
    )
    expect(refusal(() => checkSavedPlan(plan, tree, live([guest(101, 'abc')], [300])))).toMatch(
      /LXC\/pve3\/300 cannot be read now/,
    )
    expect(refusal(() => checkSavedPlan(plan, tree, live([guest(101, 'abc'), guest(100, 'new')])))).toMatch(
      /VM\/pve1\/100\(web\) exists on PVE now but the plan creates it/,
    )
  })
})

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
