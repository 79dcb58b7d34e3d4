/**
 * PVE stores tags `;`-joined (PVE 8+), but older configs and hand edits use `,` or spaces. Splits on all
 * three, lower-cases (PVE compares tags case-insensitively by default), de-duplicates and sorts.
 */
export function splitTags(raw: string | undefined): string[] {
  if (!raw) return []
  const tags = new Set<string>()
  for (const part of raw.split(/[;,\s]+/)) {
    const tag = part.trim().toLowerCase()
    if (tag) tags.add(tag)
  }
  return [...tags].sort()
}
