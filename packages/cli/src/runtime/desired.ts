/** Loads one cluster's desired state from a tree through @proxops/schema's repository loader. */
import { loadRepository, type LoadedCluster, type Manifest } from '@proxops/schema'
import type { DesiredState } from '@proxops/planner'
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
      addresses: planAddresses(m),
    }
  })
  return { desired: { cluster, ...(commit ? { commit } : {}), manifests }, objects, cluster: loaded }
}

/**
 * The addresses under which a plan reports a manifest's object (docs/plan-format.md, `address`): guests
 * `Kind/node/vmid(name)`, artifacts `Kind/node/storage/filename` on each of their nodes, the cluster-wide kinds
 * by their PVE id. Every kind has its case: a kind without one would show as converged whatever the plan says.
 */
export function planAddresses(m: Manifest): string[] {
  switch (m.kind) {
    case 'VM':
    case 'TemplateVM':
    case 'LXC':
    case 'TemplateCT':
      return [`${m.kind}/${m.spec.node}/${m.spec.vmid}(${m.metadata.name})`]
    case 'ISO':
    case 'CTTemplate':
    case 'DiskImage':
      return m.spec.nodes.map((node) => `${m.kind}/${node}/${m.spec.storage}/${m.spec.filename}`)
    case 'BackupJob':
      return [`BackupJob/${m.spec.id}`]
    case 'Pool':
      return [`Pool/${m.spec.id}`]
  }
}
