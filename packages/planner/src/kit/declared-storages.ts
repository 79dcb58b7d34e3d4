/**
 * The storages a guest's volumes meet once this plan has run: each node's live storages (`/cluster/resources`, the
 * enabled ones) with the declared Storage manifests laid over them, as pve-storage would see them after the
 * storage kind's create or update (storage_check_enabled: `disable`, `nodes`; the `content` a plugin defaults
 * to when a create names none, plugindata). Only what a manifest declares changes a live storage; a node without
 * any live row stays unknown (nothing is refused there). Pure.
 */
import type { Manifest, StorageManifest, StorageType } from '@proxops/schema'
import type { LiveStorage } from '../inventory.js'

/** each plugin's default content (pve-storage plugindata `content`'s second entry) */
const DEFAULT_CONTENT: Record<StorageType, readonly string[]> = {
  dir: ['images', 'rootdir'],
  nfs: ['images'],
  cifs: ['images'],
  pbs: ['backup'],
  lvm: ['images', 'rootdir'],
  lvmthin: ['images', 'rootdir'],
  zfspool: ['images', 'rootdir'],
  btrfs: ['images', 'rootdir'],
  rbd: ['images'],
}
const SHARED_TYPES: readonly StorageType[] = ['nfs', 'cifs', 'pbs', 'rbd']

/** one overlay per desired state and live listing (every guest of a plan asks with the same two) */
const memo = new WeakMap<readonly Manifest[], { live: readonly LiveStorage[]; out: readonly LiveStorage[] }>()

export function withDeclaredStorages(
  live: readonly LiveStorage[],
  manifests: readonly Manifest[],
): readonly LiveStorage[] {
  const hit = memo.get(manifests)
  if (hit?.live === live) return hit.out
  const out = overlay(live, manifests)
  memo.set(manifests, { live, out })
  return out
}

function overlay(live: readonly LiveStorage[], manifests: readonly Manifest[]): readonly LiveStorage[] {
  const declared = manifests.filter((m): m is StorageManifest => m.kind === 'Storage')
  if (declared.length === 0) return live
  const nodes = [...new Set(live.map((s) => s.node))]
  const byId = new Map(declared.map((m) => [m.spec.id, m]))
  const out = live.filter((s) => !byId.has(s.storage))
  for (const m of declared) {
    const rows = live.filter((s) => s.storage === m.spec.id)
    const exists = rows.length > 0
    for (const node of nodes) {
      const row = rows.find((s) => s.node === node)
      const onNode = m.spec.nodes !== undefined ? m.spec.nodes.includes(node) : exists ? row !== undefined : true
      const disabled = m.spec.disable ?? (exists ? row === undefined : false)
      if (!onNode || disabled) continue
      out.push({
        node,
        storage: m.spec.id,
        type: m.spec.type,
        content: m.spec.content ?? row?.content ?? rows[0]?.content ?? DEFAULT_CONTENT[m.spec.type],
        active: true,
        enabled: true,
        shared: SHARED_TYPES.includes(m.spec.type) || m.spec.shared === true,
      })
    }
  }
  return out.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : a.storage < b.storage ? -1 : 1))
}
