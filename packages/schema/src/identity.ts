/**
 * The identity index of one cluster's manifests: which PVE object each declares (a kind's `identity`:
 * kinds/contract.ts) and every second declaration of one object. `validate` (loader/checks.ts) reports them
 * with both files; `plan()` refuses them before planning anything. docs/repository.md#per-cluster-index-and-dependencies
 */
import type { Identity } from './kinds/contract.js'
import { schemaKind } from './kinds.js'
import type { Manifest } from './manifest/types.js'

export type { Identity } from './kinds/contract.js'

/** One manifest's declaration of a PVE object. */
export interface IdentityClaim<M extends Manifest = Manifest> {
  manifest: M
  identity: Identity
}

/** A PVE object declared twice: the first declaration (in manifest order) and a later one. */
export interface IdentityConflict<M extends Manifest = Manifest> {
  first: IdentityClaim<M>
  second: IdentityClaim<M>
}

export interface IdentityIndex<M extends Manifest = Manifest> {
  /** the first manifest declaring the object of `key` */
  owner(key: string): M | undefined
  /** every later declaration of an object already declared, in manifest order */
  conflicts: readonly IdentityConflict<M>[]
}

/** The PVE objects a manifest declares. */
export function identitiesOf(m: Manifest): Identity[] {
  return schemaKind(m.kind).identity(m)
}

export function identityIndex<M extends Manifest>(manifests: readonly M[]): IdentityIndex<M> {
  const owners = new Map<string, IdentityClaim<M>>()
  const conflicts: IdentityConflict<M>[] = []
  for (const manifest of manifests)
    for (const identity of identitiesOf(manifest)) {
      const first = owners.get(identity.key)
      if (first === undefined) owners.set(identity.key, { manifest, identity })
      else if (first.manifest !== manifest) conflicts.push({ first, second: { manifest, identity } })
    }
  return { owner: (key) => owners.get(key)?.manifest, conflicts }
}

/**
 * `PVE pool id "web" is declared by both Pool/web (pool/base/p.yaml:1) and Pool/other`; `firstAt` is where the
 * first declaration is written, when known.
 */
export function conflictMessage(c: IdentityConflict, firstAt?: string): string {
  const who = ({ manifest, identity }: IdentityClaim): string =>
    `${manifest.kind}/${manifest.metadata.name}${identity.where ?? ''}`
  const rule = c.second.identity.rule
  return `${c.second.identity.label} is declared by both ${who(c.first)}${firstAt ? ` (${firstAt})` : ''} and ${who(c.second)}${rule ? `; ${rule}` : ''}`
}
