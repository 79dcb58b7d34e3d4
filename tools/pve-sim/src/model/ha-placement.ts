/**
 * Where the HA manager puts a service: pve-ha-manager PVE::HA::Manager::select_service_node with the 'basic' CRS
 * scheduler (PVE::HA::Usage::Basic: a node's score is the number of HA services on it), the node affinity of
 * PVE::HA::Rules::NodeAffinity (get_node_affinity over the compiled rule) and the resource affinity of
 * PVE::HA::Rules::ResourceAffinity (get_resource_affinity, apply_negative_resource_affinity,
 * apply_positive_resource_affinity). A pure function of what the manager knows; maintenance mode is not modelled.
 */

export type NodePreference = 'none' | 'best-score' | 'try-next'

export interface PlacementInput {
  /** the node the service is on */
  current: string
  /** nodes a start failed on (`failed_nodes`) */
  failedNodes: readonly string[]
  /** the resource's `failback` (9.x), or its group's negated `nofailback` (8.x) */
  failback: boolean
  preference: NodePreference
  /** the online cluster nodes (the manager's node status) */
  online: readonly string[]
  /** the compiled node affinity: node -> priority (a non-strict rule lists every other node at -1); none = any node */
  nodeAffinity?: ReadonlyMap<string, number>
  /** online nodes where services in positive affinity with this one are (or are going), with how many */
  together: ReadonlyMap<string, number>
  /** online nodes where services in negative affinity with this one are (or are going) */
  separate: ReadonlySet<string>
  /** Usage::Basic score_nodes_to_start_service: HA services per online node */
  score: ReadonlyMap<string, number>
}

/** get_node_affinity: the allowed online nodes, and those of them with the highest priority */
function nodeAffinity(input: PlacementInput): { allowed: Set<string>; preferred: Set<string> } {
  const online = new Set(input.online)
  if (!input.nodeAffinity) return { allowed: online, preferred: new Set(online) }
  const allowed = new Set<string>()
  const byPriority = new Map<number, Set<string>>()
  for (const [node, priority] of input.nodeAffinity) {
    if (!online.has(node)) continue
    allowed.add(node)
    byPriority.set(priority, (byPriority.get(priority) ?? new Set()).add(node))
  }
  const top = Math.max(...byPriority.keys())
  return { allowed, preferred: byPriority.get(top) ?? new Set() }
}

/** ResourceAffinity::is_allowed_on_node */
const allowedOnNode = (input: PlacementInput, node: string): boolean =>
  (input.together.get(node) ?? 0) > 0 || !input.separate.has(node)

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** select_service_node: the node for the service, or undefined when none is possible */
export function selectServiceNode(input: PlacementInput): string | undefined {
  const { current, preference } = input
  const { allowed, preferred } = nodeAffinity(input)
  if (preferred.size === 0) return undefined
  // stay on the current node if possible (avoids random migrations)
  if (preference === 'none' && !input.failback && allowed.has(current) && allowedOnNode(input, current)) return current
  if (preference === 'try-next') for (const node of input.failedNodes) preferred.delete(node)
  for (const node of input.separate) preferred.delete(node)
  // positive affinity: only the most populated node of the partners' nodes that is still possible
  const together = [...input.together].filter(([node]) => preferred.has(node))
  if (together.length > 0) {
    const majority = together.sort(([a, x], [b, y]) => y - x || byText(a, b))[0]?.[0] as string
    for (const node of [...preferred]) if (node !== majority) preferred.delete(node)
  }
  if (preference === 'none' && preferred.has(current)) return current
  const score = (node: string) => input.score.get(node) ?? 0
  const nodes = [...preferred].sort((a, b) => score(a) - score(b) || byText(a, b))
  if (preference === 'try-next') {
    const found = nodes.indexOf(current)
    return found >= 0 && found < nodes.length - 1 ? nodes[found + 1] : nodes[0]
  }
  return nodes[0]
}
