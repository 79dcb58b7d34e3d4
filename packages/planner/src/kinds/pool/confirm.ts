/** Read-back of a Pool action (the pool is listed with its comment, or gone) and of a membership. */
import type { Action } from '../../plan-types.js'
import type { LiveReader } from '../../ports.js'

/** a Pool action: the pool exists with the comment written, or is gone; a membership action: the guest is in */
export async function confirmPool(action: Action, reader: LiveReader): Promise<string | undefined> {
  const r = action.requests[0]
  if (!r) return undefined
  if (r.call === 'deletePool')
    return (await reader.pools()).some((p) => p.poolid === r.poolid) ? `pool ${r.poolid} is still listed` : undefined
  if (r.call !== 'createPool' && r.call !== 'updatePool') return undefined
  const poolid = String(r.params.poolid)
  if (action.type === 'join' && action.vmid !== undefined) return checkMember(reader, poolid, action.vmid)
  const live = (await reader.pools()).find((p) => p.poolid === poolid)
  if (!live) return `pool ${poolid} is not listed`
  const comment = r.params.comment
  return comment !== undefined && (live.comment ?? '') !== String(comment)
    ? `pool ${poolid} has the comment ${JSON.stringify(live.comment ?? '')}, not ${JSON.stringify(String(comment))}`
    : undefined
}

export async function checkMember(reader: LiveReader, poolid: string, vmid: number): Promise<string | undefined> {
  const members = (await reader.pool(poolid)).members
  return members.some((m) => m.vmid === vmid) ? undefined : `guest ${vmid} is not a member of pool ${poolid}`
}
