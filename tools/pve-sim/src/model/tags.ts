/** Tag lists (`pve-tag-list`, PVE::Tools split_list). */

const TAG_RE = /^[a-z0-9_][a-z0-9_\-+.]*$/i

/** Splits on `;`, `,` or whitespace, as PVE's split_list does; empty parts are dropped. */
export function splitTags(text: string): string[] {
  return text.split(/[;,\s]+/).filter((t) => t.length > 0)
}

export function invalidTag(text: string): string | undefined {
  return splitTags(text).find((t) => !TAG_RE.test(t))
}

/** get_unique_tags with the default tag-style: lower-cased, de-duplicated, sorted, `;`-joined. */
export function normaliseTags(text: string): string {
  const set = new Set(splitTags(text).map((t) => t.toLowerCase()))
  return [...set].sort().join(';')
}
