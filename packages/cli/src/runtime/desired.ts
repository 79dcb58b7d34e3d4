/** Loads one cluster's desired state from a tree through @proxops/schema's repository loader. */
import { loadRepository, type LoadedCluster } from '@proxops/schema'
import { addressesOf, type DesiredState } from '@proxops/planner'
import { CliError, problemLine } from '../errors.js'
import type { DesiredObject } from '../status-model.js'

export interface LoadedDesired {
  desired: DesiredState
  objects: DesiredObject[]
  cluster: LoadedCluster
}

export async function loadDesired(root: string, cluster: string, commit: string | undefined): Promise<LoadedDesired> {
  const model = await loadRepository({ root, cluster })
  const loaded = model.clusters.find((c) => c.name === cluster)
  const errors = loaded?.errors ?? model.errors
  if (!loaded || !loaded.ok || errors.length > 0) {
    const first = errors[0]
    throw new CliError(
      'REPOSITORY',
      `manifest parse error: ${first ? problemLine(first, errors.length) : `cluster ${cluster} is not in the repository at ${root}`}`,
    )
  }
  const manifests = loaded.index.resources.map((r) => r.manifest)
  const objects: DesiredObject[] = manifests.map((m) => {
    const spec = m.spec as { node?: string; vmid?: number; nodes?: readonly string[] }
    return {
      kind: m.kind,
      name: m.metadata.name,
      ...(spec.node !== undefined ? { node: spec.node } : spec.nodes ? { node: spec.nodes.join(',') } : {}),
      ...(spec.vmid !== undefined ? { vmid: spec.vmid } : {}),
      addresses: addressesOf(m),
    }
  })
  return { desired: { cluster, ...(commit ? { commit } : {}), manifests }, objects, cluster: loaded }
}
