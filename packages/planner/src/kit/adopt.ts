import type { LiveGuest } from '../inventory.js'
import { API_VERSION, KIND_ROOT_OF, type Kind } from '@proxops/schema'

export interface AdoptOptions {
  /** the cluster the files are written for (`<kind>/<cluster>/<name>.yaml`) */
  cluster: string
  /** stripped from the adopted tags (default `proxops`) */
  ownershipTag?: string
  /**
   * the cluster SOPS document's `cloud-init.ssh-keys` entries (name -> key text), when the cluster has one:
   * live keys that all match an entry become `ssh-key-refs`
   */
  sshKeys?: Readonly<Record<string, string>>
  /** `--adopt-secrets`: unmatched keys become new entries `adopted-<fingerprint>` (needs `sshKeys`) */
  importSshKeys?: boolean
  /** ids of the live pools to write Pool manifests for (selectForAdoption's choice); absent = every pool */
  poolManifests?: readonly string[]
}

export interface AdoptedFile {
  /** relative to the repository root: `vm/homelab/web.yaml` */
  path: string
  kind: Kind
  name: string
  node?: string
  vmid?: number
  /** the manifest as YAML-ready plain data, in the shape a user writes (quantities as strings) */
  document: Record<string, unknown>
  /** why the manifest cannot be listed in resources.yaml yet (empty = complete) */
  incomplete: string[]
}

/** the manifest file of a cluster-wide object (`<kind root>/<cluster>/<name>.yaml`), complete */
export function adoptedFile(kind: Kind, cluster: string, name: string, spec: Record<string, unknown>): AdoptedFile {
  return {
    path: `${KIND_ROOT_OF[kind]}/${cluster}/${name}.yaml`,
    kind,
    name,
    document: { apiVersion: API_VERSION, kind, metadata: { name }, spec },
    incomplete: [],
  }
}

export interface AdoptGap {
  kind: Kind
  node: string
  /** vmid, or the volid for artifacts */
  id: string
  /** the PVE config key (or `key.token` for a token of a property string), or the manifest field */
  field: string
  /** the live value; `(sensitive)` for sensitive keys */
  value: string
  note: string
}

export interface AdoptSkip {
  kind: Kind
  node: string
  id: string
  name?: string
  reason: string
}

export interface AdoptResult {
  cluster: string
  /** sorted by path */
  files: AdoptedFile[]
  /** sorted kind, id, node, field, value; de-duplicated */
  gaps: AdoptGap[]
  /** `{ path, reason }` for every file that must be reviewed before it is composed */
  incomplete: { path: string; reason: string }[]
  skipped: AdoptSkip[]
  warnings: string[]
  /** the lines to add under `resources:` in `clusters/<cluster>/resources.yaml` (complete files only) */
  resourcesLines: string[]
  /** counts only, never values: VMs with a live cloud-init password, VMs whose keys stayed `["*"]` */
  census: { cipassword: number; unmatchedSshKeys: number }
  /** with `importSshKeys`: entries to merge into `cloud-init.ssh-keys` of the SOPS file (new names only) */
  newSshKeys: { name: string; value: string }[]
  summary: { nodes: string[]; guests: number; isos: number; ctTemplates: number; backupJobs: number }
}

export interface Collect {
  gaps: AdoptGap[]
  warnings: string[]
}

/** a unique file name for a live object of a kind (claimed once per run) */
export type Claim = (kind: Kind, base: string, id: string | number) => string

/** What every kind's adopt shares in one run (Kind.adopt): the options, the findings, the files written so far. */
export interface AdoptContext {
  readonly options: AdoptOptions
  /** the ownership tag, lower-cased (stripped from adopted tags) */
  readonly tag: string
  readonly claim: Claim
  readonly collect: Collect
  /** every file written so far; a kind adds its own */
  readonly files: AdoptedFile[]
  /** the live guests' files by vmid, for the kinds that live on a guest (its firewall, HA resource, pool) */
  readonly guestFiles: Map<number, { guest: LiveGuest; file: AdoptedFile }>
  readonly skipped: AdoptSkip[]
  /** the adopted ISOs' manifest names by volid (a VM's CD names its ISO) */
  readonly isoNames: Map<string, string>
  readonly census: AdoptResult['census']
  /** with `importSshKeys`: new `cloud-init.ssh-keys` entries by name */
  readonly newSshKeys: Map<string, string>
}

/** what a kind adopts from: the objects read, or none (not read, or unreadable: a warning says so) */
export function adoptable<T>(
  observed: { known: T } | { unreadable: string } | undefined,
  ctx: AdoptContext,
  what: string,
): T | undefined {
  if (observed === undefined) return undefined
  if ('unreadable' in observed) {
    ctx.collect.warnings.push(`${what} not adopted: ${observed.unreadable}`)
    return undefined
  }
  return observed.known
}
