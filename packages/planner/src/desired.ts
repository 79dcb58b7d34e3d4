/**
 * The desired state plan() reads: the normalised manifests of one cluster, exactly as @proxops/schema's
 * parser and loader hand them over (kebab-case keys, defaults applied, sizes in bytes, memory in MiB,
 * `undefined` = not owned). The shapes are the schema's `Manifest` types; the planner adds none of its own.
 */
import type {
  ArtifactManifest,
  BackupJobManifest,
  GuestManifest,
  Manifest,
  PoolManifest,
  QemuManifest,
} from '@proxops/schema'

export interface DesiredState {
  cluster: string
  /** the repository commit, recorded in the plan */
  commit?: string
  manifests: readonly Manifest[]
}

/**
 * Decrypted SOPS values by document path (`cloud-init.ssh-keys.alice`). plan() uses them only to compare
 * `sshkeys` with PVE; the plan itself holds the references, never the values.
 */
export type SecretLookup = (ref: string) => string | undefined

export function isArtifact(m: Manifest): m is ArtifactManifest {
  return m.kind === 'ISO' || m.kind === 'CTTemplate' || m.kind === 'DiskImage'
}
export function isBackupJob(m: Manifest): m is BackupJobManifest {
  return m.kind === 'BackupJob'
}
export function isQemu(m: Manifest): m is QemuManifest {
  return m.kind === 'VM' || m.kind === 'TemplateVM'
}
export function isGuest(m: Manifest): m is GuestManifest {
  return m.kind === 'VM' || m.kind === 'TemplateVM' || m.kind === 'LXC' || m.kind === 'TemplateCT'
}
export function isPool(m: Manifest): m is PoolManifest {
  return m.kind === 'Pool'
}

/** The storage content type an artifact kind lives in (its `download-url` `content`). */
export const ARTIFACT_CONTENT: Record<ArtifactManifest['kind'], 'iso' | 'vztmpl' | 'import'> = {
  ISO: 'iso',
  CTTemplate: 'vztmpl',
  DiskImage: 'import',
}

/** An artifact's volume id on its storage (`local:iso/debian.iso`). */
export const artifactVolid = (a: ArtifactManifest): string =>
  `${a.spec.storage}:${ARTIFACT_CONTENT[a.kind]}/${a.spec.filename}`

/** The content types the desired artifacts live in, sorted: the only storage content observe() lists for a plan. */
export function artifactContentTypes(desired: Pick<DesiredState, 'manifests'>): string[] {
  const out = new Set<string>()
  for (const m of desired.manifests) if (isArtifact(m)) out.add(ARTIFACT_CONTENT[m.kind])
  return [...out].sort()
}

/** The vmids of the desired guests, sorted: what observe() checks are free when nothing lists them (`vmids`). */
/** each declared guest's `spec.node` by vmid (observe reads a migration check for a guest found elsewhere) */
export function guestNodes(desired: Pick<DesiredState, 'manifests'>): Record<number, string> {
  const out: Record<number, string> = {}
  for (const m of desired.manifests)
    if (isQemu(m) || m.kind === 'LXC' || m.kind === 'TemplateCT') out[m.spec.vmid] = m.spec.node
  return out
}

export function guestVmids(desired: Pick<DesiredState, 'manifests'>): number[] {
  const out = new Set<number>()
  for (const m of desired.manifests) if (isQemu(m) || m.kind === 'LXC' || m.kind === 'TemplateCT') out.add(m.spec.vmid)
  return [...out].sort((a, b) => a - b)
}

/**
 * The pool ids the desired state names (a Pool, a guest's `spec.pool`, a backup job's `selection.pool`), sorted:
 * the pools observe() reads member by member (`pools`); the others' guests come from /cluster/resources.
 */
export function namedPools(desired: Pick<DesiredState, 'manifests'>): string[] {
  const out = new Set<string>()
  for (const m of desired.manifests) {
    if (isPool(m)) out.add(m.spec.id)
    else if (isGuest(m) && m.spec.pool !== undefined) out.add(m.spec.pool)
    else if (isBackupJob(m) && 'pool' in m.spec.selection) out.add(m.spec.selection.pool)
  }
  return [...out].sort()
}
