/**
 * The tables that list the manifest kinds, all derived from the registry (kinds/registry.ts): names, accepted
 * spellings, kind-root directories, the guest kinds and the kinds `--allow-empty` lifts the guard of.
 */
import type { SchemaKind } from './kinds/contract.js'
import { SCHEMA_KINDS, type AllowEmptyKind, type GuestKind, type Kind, type Manifest } from './kinds/registry.js'

export { API_VERSION } from './manifest/envelope.js'
export type { AllowEmptyKind, GuestKind, Kind } from './kinds/registry.js'

export const KINDS: readonly Kind[] = SCHEMA_KINDS.map((k) => k.name)

/** Guest kinds: identity `vmid`, sharing PVE's cluster-wide id space. */
export const GUEST_KINDS: readonly GuestKind[] = SCHEMA_KINDS.flatMap((k) => (k.guest ? [k.name] : []))

/** The kinds whose empty-desired prune guard `--allow-empty <Kind>` lifts (docs/safety.md). */
export const ALLOW_EMPTY_KINDS: readonly AllowEmptyKind[] = SCHEMA_KINDS.flatMap((k) => (k.allowEmpty ? [k.name] : []))

/** Accepted spellings, matched case-insensitively: the name first. */
export const KIND_ALIASES: Readonly<Record<Kind, readonly string[]>> = Object.fromEntries(
  SCHEMA_KINDS.map((k) => [k.name, [k.name, ...k.aliases]]),
) as unknown as Record<Kind, readonly string[]>

/** Kind-root directories: exactly these names, in registry order. */
export const KIND_ROOTS: readonly string[] = SCHEMA_KINDS.map((k) => k.root)
export const KIND_ROOT_OF: Readonly<Record<Kind, string>> = Object.fromEntries(
  SCHEMA_KINDS.map((k) => [k.name, k.root]),
) as unknown as Record<Kind, string>

const BY_LOWER = new Map<string, Kind>()
for (const kind of KINDS) for (const alias of KIND_ALIASES[kind]) BY_LOWER.set(alias.toLowerCase(), kind)

/** The canonical kind for any accepted spelling (case-insensitive), else undefined. */
export function canonicalKind(spelling: string): Kind | undefined {
  return BY_LOWER.get(spelling.trim().toLowerCase())
}

export function isGuestKind(kind: Kind): kind is GuestKind {
  return (GUEST_KINDS as readonly string[]).includes(kind)
}

const BY_NAME = new Map<Kind, SchemaKind<Manifest>>(
  SCHEMA_KINDS.map((k) => [k.name, k as unknown as SchemaKind<Manifest>]),
)

/** The registry entry of a kind, typed for any manifest (each entry is called only with its own kind's). */
export function schemaKind(kind: Kind): SchemaKind<Manifest> {
  return BY_NAME.get(kind)!
}

/**
 * A JSON-Schema/ECMAScript pattern matching any accepted spelling of the given kinds, ignoring case
 * (`VM` -> `[Vv][Mm]`), for editors whose regex engines have no `i` flag.
 */
export function kindPattern(kinds: readonly Kind[]): string {
  const spellings = kinds.flatMap((k) => KIND_ALIASES[k])
  const parts = spellings.map((s) =>
    [...s].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join(''),
  )
  return `^(?:${parts.join('|')})$`
}
