/**
 * Which cluster entry owns a live guest (docs/safety.md, section 1). An owned guest carries the ownership tag
 * (`proxops`) and a marker naming the entry (`proxops.<entry>`), so two entries that reach one PVE cluster can
 * never take or prune each other's guests. A guest with the ownership tag and no marker (tagged before markers
 * existed) is `unmarked`: the entry whose manifest claims it writes its marker; no entry prunes it.
 */
import type { Policy } from '../plan-types.js'

export type Owner =
  /** no ownership tag: never touched */
  | { kind: 'none' }
  /** ownership tag and this entry's marker (or no entry named in the policy: the tag alone) */
  | { kind: 'self' }
  /** ownership tag without any marker */
  | { kind: 'unmarked' }
  /** a marker of another entry (with or without this entry's own) */
  | { kind: 'other'; entries: string[] }

/** The marker tag of the policy's cluster entry; undefined when the policy names no entry. */
export function ownerMarker(policy: Pick<Policy, 'ownershipTag' | 'clusterEntry'>): string | undefined {
  return policy.clusterEntry === undefined ? undefined : `${policy.ownershipTag}.${policy.clusterEntry}`
}

/** Marker tags in a live tag list: the entries named after `<ownershipTag>.`. */
export function markedEntries(tags: readonly string[], ownershipTag: string): string[] {
  const prefix = `${ownershipTag}.`
  return tags.filter((t) => t.startsWith(prefix) && t.length > prefix.length).map((t) => t.slice(prefix.length))
}

export function ownerOf(tags: readonly string[], policy: Pick<Policy, 'ownershipTag' | 'clusterEntry'>): Owner {
  const entries = markedEntries(tags, policy.ownershipTag)
  const others = entries.filter((e) => e !== policy.clusterEntry)
  // a marker of another entry wins even without the plain tag: that entry's guest, never this one's
  if (policy.clusterEntry !== undefined && others.length > 0) return { kind: 'other', entries: others }
  if (!tags.includes(policy.ownershipTag)) return { kind: 'none' }
  if (policy.clusterEntry === undefined) return { kind: 'self' }
  return entries.length > 0 ? { kind: 'self' } : { kind: 'unmarked' }
}

/** the guests this entry may update and report as its own (an unmarked guest is claimed by its manifest) */
export const ownedHere = (o: Owner): boolean => o.kind === 'self' || o.kind === 'unmarked'
