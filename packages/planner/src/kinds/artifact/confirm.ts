/** Read-back of a download: the file is listed in its storage. */
import type { Action, PveRequest } from '../../plan-types.js'
import type { LiveReader } from '../../ports.js'

export async function confirmArtifact(action: Action, reader: LiveReader): Promise<string | undefined> {
  const download = action.requests.find(
    (r): r is Extract<PveRequest, { call: 'downloadUrl' }> => r.call === 'downloadUrl',
  )
  if (!download) return undefined
  const content = String(download.params.content ?? '')
  const filename = String(download.params.filename ?? '')
  // the one content type: an unfiltered listing would run qemu-img info on every disk image of the storage
  const items = await reader.storageContent(download.node, download.storage, content || undefined)
  const found = items.some(
    (i) =>
      (content === '' || i.content === content) &&
      (i.volid.endsWith(`/${filename}`) || i.volid.endsWith(`:${filename}`)),
  )
  return found ? undefined : `${filename} is not listed in storage ${download.storage} on ${download.node}`
}
