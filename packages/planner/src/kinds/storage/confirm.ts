/** Read-back of a storage action: the section is listed with the options sent (secrets PVE never lists), or gone. */
import type { Action } from '../../plan-types.js'
import type { LiveReader } from '../../ports.js'
import { isSecretParam } from '../../kit/params.js'
import { isStorageType, liveOption, modelled } from './fields.js'

export async function confirmStorage(action: Action, reader: LiveReader): Promise<string | undefined> {
  const r = action.requests[0]
  if (!r) return undefined
  if (r.call !== 'createStorage' && r.call !== 'updateStorage' && r.call !== 'deleteStorage') return undefined
  const id = r.call === 'createStorage' ? String(r.params.storage) : r.storage
  const live = (await reader.storageConfigs()).find((s) => s.storage === id)
  if (r.call === 'deleteStorage') return live ? `storage ${id} is still listed` : undefined
  if (!live) return `storage ${id} is not listed`
  if (!isStorageType(live.type)) return undefined
  for (const [key, value] of Object.entries(r.params)) {
    if (isSecretParam(value) || !modelled(live.type, key)) continue
    const got = liveOption(live, key)
    if (got !== String(value))
      return `storage ${id} has ${key} ${JSON.stringify(got ?? '')}, not ${JSON.stringify(String(value))}`
  }
  return undefined
}
