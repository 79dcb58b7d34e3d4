/**
 * What PVE would refuse for a storage reason `diff` can see: a volume allocated on a storage that the guest's
 * node does not have enabled (pve-storage storage_check_enabled), or whose `content` does not hold guest volumes
 * (qemu-server create_disks: `images`; pve-container create_vm's $check_and_activate_storage: `rootdir`). The
 * guest is then blocked in diff instead of failing in apply (docs/safety.md, "Refusals ProxOps foresees"). The
 * node's storages come from `/cluster/resources`, which lists the enabled ones; without any row for the node the
 * storages are unknown and nothing is refused here. Pure.
 */
import type { GuestType } from '@proxops/pve-client/wire'
import type { LiveStorage } from '../../inventory.js'
import type { Draft } from '../../kit/draft.js'
import { isCreateForm } from './volumes.js'

/** `<storage>:<size or 0>` at the start of a value: a new volume (the cloud-init drive `<storage>:cloudinit` is none) */
const ALLOCATES = /^[^:,=/]+:\d/

/** PVE's refusals of the volumes the drafts allocate, one line each, sorted; empty when it would accept them */
export function storageRefusals(
  type: GuestType,
  node: string,
  drafts: readonly Draft[],
  storages: readonly LiveStorage[],
): string[] {
  const here = new Map(storages.filter((s) => s.node === node).map((s) => [s.storage, s]))
  if (here.size === 0) return []
  const wanted = new Map<string, string>()
  for (const d of drafts)
    for (const r of d.requests) {
      if (r.call === 'cloneGuest' && r.params.storage !== undefined)
        wanted.set(String(r.params.storage), 'clone storage')
      // move_vm_disk checks the target's `images` before forking; move_volume's alloc_disk checks no content type
      if (r.call === 'moveDisk') wanted.set(r.storage, type === 'qemu' ? r.disk : `${r.disk} (move)`)
      if (r.call !== 'createGuest' && r.call !== 'updateConfig') continue
      for (const [key, value] of Object.entries(r.params)) {
        // a create form starts `<storage>:<number>` (a quick test before the property-string parse)
        if (typeof value !== 'string' || !ALLOCATES.test(value) || !isCreateForm(type, key, value)) continue
        wanted.set(value.slice(0, value.indexOf(':')), key)
      }
    }
  const content = type === 'qemu' ? 'images' : 'rootdir'
  const out: string[] = []
  for (const [storage, key] of wanted) {
    const s = here.get(storage)
    if (!s) out.push(`${key}: storage '${storage}' does not exist, is disabled or is not available on node '${node}'`)
    else if (!s.content.includes(content) && !key.endsWith(' (move)'))
      out.push(
        `${key}: storage '${storage}' does not support ${type === 'qemu' ? 'vm images' : 'container directories'} (its content is ${s.content.join(',') || 'empty'})`,
      )
  }
  return out.sort()
}
