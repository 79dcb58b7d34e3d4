/** Text helpers every layer shares: one deterministic order and one way to read an error. */

/** Plain code-unit order: deterministic regardless of locale. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** An error's message, or the thrown value as text. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message
  return String(error)
}

/** A mapping as a property string: `key=value` pairs with sorted keys, booleans as 1/0 (storage.cfg, datacenter.cfg) */
export function sortedPairs(h: Readonly<Record<string, unknown>>): string {
  return Object.keys(h)
    .sort()
    .map((k) => `${k}=${h[k] === true ? '1' : h[k] === false ? '0' : String(h[k])}`)
    .join(',')
}
