/**
 * The storages the desired state names, and by whom: every `storage` field of a manifest's spec (a guest's disks,
 * root filesystem, mount points, EFI and TPM disks, cloud-init drive, clone target; an artifact; a backup job). A
 * storage one of them names is never pruned. Pure.
 */
import type { Manifest } from '@proxops/schema'

export function namedStorages(manifests: readonly Manifest[]): Map<string, string> {
  const out = new Map<string, string>()
  for (const m of manifests) {
    if (m.kind === 'Storage') continue
    const key = `${m.kind}/${m.metadata.name}`
    walk(m.spec, (id) => {
      if (!out.has(id)) out.set(id, key)
    })
  }
  return out
}

function walk(value: unknown, found: (storage: string) => void): void {
  if (Array.isArray(value)) for (const v of value) walk(v, found)
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) {
      if (k === 'storage' && typeof v === 'string') found(v)
      else walk(v, found)
    }
}
