/**
 * Property tests over random desired sets and random live estates in the simulator (issue 6 "Proof"):
 * apply then plan is empty; plans are deterministic; untagged objects are never touched; deletions per cycle
 * never exceed the budget; no action writes a disk create form over a live volume. Few runs: each one
 * starts a simulator and runs several full cycles.
 */
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { Manifest } from '@proxops/schema'
import {
  DEFAULT_POLICY,
  observe,
  plan,
  serializePlan,
  type LiveInventory,
  type Plan,
  type Policy,
} from '../src/index.js'
import { cycle, failures, manifest, startEnv } from './helpers.js'

interface GuestSpec {
  vmid: number
  node: string
  lxc: boolean
  memMiB: number
  cores: number
  diskGiB: number
  started: boolean
  tags: string[]
  /** whether the guest is in this desired set */
  present: boolean
}

const NODES = ['pve1', 'pve2', 'pve3']
const CTT = manifest({
  kind: 'CTTemplate',
  metadata: { name: 'debian' },
  spec: {
    nodes: NODES,
    storage: 'local',
    filename: 'debian-12.tar.zst',
    url: 'https://images.example/debian-12.tar.zst',
  },
})

function toManifest(g: GuestSpec): Manifest {
  const common = {
    node: g.node,
    vmid: g.vmid,
    memory: `${g.memMiB}MiB`,
    state: g.started ? 'started' : 'stopped',
    tags: g.tags,
  }
  if (g.lxc) {
    return manifest({
      kind: 'LXC',
      metadata: { name: `g${g.vmid}` },
      spec: {
        ...common,
        template: 'debian',
        cpu: { cores: g.cores },
        root: { storage: 'local-lvm', size: `${g.diskGiB}GiB` },
        networks: [{ bridge: 'vmbr0' }],
      },
    })
  }
  return manifest({
    kind: 'VM',
    metadata: { name: `g${g.vmid}` },
    spec: {
      ...common,
      cpu: { type: 'host', cores: g.cores },
      disks: [{ storage: 'local-lvm', size: `${g.diskGiB}GiB` }],
      networks: [{ bridge: 'vmbr0' }],
    },
  })
}

function desiredOf(guests: readonly GuestSpec[]): Manifest[] {
  const out = guests.map(toManifest)
  return guests.some((g) => g.lxc) ? [CTT, ...out] : out
}

/** Identity (vmid, node, kind) is fixed per vmid; everything else varies between the two desired sets. */
const identity = fc.record({ node: fc.constantFrom(...NODES), lxc: fc.boolean() })
const attributes = fc.record({
  memMiB: fc.constantFrom(512, 1024),
  cores: fc.integer({ min: 1, max: 2 }),
  diskGiB: fc.constantFrom(4, 8),
  started: fc.boolean(),
  tags: fc.subarray(['web', 'db']),
  present: fc.boolean(),
})
const scenario = fc.record({
  seed: fc.integer({ min: 1, max: 1000 }),
  untagged: fc.integer({ min: 0, max: 4 }),
  budget: fc.constantFrom<number | 'unlimited'>(0, 1, 2, 'unlimited'),
  guests: fc.array(fc.record({ id: identity, a: attributes, b: attributes }), { minLength: 1, maxLength: 5 }),
})

function noCreateFormOverLiveVolume(p: Plan, live: LiveInventory): void {
  const configs = new Map(live.guests.map((g) => [g.vmid, g.config]))
  for (const action of p.actions) {
    for (const r of action.requests) {
      if (r.call !== 'updateConfig') continue
      for (const [key, value] of Object.entries(r.params)) {
        if (
          !/^(ide|sata|scsi|virtio)\d+$|^efidisk0$|^tpmstate0$|^rootfs$|^mp\d+$/.test(key) ||
          typeof value !== 'string'
        )
          continue
        if (!/^(?:volume=)?[\w.-]+:(\d+(\.\d+)?|cloudinit)(,|$)/.test(value)) continue
        const current = configs.get(r.vmid)?.[key]
        expect(
          current === undefined || current.startsWith('none'),
          `${action.id} writes ${key}=${value} over ${current}`,
        ).toBe(true)
      }
    }
  }
}

describe('planner properties over the simulator', () => {
  it('converges, stays deterministic, keeps its hands off untagged objects, respects the budget and never allocates over a volume', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const env = await startEnv({ seed: s.seed, estate: { guests: s.untagged } })
        try {
          const untaggedBefore = new Map(env.sim.control.guests().map((g) => [g.vmid, g.digest]))
          const policy: Partial<Policy> = { pruneBudget: s.budget, pruneRatioLimit: 1, allowEmpty: ['VM', 'LXC'] }
          const byVmid = new Map<number, { a: GuestSpec; b: GuestSpec }>()
          s.guests.forEach((g, i) => {
            const vmid = 100 + i
            const spec = (attr: typeof g.a): GuestSpec => ({ vmid, node: g.id.node, lxc: g.id.lxc, ...attr })
            byVmid.set(vmid, { a: spec(g.a), b: spec(g.b) })
          })
          const setA = [...byVmid.values()].filter((g) => g.a.present).map((g) => g.a)
          const setB = [...byVmid.values()].filter((g) => g.b.present).map((g) => g.b)

          for (const desired of [desiredOf(setA), desiredOf(setB)]) {
            for (let round = 0; round < 6; round++) {
              const live = await observe('homelab', env.reader)
              const full: Policy = { ...DEFAULT_POLICY, shutdownTimeoutSeconds: 5, ...policy }
              const p1 = plan({ cluster: 'homelab', manifests: desired }, live, full)
              const p2 = plan({ cluster: 'homelab', manifests: desired }, await observe('homelab', env.reader), full)
              expect(serializePlan(p2)).toBe(serializePlan(p1))
              noCreateFormOverLiveVolume(p1, live)
              const deletes = p1.actions.filter((a) => a.type === 'delete').length
              if (s.budget !== 'unlimited') expect(deletes).toBeLessThanOrEqual(s.budget)
              for (const a of p1.actions)
                expect(untaggedBefore.has(a.vmid ?? -1), `${a.id} touches an untagged guest`).toBe(false)
              if (p1.actions.length === 0) break
              const { report } = await cycle(env, desired, { policy })
              expect(failures(report)).toEqual([])
            }
            const settled = await cycle(env, desired, { policy, dryRun: true })
            expect(settled.plan.actions.map((a) => a.id)).toEqual([])
          }
          for (const [vmid, digest] of untaggedBefore) expect(env.sim.control.guest(vmid)?.digest).toBe(digest)
        } finally {
          await env.close()
        }
      }),
      { numRuns: 5, endOnFailure: true },
    )
  })
})
