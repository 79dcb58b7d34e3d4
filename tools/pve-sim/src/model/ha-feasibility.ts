/**
 * The feasibility checks of HA rules (pve-ha-manager PVE::HA::Rules::check_feasibility): every check the rule
 * plugins register, run in PVE's order (NodeAffinity's, then ResourceAffinity's, then the global inter-plugin
 * checks of PVE::HA::Rules), over the enabled rules only. The result maps each blamed rule to its messages per
 * option; every check blames `resources`. The rules API refuses a create or update that leaves the written rule
 * blamed, and the index and read attach the messages as `errors` (docs/simulator-model.md, "HA").
 */

/** one rule as the checks see it (get_plugin_check_arguments) */
export interface RuleView {
  id: string
  type: string
  resources: ReadonlySet<string>
  /** node-affinity: node -> priority (0 when not given) */
  nodes?: ReadonlyMap<string, number>
  /** resource-affinity */
  affinity?: string
  disabled: boolean
}

/** rule id -> option -> messages, in the order the checks pushed them */
export type RuleErrors = Map<string, Map<string, string[]>>

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** [type, rule id] pairs sorted as `sort { $a->[0] cmp $b->[0] || $a->[1] cmp $b->[1] }` */
const sortPairs = (pairs: [string, string][]): [string, string][] =>
  pairs.sort((a, b) => byText(a[0], b[0]) || byText(a[1], b[1]))

const disjoint = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => ![...a].some((x) => b.has(x))
const intersect = (a: ReadonlySet<string>, b: ReadonlySet<string>): Set<string> =>
  new Set([...a].filter((x) => b.has(x)))

function push(errors: RuleErrors, rule: string, message: string): void {
  const opts = errors.get(rule) ?? new Map<string, string[]>()
  errors.set(rule, opts)
  opts.set('resources', [...(opts.get('resources') ?? []), message])
}

/**
 * PVE::HA::Rules::Helpers::find_disjoint_rules_resource_sets: rules sorted by their lowest resource id (then by
 * id), each joined to the first earlier set it overlaps (one greedy pass, as PVE does).
 */
export function disjointResourceSets(rules: readonly RuleView[]): { ruleids: string[]; resources: Set<string> }[] {
  const lowest = (r: RuleView) => [...r.resources].sort(byText)[0] ?? ''
  const sorted = [...rules].sort((a, b) => byText(a.id, b.id)).sort((a, b) => byText(lowest(a), lowest(b)))
  const sets: { ruleids: string[]; resources: Set<string> }[] = []
  for (const r of sorted) {
    const entry = sets.find((e) => !disjoint(r.resources, e.resources))
    if (entry) {
      entry.ruleids.push(r.id)
      for (const sid of r.resources) entry.resources.add(sid)
    } else sets.push({ ruleids: [r.id], resources: new Set(r.resources) })
  }
  return sets
}

/** NodeAffinity check_single_resource_reference: a resource in two or more node-affinity rules */
function singleResourceReference(nodeAffinity: readonly RuleView[], errors: RuleErrors): void {
  const owners = new Map<string, string[]>()
  for (const r of nodeAffinity) for (const sid of r.resources) owners.set(sid, [...(owners.get(sid) ?? []), r.id])
  const conflicts: [string, string][] = []
  for (const [sid, ids] of owners) if (ids.length > 1) for (const id of ids) conflicts.push([id, sid])
  for (const [id, sid] of sortPairs(conflicts))
    push(errors, id, `resource '${sid}' is already used in another node affinity rule`)
}

/** ResourceAffinity check_resource_affinity_resources_count: fewer than two resources */
function resourcesCount(resourceAffinity: readonly RuleView[], errors: RuleErrors): void {
  for (const id of resourceAffinity
    .filter((r) => r.resources.size < 2)
    .map((r) => r.id)
    .sort(byText))
    push(errors, id, 'rule is ineffective as there are less than two resources')
}

/** ResourceAffinity check_negative_resource_affinity_resources_count: more resources than cluster nodes */
function negativeResourcesCount(negative: readonly RuleView[], nodes: readonly string[], errors: RuleErrors): void {
  for (const id of negative
    .filter((r) => r.resources.size > nodes.length)
    .map((r) => r.id)
    .sort(byText))
    push(errors, id, 'rule defines more resources than available nodes')
}

/** ResourceAffinity check_inter_resource_affinity_rules_consistency: a positive and a negative rule share two resources */
function interResourceAffinity(positive: readonly RuleView[], negative: readonly RuleView[], errors: RuleErrors): void {
  const conflicts: [string, string][] = []
  for (const entry of disjointResourceSets(positive))
    for (const n of negative) {
      if (intersect(entry.resources, n.resources).size < 2) continue
      conflicts.push(['negative', n.id])
      for (const id of entry.ruleids) conflicts.push(['positive', id])
    }
  for (const [type, id] of sortPairs(conflicts))
    push(
      errors,
      id,
      type === 'positive'
        ? 'rule shares two or more resources with a negative resource affinity rule'
        : 'rule shares two or more resources with a positive resource affinity rule',
    )
}

