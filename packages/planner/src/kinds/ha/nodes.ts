/** An HA node preference as PVE writes it (`pve1:2,pve2:1`), read by the HA plan, its feasibility check and adopt. */
import { splitList } from '@proxops/pve-client/wire'

/** `node[:prio],...` -> node -> priority (0 when absent), as PVE::HA::Tools::parse_node_priority reads it */
export function parseNodePriorities(value: string | undefined): Map<string, number> {
  const out = new Map<string, number>()
  for (const entry of splitList(value)) {
    const [node, prio] = entry.split(':') as [string, string | undefined]
    out.set(node, prio === undefined || prio === '' ? 0 : Number(prio))
  }
  return out
}
