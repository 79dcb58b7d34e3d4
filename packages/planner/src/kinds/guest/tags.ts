/**
 * The `tags` key of both guest kinds: the declared tags with the ownership tag and the entry's marker
 * (kit/ownership.ts), as PVE stores them, and what adopt keeps of a live tag list. PVE applies a tags write at
 * once, even on a running guest.
 */
import { formatTags, readTags } from '@proxops/pve-client/wire'
import { NONE, write, type Owned } from './fields.js'
import { isOwnershipTag } from '../../kit/ownership.js'

/**
 * Tags as PVE stores them: the declared tags plus the ownership tag and the entry's marker, lower-cased,
 * sorted, `;`-joined.
 */
export function tagsField(tags: readonly string[], ownershipTag: string, marker?: string): Owned {
  const want = formatTags(marker === undefined ? [...tags, ownershipTag] : [...tags, ownershipTag, marker])
  const wantSet: ReadonlySet<string> = new Set(want.split(';'))
  return {
    key: 'tags',
    field: 'spec.tags',
    create: want,
    running: 'none',
    compare: (live) => (live === want || sameTagSet(live ?? '', wantSet) ? NONE : [write(want)]),
  }
}

/** Whether a live tag string holds exactly these (valid, lower-case) tags, in any order, case or repetition. */
function sameTagSet(live: string, want: ReadonlySet<string>): boolean {
  const tags = readTags(live)
  return tags.length === want.size && tags.every((t) => want.has(t))
}

/** adopt: the live tags without the ownership tag and any entry's marker (the claim is the plan's to write). */
export function adoptTags(tags: readonly string[], ownershipTag: string): string[] {
  return tags.filter((t) => !isOwnershipTag(t, ownershipTag))
}
