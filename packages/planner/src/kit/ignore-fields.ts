/**
 * `ignore-fields` (docs/operations.md, "Per-object policies"; as Argo CD's ignoreDifferences): manifest paths whose
 * live values are never compared, from the cluster's defaults for the kind and the manifest's `proxops/ignore-fields`.
 * A path covers itself and everything below it (`spec.disks` covers `spec.disks[0].size`).
 */
import { IGNORE_FIELDS, ignoreFieldPaths, type Manifest } from '@proxops/schema'
import type { Policy } from '../plan-types.js'

export function ignoredFields(m: Manifest, policy: Pick<Policy, 'ignoreFields'>): (field: string) => boolean {
  const own = m.metadata.annotations?.[IGNORE_FIELDS]
  const paths = [...(policy.ignoreFields?.[m.kind] ?? []), ...(own !== undefined ? ignoreFieldPaths(own) : [])]
  if (paths.length === 0) return () => false
  return (field) => paths.some((p) => field === p || field.startsWith(`${p}.`) || field.startsWith(`${p}[`))
}
