/**
 * pve-ha-manager PVE::HA::Manager::select_service_node as a pure function: examples of each preference, and
 * properties over random clusters, affinities and scores.
 */
import { describe, expect, it } from 'vitest'
import { fc, test } from '@fast-check/vitest'
import { selectServiceNode, type PlacementInput } from './ha-placement.js'

const NODES = ['pve1', 'pve2', 'pve3', 'pve4']
const base = (over: Partial<PlacementInput> = {}): PlacementInput => ({
  current: 'pve1',
  failedNodes: [],
  failback: true,
  preference: 'none',
  online: ['pve1', 'pve2', 'pve3'],
  together: new Map(),
  separate: new Set(),
  score: new Map([
    ['pve1', 2],
    ['pve2', 1],
    ['pve3', 1],
  ]),
  ...over,
})

describe('select_service_node', () => {
  it("'none' without node affinity keeps the service where it is (avoids random migrations)", () => {
    expect(selectServiceNode(base())).toBe('pve1')
  })

  it('node affinity with failback moves the service to the highest priority online node; without failback it stays', () => {
    const nodeAffinity = new Map([
      ['pve3', 2],
      ['pve1', -1],
      ['pve2', -1],
    ])
    expect(selectServiceNode(base({ nodeAffinity }))).toBe('pve3')
    expect(selectServiceNode(base({ nodeAffinity, failback: false }))).toBe('pve1')
  })

  it('a strict rule that does not name the current node moves the service even without failback', () => {
    expect(selectServiceNode(base({ nodeAffinity: new Map([['pve2', 0]]), failback: false }))).toBe('pve2')
  })

  it('no allowed node online: no node (recovery waits)', () => {
    expect(selectServiceNode(base({ nodeAffinity: new Map([['pve4', 1]]), preference: 'best-score' }))).toBeUndefined()
  })

  it("'best-score' takes the node with the fewest HA services, ties by name (Usage::Basic)", () => {
    expect(selectServiceNode(base({ preference: 'best-score' }))).toBe('pve2')
  })

  it("'try-next' skips the nodes a start failed on and takes the next node in score order", () => {
    expect(selectServiceNode(base({ preference: 'try-next', failedNodes: ['pve1'] }))).toBe('pve2')
    expect(selectServiceNode(base({ preference: 'try-next', current: 'pve2', failedNodes: ['pve1'] }))).toBe('pve3')
    expect(selectServiceNode(base({ preference: 'try-next', failedNodes: ['pve1', 'pve2', 'pve3'] }))).toBeUndefined()
  })

  it("negative resource affinity avoids the partners' nodes; positive affinity takes the most populated partner node", () => {
    expect(selectServiceNode(base({ separate: new Set(['pve1']) }))).toBe('pve2')
    expect(
      selectServiceNode(
        base({
          together: new Map([
            ['pve3', 2],
            ['pve2', 1],
          ]),
        }),
      ),
    ).toBe('pve3')
  })
})

const input = fc.record({
  current: fc.constantFrom(...NODES),
  failedNodes: fc.subarray(NODES),
  failback: fc.boolean(),
  preference: fc.constantFrom('none' as const, 'best-score' as const, 'try-next' as const),
  online: fc.subarray(NODES, { minLength: 1 }),
  nodeAffinity: fc.option(
    fc
      .dictionary(fc.constantFrom(...NODES), fc.integer({ min: -1, max: 3 }), { minKeys: 1 })
      .map((d) => new Map(Object.entries(d))),
    { nil: undefined },
  ),
  together: fc
    .dictionary(fc.constantFrom(...NODES), fc.integer({ min: 1, max: 3 }))
    .map((d) => new Map(Object.entries(d))),
  separate: fc.subarray(NODES).map((s) => new Set(s)),
  score: fc.dictionary(fc.constantFrom(...NODES), fc.nat(5)).map((d) => new Map(Object.entries(d))),
})

type Raw = typeof input extends fc.Arbitrary<infer T> ? T : never

const clean = (i: Raw): PlacementInput => {
  const { nodeAffinity, ...rest } = i
  return nodeAffinity ? { ...rest, nodeAffinity } : rest
}

describe('select_service_node properties', () => {
  test.prop([input])('the node chosen is online and allowed by the node affinity', (raw) => {
    const i = clean(raw)
    const node = selectServiceNode(i)
    if (node === undefined) return
    expect(i.online).toContain(node)
    if (i.nodeAffinity) expect(i.nodeAffinity.has(node)).toBe(true)
  })

  test.prop([input])('a node with a negative partner is chosen only where a positive partner is too', (raw) => {
    const i = clean(raw)
    const node = selectServiceNode(i)
    if (node !== undefined && i.separate.has(node)) expect(i.together.get(node) ?? 0).toBeGreaterThan(0)
  })

  test.prop([input])("'try-next' never chooses a node a start failed on", (raw) => {
    const i = clean({ ...raw, preference: 'try-next' })
    const node = selectServiceNode(i)
    if (node !== undefined) expect(i.failedNodes).not.toContain(node)
  })

  test.prop([input])("'none' without failback keeps an allowed current node without negative partners", (raw) => {
    const i = clean({
      ...raw,
      preference: 'none',
      failback: false,
      separate: new Set(),
      online: [...new Set([...raw.online, raw.current])],
    })
    const allowed = !i.nodeAffinity || i.nodeAffinity.has(i.current)
    if (allowed) expect(selectServiceNode(i)).toBe(i.current)
  })
})
