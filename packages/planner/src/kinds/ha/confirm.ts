/** Read-back of an HA action: the resource is there (with the requested state) or gone. */
import type { Action, PveRequest } from '../../plan-types.js'
import type { LiveReader } from '../../ports.js'

export async function confirmHa(action: Action, reader: LiveReader): Promise<string | undefined> {
  const write = action.requests.find(
    (r): r is Extract<PveRequest, { call: 'haWrite' }> => r.call === 'haWrite' && r.object === 'resources',
  )
  if (!write) return undefined
  const item = (await reader.haConfig('resources')).find((r) => r.sid === write.id)
  if (write.method === 'DELETE') return item ? `HA resource ${write.id} is still configured` : undefined
  if (!item) return `HA resource ${write.id} is not configured`
  const state = write.params.state
  if (state !== undefined && (item.state ?? 'started') !== String(state))
    return `HA resource ${write.id} requests ${item.state ?? 'started'}, not ${String(state)}`
  return undefined
}
