/** Read-back of a firewall action: the guest firewall needs no further write. */
import type { Action, PveRequest } from '../../plan-types.js'
import type { LiveReader } from '../../ports.js'
import { firewallWrites, liveFirewall } from './canon.js'

export async function confirmFirewall(action: Action, reader: LiveReader): Promise<string | undefined> {
  const problems: string[] = []
  for (const r of action.requests) {
    if (r.call !== 'firewall') continue
    const left = firewallWrites(liveFirewall(await reader.guestFirewall(r.node, r.guest, r.vmid)), r.desired)
    if (left.length > 0) problems.push(`firewall not converged (${left.map((w) => w.op).join(', ')} still needed)`)
  }
  const r = action.requests.find((x): x is Extract<PveRequest, { call: 'firewall' }> => x.call === 'firewall')
  return problems.length > 0 && r ? `${r.guest} ${r.vmid} on ${r.node}: ${problems.join('; ')}` : undefined
}
