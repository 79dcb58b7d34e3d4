import { WireError, excerpt } from './errors.js'
import { splitList } from './list.js'

/**
 * PVE tag lists (`pve-tag-list`): split on `;`, `,` or whitespace; each tag `^[a-z0-9_][a-z0-9_\-+.]*$`
 * (case-insensitive on input). PVE stores them lower-cased, de-duplicated, sorted and `;`-joined.
 */

const TAG = /^[a-z0-9_][a-z0-9_\-+.]*$/i

/** Splits a tag string as PVE does; throws WIRE_TAGS for an invalid tag. Keeps case and order. */
export function parseTags(input: string | undefined | null, field = 'tags'): string[] {
  if (input == null) return []
  if (typeof input !== 'string') throw new WireError('WIRE_TAGS', 'expected a string', field)
  const tags = splitList(input)
  for (const tag of tags) {
    if (!TAG.test(tag)) throw new WireError('WIRE_TAGS', `invalid characters in tag ${excerpt(tag)}`, field)
  }
  return tags
}

/**
 * The tags of a string PVE stored or listed (a config's `tags`, a `/cluster/resources` row), as a set:
 * lower-cased, de-duplicated, sorted. Not validated: whatever PVE holds is reported, never refused.
 */
export function readTags(input: string | undefined | null): string[] {
  if (typeof input !== 'string') return []
  return [...new Set(splitList(input).map((t) => t.toLowerCase()))].sort(codePointCompare)
}

/** Lower-cased, de-duplicated, sorted (code-point order, as Perl's `sort`). */
export function normaliseTags(tags: readonly string[], field = 'tags'): string[] {
  if (!Array.isArray(tags)) throw new WireError('WIRE_TAGS', 'expected a list of tags', field)
  for (const tag of tags as unknown[]) {
    if (typeof tag !== 'string' || !TAG.test(tag)) {
      throw new WireError(
        'WIRE_TAGS',
        typeof tag === 'string' ? `invalid characters in tag ${excerpt(tag)}` : 'a tag is not a string',
        field,
      )
    }
  }
  return [...new Set((tags as string[]).map((t) => t.toLowerCase()))].sort(codePointCompare)
}

/** The string PVE would store for these tags (`a;b`), or `''` for none. */
export function formatTags(tags: readonly string[], field = 'tags'): string {
  return normaliseTags(tags, field).join(';')
}

/** Normalises any accepted spelling to PVE's stored form: `Web, prod web` -> `prod;web`. */
export function normaliseTagString(input: string | undefined | null, field = 'tags'): string {
  return formatTags(parseTags(input, field), field)
}

function codePointCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
