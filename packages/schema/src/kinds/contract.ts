/**
 * What every manifest kind tells the schema package: its spellings, kind-root folder, valibot spec schema, the
 * cross-field rules (finalise), the prerequisites it names (references) and the PVE objects it declares
 * (identity). A kind lives in its own folder (kinds/<kind>/) and is listed once, in kinds/registry.ts; every
 * table that lists kinds (kinds.ts, the JSON Schema, the reference, the loader's identity checks) is derived
 * from that list. docs/architecture.md#schema
 *
 * This module and the kind folders import nothing that lists kinds: the registry imports them, never the reverse.
 */
import type * as v from 'valibot'
import type { ErrorCode } from '../errors.js'
import type { API_VERSION, metadataSchema } from '../manifest/envelope.js'
import type { Out } from '../manifest/infer.js'

export type PathKey = string | number

export interface ManifestIssue {
  code: ErrorCode
  /** field path inside the document, e.g. `['spec', 'disks', 0, 'size']` */
  path: PathKey[]
  message: string
}

/** How a kind's finalise reports a problem of one manifest. */
export type Add = (code: ErrorCode, path: PathKey[], message: string) => void

/** name (identity within a kind and cluster), informational namespace, labels and annotations */
export type Metadata = Out<typeof metadataSchema>

/** A normalised manifest of kind `K` with spec `S`. */
export interface Envelope<K extends string, S> {
  apiVersion: typeof API_VERSION
  kind: K
  metadata: Metadata
  spec: S
}

/** A prerequisite a manifest names in a field (the annotation's are added by graph.ts). */
export interface KindReference<T extends string = string> {
  /** the kind of the manifest it names */
  kind: T
  /** the target's `metadata.name`, or the PVE id when `identity` is set */
  name: string
  /** which field makes the reference */
  via:
    | 'cdrom'
    | 'disk-image'
    | 'clone'
    | 'template'
    | 'pool'
    | 'role'
    | 'group'
    | 'user'
    | 'token'
    | 'zone'
    | 'vnet'
    | 'controller'
    | 'storage'
  /** where the reference is written in the manifest */
  path: PathKey[]
  /**
   * set when the field names a PVE object rather than a manifest (a pool id): the target is the manifest
   * declaring this {@link Identity.key}, and none is no problem (the object is one PVE already has)
   */
  identity?: string
}

/** how a field names an object of `kind` by its PVE id: the manifest declaring the identity `key(id)`, if any */
export const referenceById =
  <K extends string>(kind: K, via: KindReference['via'], key: (id: string) => string) =>
  (id: string, path: PathKey[]): KindReference<K> => ({ kind, name: id, via, path, identity: key(id) })

/**
 * One PVE object a manifest declares. Two manifests of one cluster with one key declare the same PVE object,
 * which `validate` and `plan` refuse (identity.ts).
 */
export interface Identity {
  /** unique across kinds: `vmid:101`, `pool:web`, `backup-job:nightly` */
  key: string
  /** how a message names the object: `PVE id 101`, `PVE pool id "web"` */
  label: string
  /** said after the manifest's key in a message: ` on node "pve1"` */
  where?: string
  /** the rule, said at the end of a message: `vmids are unique across the whole cluster` */
  rule?: string
  /** the field that declares it (for a default taken from `metadata.name`, that field) */
  path: PathKey[]
  /** the code a second declaration is reported with */
  code: ErrorCode
}

/** the field that declares a manifest's PVE id: `spec.id`, or `metadata.name` where the id defaulted to it */
export const idPath = (m: { metadata: { name: string }; spec: { id: string } }): PathKey[] =>
  m.spec.id === m.metadata.name ? ['metadata', 'name'] : ['spec', 'id']

/** the one PVE object a manifest with a `spec.id` declares */
export function idIdentity(
  key: string,
  label: string,
  m: { metadata: { name: string }; spec: { id: string } },
  code: ErrorCode,
): Identity[] {
  return [{ key, label, path: idPath(m), code }]
}

/** One manifest kind (see the module comment); `M` is its normalised manifest. */
export interface SchemaKind<M extends Envelope<string, unknown>> {
  name: M['kind']
  /** other accepted spellings (matched case-insensitively, as `name` is) */
  aliases: readonly string[]
  /** the kind-root folder its manifests live under */
  root: string
  /** the envelope's description (JSON Schema, docs/schema-reference.md) */
  description: string
  spec: v.GenericSchema
  /** a guest: identity `vmid`, shares PVE's cluster-wide id space with the other guest kinds */
  guest: boolean
  /** pruned under the empty-desired guard, which `--allow-empty <Kind>` lifts (docs/safety.md) */
  allowEmpty: boolean
  /**
   * Cross-field rules and context defaults; rewrites the schema's output (`m`) in place into `M`. Runs after
   * the annotations are checked.
   */
  finalise(m: M, add: Add): void
  /** the prerequisites the manifest names in its fields, in field order */
  references(m: M): KindReference[]
  /** the PVE objects it declares (none when its identity is its `Kind/name` alone) */
  identity(m: M): Identity[]
}