/** $has_multiple_priorities */
const multiplePriorities = (r: RuleView): boolean => new Set(r.nodes?.values() ?? []).size > 1

/**
 * PVE::HA::Rules check_single_priority_node_affinity_in_resource_affinity_rules: a resource-affinity rule sharing a
 * resource with a node-affinity rule that has more than one priority blames itself and every node-affinity rule it
 * shares a resource with
 */
function singlePriority(resourceAffinity: readonly RuleView[], nodeAffinity: readonly RuleView[], errors: RuleErrors) {
  const conflicts: [string, string][] = []
  for (const ra of resourceAffinity) {
    const paired = nodeAffinity.filter((na) => !disjoint(ra.resources, na.resources))
    if (!paired.some(multiplePriorities)) continue
    conflicts.push(['resource-affinity', ra.id])
    for (const na of paired) conflicts.push(['node-affinity', na.id])
  }
  for (const [type, id] of sortPairs(conflicts))
    push(
      errors,
      id,
      type === 'node-affinity'
        ? 'resources are in a resource affinity rule and cannot be in a node affinity rule with multiple priorities'
        : 'resources are in node affinity rules with multiple priorities',
    )
}

/**
 * PVE::HA::Rules check_single_node_affinity_per_positive_resource_affinity_rule: the resources of (connected)
 * positive rules are in more than one node-affinity rule
 */
function singleNodeAffinityPerPositive(
  positive: readonly RuleView[],
  nodeAffinity: readonly RuleView[],
  errors: RuleErrors,
) {
  const conflicts: [string, string][] = []
  for (const entry of disjointResourceSets(positive)) {
    const paired = nodeAffinity.filter((na) => !disjoint(entry.resources, na.resources))
    if (paired.length <= 1) continue
    for (const id of entry.ruleids) conflicts.push(['positive', id])
    for (const na of paired) conflicts.push(['node-affinity', na.id])
  }
  for (const [type, id] of sortPairs(conflicts))
    push(
      errors,
      id,
      type === 'positive'
        ? 'resources are in multiple node affinity rules'
        : 'at least one resource is in a positive resource affinity rule and there are other resources in at least one other node affinity rule already',
    )
}

/**
 * PVE::HA::Rules check_negative_resource_affinity_node_affinity_consistency: the node-affinity rules of a negative
 * rule's resources allow fewer nodes (their union, strict or not) than there are such resources
 */
function negativeNodeAffinity(negative: readonly RuleView[], nodeAffinity: readonly RuleView[], errors: RuleErrors) {
  const conflicts: [string, string][] = []
  for (const n of negative) {
    const allowed = new Set<string>()
    const located = new Set<string>()
    const paired: string[] = []
    for (const na of nodeAffinity) {
      const common = intersect(n.resources, na.resources)
      if (common.size < 1) continue
      for (const sid of common) located.add(sid)
      for (const node of na.nodes?.keys() ?? []) allowed.add(node)
      paired.push(na.id)
    }
    if (allowed.size >= located.size) continue
    conflicts.push(['negative', n.id])
    for (const id of paired) conflicts.push(['node-affinity', id])
  }
  for (const [type, id] of sortPairs(conflicts))
    push(
      errors,
      id,
      type === 'negative'
        ? 'two or more resources are restricted to less nodes than available to the resources'
        : 'at least one resource is in a negative resource affinity rule and this rule would restrict these to less nodes than available to the resources',
    )
}

/** PVE::HA::Rules->check_feasibility($rules, $nodes): `nodes` are the nodes the manager knows (all cluster nodes) */
export function checkFeasibility(rules: readonly RuleView[], nodes: readonly string[]): RuleErrors {
  const enabled = rules.filter((r) => !r.disabled)
  const nodeAffinity = enabled.filter((r) => r.type === 'node-affinity')
  const resourceAffinity = enabled.filter((r) => r.type === 'resource-affinity')
  const positive = resourceAffinity.filter((r) => r.affinity === 'positive')
  const negative = resourceAffinity.filter((r) => r.affinity === 'negative')
  const errors: RuleErrors = new Map()
  // plugins in their registration order (PVE::HA::Env::PVE2), then the base plugin's global checks
  singleResourceReference(nodeAffinity, errors)
  resourcesCount(resourceAffinity, errors)
  negativeResourcesCount(negative, nodes, errors)
  interResourceAffinity(positive, negative, errors)
  singlePriority(resourceAffinity, nodeAffinity, errors)
  singleNodeAffinityPerPositive(positive, nodeAffinity, errors)
  negativeNodeAffinity(negative, nodeAffinity, errors)
  return errors
}
