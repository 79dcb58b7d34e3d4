/**
 * Reading the storage kind: `GET /storage`, one request for every section (pve-storage PVE::API2::Storage::Config
 * index; no secret is ever in it). A storage this entry owns that git no longer declares (a prune candidate,
 * ObserveOptions.ownedStorages less declaredStorages) also gets a content listing on each node that sees it (one
 * for a shared storage), so that a storage still holding volumes is never removed; in a steady estate there is
 * none. Nothing is read when no Storage is declared or owned (ObserveOptions.storages `all` reads it for adopt).
 * A failed read makes every storage unknown, never absent.
 */
import type { LiveInventory, LiveStorageConfig, Observed } from '../../inventory.js'
import type { ReadContext } from '../../kit/kind.js'
import { compare, errorText } from '../../kit/text.js'
import { sharedStorage } from './fields.js'

export async function readStorages(
  ctx: ReadContext,
): Promise<Pick<LiveInventory, 'storageConfigs' | 'storageVolumes'>> {
  const declared = new Set(ctx.options.declaredStorages ?? [])
  const owned = ctx.options.ownedStorages ?? []
  if (ctx.options.storages !== 'all' && declared.size === 0 && owned.length === 0) return {}
  const list = ctx.reader.storageConfigs.bind(ctx.reader)
  let known: LiveStorageConfig[]
  try {
    known = (await ctx.read(() => list()))
      .map((s) => ({
        storage: s.storage,
        type: s.type,
        values: s.values,
        ...(s.digest !== undefined ? { digest: s.digest } : {}),
      }))
      .sort((a, b) => compare(a.storage, b.storage))
  } catch (error) {
    ctx.options.signal?.throwIfAborted()
    return { storageConfigs: { unreadable: `read failed: ${errorText(error)}` } }
  }
  const candidates = owned.filter((id) => !declared.has(id))
  const byId = new Map(known.map((s) => [s.storage, s]))
  const storageVolumes: Record<string, Observed<readonly string[]>> = {}
  await Promise.all(
    candidates.map(async (id) => {
      const s = byId.get(id)
      if (!s) return
      storageVolumes[id] = await readVolumes(ctx, s)
    }),
  )
  return { storageConfigs: { known }, storageVolumes }
}

/** every volume of one storage, from each online node that sees it (one node when it is shared) */
async function readVolumes(ctx: ReadContext, s: LiveStorageConfig): Promise<Observed<readonly string[]>> {
  const restricted = s.values.nodes?.split(/[,;\s]+/).filter((n) => n !== '')
  const nodes = [...ctx.online].filter((n) => restricted === undefined || restricted.includes(n)).sort(compare)
  if (nodes.length === 0)
    return { unreadable: 'no online node of the allowlist sees it, so its volumes cannot be listed' }
  const content = ctx.reader.storageContent.bind(ctx.reader)
  try {
    const listed = await Promise.all(
      (sharedStorage(s) ? nodes.slice(0, 1) : nodes).map((node) => ctx.read(() => content(node, s.storage))),
    )
    return { known: [...new Set(listed.flat().map((v) => v.volid))].sort(compare) }
  } catch (error) {
    ctx.options.signal?.throwIfAborted()
    return { unreadable: `content listing failed: ${errorText(error)}` }
  }
}
