/**
 * Whether pve-ha-manager (9.x) would accept the node-affinity rule ProxOps writes for one resource, given the
 * other enabled rules: PVE::API2::HA::Rules create/update runs the rule plugins' feasibility checks over the
 * whole rule set and refuses the write when they blame it. What `diff` can see here it blocks instead of letting
 * `apply` fail (docs/safety.md, "Refusals ProxOps foresees"). Pure.
 *
 * The checks that can blame a new node-affinity rule of one resource (PVE::HA::Rules):
 *   - check_single_priority_node_affinity_in_resource_affinity_rules: a resource in a resource-affinity rule may
 *     not be in a node-affinity rule with more than one priority;
 *   - check_single_node_affinity_per_positive_resource_affinity_rule: the resources of connected positive
 *     resource-affinity rules may be in one node-affinity rule at most;
 *   - check_negative_resource_affinity_node_affinity_consistency: the node-affinity rules of a negative rule's
 *     resources must allow at least as many nodes as there are such resources.
 * NodeAffinity's check_single_resource_reference (one node-affinity rule per resource) is the ha-conflict the
 * HA plan already reports.
 */
import { isTrue, splitList, type HaItem } from '@proxops/pve-client/wire'
import { parseNodePriorities } from './nodes.js'

interface Rule {
  id: string
  resources: Set<string>
  nodes: Map<string, number>
}

const view = (r: HaItem): Rule => ({
  id: r.rule ?? '',
  resources: new Set(splitList(r.resources)),
  nodes: parseNodePriorities(r.nodes),
})
const meets = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => [...a].some((x) => b.has(x))

/** PVE's reason for refusing the rule `id` naming only `sid` with `nodes`, or undefined when it would accept it. */
export function nodeAffinityRefusal(
  id: string,
  sid: string,
  nodes: Readonly<Record<string, number>>,
  rules: readonly HaItem[],
): string | undefined {
  const enabled = rules.filter((r) => r.rule !== id && !isTrue(r.disable))
  const own: Rule = { id, resources: new Set([sid]), nodes: new Map(Object.entries(nodes)) }
  const nodeAffinity = [...enabled.filter((r) => r.type === 'node-affinity').map(view), own]
  const affinity = enabled.filter((r) => r.type === 'resource-affinity')
  const positive = affinity.filter((r) => r.affinity === 'positive').map(view)
  const negative = affinity.filter((r) => r.affinity === 'negative').map(view)

  if (new Set(own.nodes.values()).size > 1) {
    const ra = [...positive, ...negative].find((r) => r.resources.has(sid))
    if (ra)
      return `${sid} is in the resource-affinity rule ${ra.id}, and PVE refuses a node-affinity rule with more than one priority for its resources (check_single_priority_node_affinity_in_resource_affinity_rules)`
  }
  for (const set of connected(positive)) {
    if (!set.resources.has(sid)) continue
    const others = nodeAffinity.filter((na) => na.id !== id && meets(set.resources, na.resources))
    if (others.length > 0)
      return `${sid} is in the positive resource-affinity rule ${set.ids.join(', ')}, whose resources are already in the node-affinity rule ${others.map((o) => o.id).join(', ')}; PVE allows one (check_single_node_affinity_per_positive_resource_affinity_rule)`
  }
  for (const n of negative) {
    if (!n.resources.has(sid)) continue
    const allowed = new Set<string>()
    const located = new Set<string>()
    for (const na of nodeAffinity) {
      const common = [...n.resources].filter((r) => na.resources.has(r))
      if (common.length === 0) continue
      for (const r of common) located.add(r)
      for (const node of na.nodes.keys()) allowed.add(node)
    }
    if (allowed.size < located.size)
      return `${sid} is in the negative resource-affinity rule ${n.id}, and with this rule its resources would have fewer allowed nodes (${allowed.size}) than resources (${located.size}) (check_negative_resource_affinity_node_affinity_consistency)`
  }
  return undefined
}

/** positive rules joined through shared resources (find_disjoint_rules_resource_sets) */
function connected(rules: readonly Rule[]): { ids: string[]; resources: Set<string> }[] {
  const sets: { ids: string[]; resources: Set<string> }[] = []
  for (const r of [...rules].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const joined = sets.filter((s) => meets(s.resources, r.resources))
    const merged = { ids: [r.id, ...joined.flatMap((s) => s.ids)].sort(), resources: new Set(r.resources) }
    for (const s of joined) for (const x of s.resources) merged.resources.add(x)
    for (const s of joined) sets.splice(sets.indexOf(s), 1)
    sets.push(merged)
  }
  return sets
}
