/**
 * Reading the artifact kind: every storage of the allowlisted nodes (from `/cluster/resources`) and the volumes
 * of the content types the repository declares artifacts of, one `content=` listing each (an unfiltered listing
 * would also run `qemu-img info` on every disk image of a file storage, pve-storage list_images); a shared storage
 * is listed through one node. A failed listing makes the storage unreadable: nothing there is created or reported
 * absent.
 */
import type { LiveInventory, LiveStorage, LiveVolume } from '../../inventory.js'
import { compare, errorText } from '../../kit/text.js'
import type { Read, ReadContext } from '../../kit/kind.js'
import type { LiveReader } from '../../ports.js'
import type { ObserveOptions } from '../../kit/kind.js'
import type { ClusterResource } from '@proxops/pve-client/wire'

const DEFAULT_CONTENT_TYPES = ['iso', 'vztmpl', 'import'] as const

export function readArtifacts({
  reader,
  read,
  resources,
  allowed,
  online,
  options,
}: ReadContext): Promise<Pick<LiveInventory, 'storages' | 'volumes' | 'unreadableStorages'>> {
  return readStorageListings(reader, read, resources, allowed, online, options)
}

async function readStorageListings(
  reader: LiveReader,
  read: Read,
  resources: readonly ClusterResource[],
  allowed: (node: string | undefined) => node is string,
  online: ReadonlySet<string>,
  options: ObserveOptions,
): Promise<Pick<LiveInventory, 'storages' | 'volumes' | 'unreadableStorages'>> {
  const contentTypes = [...new Set(options.contentTypes ?? DEFAULT_CONTENT_TYPES)].sort()
  const storages: LiveStorage[] = []
  for (const r of resources) {
    if (r.type !== 'storage' || !allowed(r.node)) continue
    const storage = r.storage ?? r.id.split('/')[2] ?? r.id
    storages.push({
      node: r.node,
      storage,
      type: r.plugintype ?? 'unknown',
      content: (r.content ?? '')
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean)
        .sort(),
      active: r.status === 'available',
      // /cluster/resources lists enabled storages only; a disabled one does not appear
      enabled: true,
      shared: r.shared === true,
    })
  }
  storages.sort((a, b) => compare(a.node, b.node) || compare(a.storage, b.storage))

  const volumes: LiveVolume[] = []
  const unreadable: { node: string; storage: string; unreadable: string }[] = []
  // one listing per local storage, and one per shared storage (through its first online node)
  const listings = new Map<string, { reader: LiveStorage; holders: LiveStorage[]; types: string[] }>()
  for (const s of storages) {
    const types = contentTypes.filter((c) => s.content.includes(c))
    if (types.length === 0) continue
    if (!online.has(s.node)) {
      unreadable.push({ node: s.node, storage: s.storage, unreadable: `node ${s.node} is offline` })
      continue
    }
    if (!s.active) {
      unreadable.push({
        node: s.node,
        storage: s.storage,
        unreadable: `storage ${s.storage} is not active on ${s.node}`,
      })
      continue
    }
    const key = s.shared ? `shared:${s.storage}` : `${s.node}:${s.storage}`
    const listing = listings.get(key)
    if (listing) listing.holders.push(s)
    else listings.set(key, { reader: s, holders: [s], types })
  }
  await Promise.all(
    [...listings.values()].map(async ({ reader: s, holders, types }) => {
      try {
        // one listing per content type: PVE's `content` filter takes one type
        const lists = await Promise.all(types.map((c) => read(() => reader.storageContent(s.node, s.storage, c))))
        const items = lists.flat()
        for (const holder of holders) {
          for (const item of items) {
            if (!types.includes(item.content)) continue
            volumes.push({
              node: holder.node,
              storage: holder.storage,
              volid: item.volid,
              content: item.content,
              ...(item.format !== undefined ? { format: item.format } : {}),
              ...(item.size !== undefined ? { size: item.size } : {}),
            })
          }
        }
      } catch (error) {
        options.signal?.throwIfAborted()
        for (const holder of holders)
          unreadable.push({
            node: holder.node,
            storage: holder.storage,
            unreadable: `content listing failed: ${errorText(error)}`,
          })
      }
    }),
  )
  volumes.sort((a, b) => compare(a.node, b.node) || compare(a.storage, b.storage) || compare(a.volid, b.volid))
  unreadable.sort((a, b) => compare(a.node, b.node) || compare(a.storage, b.storage))
  return { storages, volumes, unreadableStorages: unreadable }
}
