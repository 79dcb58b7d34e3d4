/**
 * planSdn as a pure function over hand-made pending listings (PVE::Network::SDN pending_config's shape): any
 * pending edit that is not what the manifests declare blocks every SDN write, the plan is byte-identical whatever
 * the order of the listings, and a plan with writes has exactly one SdnApply after all of them.
 */
import { describe, expect } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import type { SdnObject } from '@proxops/pve-client/wire'
import { plan } from '../../plan/plan.js'
import { serializePlan } from '../../serialize.js'
import { desired, inventory, policy } from '../../fixtures.test.helpers.js'
import { manifest } from '../../testing/manifest.js'

const zoneIds = ['za', 'zb', 'zc'] as const
const zone = (id: string) => manifest({ kind: 'Zone', metadata: { name: id }, spec: { type: 'simple', mtu: 1450 } })
const vnet = (id: string, z: string) => manifest({ kind: 'VNet', metadata: { name: id }, spec: { zone: z } })

const liveZone = fc.record({
  id: fc.constantFrom(...zoneIds, 'hand'),
  state: fc.constantFrom<SdnObject['state'] | undefined>(undefined, 'new', 'changed', 'deleted'),
  mtu: fc.constantFrom('1450', '1400'),
  pendingMtu: fc.option(fc.constantFrom('1450', '1500', 'deleted'), { nil: undefined }),
})

const toObject = (z: {
  id: string
  state: SdnObject['state'] | undefined
  mtu: string
  pendingMtu: string | undefined
}): SdnObject => ({
  id: z.id,
  type: 'simple',
  ...(z.state === undefined ? {} : { state: z.state }),
  values: z.state === 'new' ? {} : { mtu: z.mtu },
  pending: z.state === undefined ? {} : z.pendingMtu === undefined ? {} : { mtu: z.pendingMtu },
})

describe('planSdn', () => {
  test.prop([fc.uniqueArray(liveZone, { selector: (z) => z.id, maxLength: 4 }), fc.boolean()], { numRuns: 200 })(
    'foreign pending edits block every SDN write; one apply after every write; same bytes in any order',
    (zones, reverse) => {
      const objects = zones.map(toObject)
      const ms = [...zoneIds.map(zone), vnet('web', 'za')]
      const live = (list: SdnObject[]) =>
        inventory([], { sdn: { known: { zones: list, vnets: [], controllers: [], subnets: [] } } })
      const p = plan(desired(...ms), live(objects), policy())
      const q = plan(
        desired(...(reverse ? [...ms].reverse() : ms)),
        live(reverse ? [...objects].reverse() : objects),
        policy(),
      )
      expect(serializePlan(q)).toBe(serializePlan(p))
      const foreign = objects.filter(
        (o) =>
          (o.state !== undefined || Object.keys(o.pending).length > 0) &&
          !(o.id !== 'hand' && o.state !== 'deleted' && Object.values(o.pending).every((v) => v === '1450')),
      )
      const writes = p.actions.filter((a) => a.requests.some((r) => r.call === 'sdnWrite'))
      const applies = p.actions.filter((a) => a.kind === 'SdnApply')
      if (foreign.length > 0) {
        expect(p.actions).toEqual([])
        expect(p.anomalies.filter((a) => a.code === 'sdn-pending').map((a) => a.address)).toEqual(
          foreign.map((o) => `Zone/${o.id}`).sort(),
        )
      } else {
        expect(applies).toHaveLength(writes.length > 0 || objects.some((o) => o.state !== undefined) ? 1 : 0)
        for (const w of writes) expect(applies[0]?.dependsOn).toContain(w.id)
      }
    },
  )
})
