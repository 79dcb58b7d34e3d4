/**
 * The HA rule feasibility checks, each test named after the pve-ha-manager check it follows (PVE::HA::Rules,
 * PVE::HA::Rules::NodeAffinity, PVE::HA::Rules::ResourceAffinity, PVE::HA::Rules::Helpers), plus properties of
 * check_feasibility as a whole.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { checkFeasibility, disjointResourceSets, type RuleErrors, type RuleView } from './ha-feasibility.js'

const NODES = ['pve1', 'pve2', 'pve3']
const na = (id: string, resources: string[], nodes: Record<string, number>, disabled = false): RuleView => ({
  id,
  type: 'node-affinity',
  resources: new Set(resources),
  nodes: new Map(Object.entries(nodes)),
  disabled,
})
const ra = (id: string, affinity: 'positive' | 'negative', resources: string[], disabled = false): RuleView => ({
  id,
  type: 'resource-affinity',
  affinity,
  resources: new Set(resources),
  disabled,
})
const plain = (errors: RuleErrors): Record<string, Record<string, string[]>> =>
  Object.fromEntries([...errors].map(([id, opts]) => [id, Object.fromEntries(opts)]))

describe('PVE::HA::Rules::NodeAffinity check_single_resource_reference', () => {
  it('blames every enabled node-affinity rule that shares a resource, once per shared resource', () => {
    const errors = checkFeasibility(
      [
        na('a', ['vm:100', 'vm:101'], { pve1: 0 }),
        na('b', ['vm:101', 'vm:100'], { pve2: 0 }),
        na('c', ['vm:100'], { pve3: 0 }, true),
      ],
      NODES,
    )
    expect(plain(errors)).toEqual({
      a: {
        resources: [
          "resource 'vm:100' is already used in another node affinity rule",
          "resource 'vm:101' is already used in another node affinity rule",
        ],
      },
      b: {
        resources: [
          "resource 'vm:100' is already used in another node affinity rule",
          "resource 'vm:101' is already used in another node affinity rule",
        ],
      },
    })
  })
})

describe('PVE::HA::Rules::ResourceAffinity checks', () => {
  it('check_resource_affinity_resources_count: fewer than two resources', () => {
    expect(plain(checkFeasibility([ra('r', 'positive', ['vm:100'])], NODES))).toEqual({
      r: { resources: ['rule is ineffective as there are less than two resources'] },
    })
  })

  it('check_negative_resource_affinity_resources_count: more resources than nodes the manager knows', () => {
    const rule = ra('apart', 'negative', ['vm:100', 'vm:101', 'vm:102'])
    expect(plain(checkFeasibility([rule], ['pve1', 'pve2']))).toEqual({
      apart: { resources: ['rule defines more resources than available nodes'] },
    })
    expect(plain(checkFeasibility([rule], NODES))).toEqual({})
  })

  it('check_inter_resource_affinity_rules_consistency: a positive and a negative rule share two resources', () => {
    const errors = checkFeasibility(
      [ra('together', 'positive', ['vm:100', 'vm:101']), ra('apart', 'negative', ['vm:101', 'vm:100'])],
      NODES,
    )
    expect(plain(errors)).toEqual({
      together: { resources: ['rule shares two or more resources with a negative resource affinity rule'] },
      apart: { resources: ['rule shares two or more resources with a positive resource affinity rule'] },
    })
    // one shared resource is no contradiction
    expect(
      plain(
        checkFeasibility([ra('t', 'positive', ['vm:100', 'vm:101']), ra('n', 'negative', ['vm:101', 'vm:102'])], NODES),
      ),
    ).toEqual({})
  })

  it('check_inter_resource_affinity_rules_consistency sees positive rules connected through a shared resource', () => {
    // t1 and t2 join into {100, 101, 102}: the negative rule shares two of them with the merged set
    const errors = checkFeasibility(
      [
        ra('t1', 'positive', ['vm:100', 'vm:101']),
        ra('t2', 'positive', ['vm:101', 'vm:102']),
        ra('n', 'negative', ['vm:100', 'vm:102']),
      ],
      NODES,
    )
    expect([...errors.keys()].sort()).toEqual(['n', 't1', 't2'])
  })
})

describe('PVE::HA::Rules::Helpers find_disjoint_rules_resource_sets', () => {
  it('joins rules into the first overlapping set, rules sorted by their lowest resource', () => {
    const sets = disjointResourceSets([
      ra('z', 'positive', ['vm:103', 'vm:104']),
      ra('y', 'positive', ['vm:101', 'vm:102']),
      ra('x', 'positive', ['vm:102', 'vm:103']),
    ])
    // y (lowest vm:101) first, x (vm:102) joins y, z (vm:103) joins the same set
    expect(sets.map((s) => [s.ruleids, [...s.resources].sort()])).toEqual([
      [
        ['y', 'x', 'z'],
        ['vm:101', 'vm:102', 'vm:103', 'vm:104'],
      ],
    ])
  })
})

describe('PVE::HA::Rules inter-plugin checks', () => {
  it('check_single_priority_node_affinity_in_resource_affinity_rules: a node-affinity rule with two priorities', () => {
    const errors = checkFeasibility(
      [na('prefer', ['vm:100'], { pve1: 2, pve2: 1 }), ra('together', 'positive', ['vm:100', 'vm:101'])],
      NODES,
    )
    expect(plain(errors)).toEqual({
      prefer: {
        resources: [
          'resources are in a resource affinity rule and cannot be in a node affinity rule with multiple priorities',
        ],
      },
      together: { resources: ['resources are in node affinity rules with multiple priorities'] },
    })
    // one priority for every node is allowed
    expect(
      plain(
        checkFeasibility(
          [na('pin', ['vm:100'], { pve1: 1, pve2: 1 }), ra('t', 'positive', ['vm:100', 'vm:101'])],
          NODES,
        ),
      ),
    ).toEqual({})
  })

  it('check_single_node_affinity_per_positive_resource_affinity_rule: positive resources in two node-affinity rules', () => {
    const errors = checkFeasibility(
      [na('a', ['vm:100'], { pve1: 0 }), na('b', ['vm:101'], { pve2: 0 }), ra('t', 'positive', ['vm:100', 'vm:101'])],
      NODES,
    )
    const other =
      'at least one resource is in a positive resource affinity rule and there are other resources in at least one other node affinity rule already'
    expect(plain(errors)).toEqual({
      a: { resources: [other] },
      b: { resources: [other] },
      t: { resources: ['resources are in multiple node affinity rules'] },
    })
  })

  it('check_negative_resource_affinity_node_affinity_consistency: fewer allowed nodes than separated resources', () => {
    const errors = checkFeasibility(
      [na('pin', ['vm:100', 'vm:101'], { pve1: 0 }), ra('apart', 'negative', ['vm:100', 'vm:101'])],
      NODES,
    )
    expect(plain(errors)).toEqual({
      apart: { resources: ['two or more resources are restricted to less nodes than available to the resources'] },
      pin: {
        resources: [
          'at least one resource is in a negative resource affinity rule and this rule would restrict these to less nodes than available to the resources',
        ],
      },
    })
    // two allowed nodes for the two resources
    expect(
      plain(
        checkFeasibility(
          [na('pin', ['vm:100', 'vm:101'], { pve1: 0, pve2: 0 }), ra('n', 'negative', ['vm:100', 'vm:101'])],
          NODES,
        ),
      ),
    ).toEqual({})
  })
})

// ------------------------------------------------------------------------------------------------------------
// properties of check_feasibility

const SIDS = ['vm:100', 'vm:101', 'vm:102', 'ct:103', 'ct:104']
const arbRule = (id: string): fc.Arbitrary<RuleView> =>
  fc.oneof(
    fc
      .record({
        resources: fc.subarray(SIDS, { minLength: 1 }),
        nodes: fc.dictionary(fc.constantFrom(...NODES), fc.integer({ min: 0, max: 2 }), { minKeys: 1 }),
        disabled: fc.boolean(),
      })
      .map((r) => na(id, r.resources, r.nodes, r.disabled)),
    fc
      .record({
        affinity: fc.constantFrom('positive' as const, 'negative' as const),
        resources: fc.subarray(SIDS, { minLength: 1 }),
        disabled: fc.boolean(),
      })
      .map((r) => ra(id, r.affinity, r.resources, r.disabled)),
  )
const arbRules: fc.Arbitrary<RuleView[]> = fc
  .integer({ min: 0, max: 6 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => arbRule(`r${i}`))))

describe('check_feasibility (properties)', () => {
  it('does not depend on the order the rules come in', () => {
    fc.assert(
      fc.property(
        arbRules.chain((rules) =>
          fc.tuple(
            fc.constant(rules),
            fc.shuffledSubarray(rules, { minLength: rules.length, maxLength: rules.length }),
          ),
        ),
        ([rules, shuffled]) => {
          expect(plain(checkFeasibility(shuffled, NODES))).toEqual(plain(checkFeasibility(rules, NODES)))
        },
      ),
    )
  })

  it('never blames a disabled rule, blames only `resources`, and ignores disabled rules altogether', () => {
    fc.assert(
      fc.property(arbRules, (rules) => {
        const errors = checkFeasibility(rules, NODES)
        for (const r of rules.filter((x) => x.disabled)) expect(errors.has(r.id)).toBe(false)
        for (const opts of errors.values()) expect([...opts.keys()]).toEqual(['resources'])
        expect(plain(errors)).toEqual(
          plain(
            checkFeasibility(
              rules.filter((r) => !r.disabled),
              NODES,
            ),
          ),
        )
      }),
    )
  })

  it('blames every enabled resource-affinity rule with fewer than two resources', () => {
    fc.assert(
      fc.property(arbRules, (rules) => {
        const errors = checkFeasibility(rules, NODES)
        for (const r of rules)
          if (!r.disabled && r.type === 'resource-affinity' && r.resources.size < 2)
            expect(errors.get(r.id)?.get('resources')).toContain(
              'rule is ineffective as there are less than two resources',
            )
      }),
    )
  })

  it('accepts rules whose resources are pairwise disjoint, when each node-affinity rule has one priority', () => {
    fc.assert(
      fc.property(arbRules, (rules) => {
        const taken = new Set<string>()
        const disjoint = rules.filter((r) => {
          if ([...r.resources].some((s) => taken.has(s))) return false
          for (const s of r.resources) taken.add(s)
          return true
        })
        const fine = disjoint.filter(
          (r) =>
            (r.type === 'node-affinity' && new Set(r.nodes?.values()).size === 1) ||
            (r.type === 'resource-affinity' && r.resources.size >= 2 && r.resources.size <= NODES.length),
        )
        expect(plain(checkFeasibility(fine, NODES))).toEqual({})
      }),
    )
  })
})
