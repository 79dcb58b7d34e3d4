/** A live name as a manifest name: lower-case words joined by `-`, at most 63 characters. */
export function sanitiseName(raw: string | undefined, fallback: string): string {
  const name = (raw ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '')
  return name || fallback
}
