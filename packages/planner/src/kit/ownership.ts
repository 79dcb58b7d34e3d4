/**
 * Which cluster entry owns a live guest (docs/safety.md, section 1). An owned guest carries the ownership tag
 * (`proxops`) and a marker naming the entry (`proxops.<entry>`), so two entries that reach one PVE cluster can
 * never take or prune each other's guests. A guest with the ownership tag and no marker (tagged before markers
 * existed) is `unmarked`: the entry whose manifest claims it writes its marker; no entry prunes it.
 *
 * Objects without tags (pools, backup jobs) carry the same marker as the first word of their PVE comment:
 * `managed-by=<ownershipTag>.<entry>` (`managed-by=<ownershipTag>` when the policy names no entry).
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

/** The ownership tag itself or a marker (`<ownershipTag>.<entry>`). */
export const isOwnershipTag = (tag: string, ownershipTag: string): boolean =>
  tag === ownershipTag || tag.startsWith(`${ownershipTag}.`)

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

const COMMENT_MARKER = 'managed-by='

/** The marker this cluster entry writes as the first word of a pool's or backup job's comment. */
export const commentMarker = (policy: Pick<Policy, 'ownershipTag' | 'clusterEntry'>): string =>
  `${COMMENT_MARKER}${ownerMarker(policy) ?? policy.ownershipTag}`

export type CommentOwner = Owner['kind']

/** The first word of a pool's or backup job's comment: where its marker stands, if it has one. */
export const commentWord = (comment: string | undefined): string => (comment ?? '').trim().split(/\s+/)[0] ?? ''

/**
 * Who owns an object by the first word of its comment, as guests' tags say it: without a cluster entry any
 * ProxOps marker is this one's; with one, the bare `managed-by=<tag>` is unmarked (claimed by a declaration,
 * never pruned) and another entry's marker is never touched.
 */
export function commentOwner(
  comment: string | undefined,
  policy: Pick<Policy, 'ownershipTag' | 'clusterEntry'>,
): CommentOwner {
  const word = commentWord(comment)
  if (!word.startsWith(COMMENT_MARKER)) return 'none'
  const owner = word.slice(COMMENT_MARKER.length)
  const tag = policy.ownershipTag
  if (owner !== tag && !owner.startsWith(`${tag}.`)) return 'none'
  if (policy.clusterEntry === undefined) return 'self'
  if (owner === tag) return 'unmarked'
  return owner === `${tag}.${policy.clusterEntry}` ? 'self' : 'other'
}

/** The user's part of a live comment (after a ProxOps marker of any entry), for adopt; undefined when empty. */
export function commentText(comment: string | undefined, ownershipTag: string): string | undefined {
  if (comment === undefined) return undefined
  const text = comment.trim()
  const rest = commentOwner(text, { ownershipTag }) === 'none' ? text : text.replace(/^\S+\s*/, '')
  return rest === '' ? undefined : rest
}
