/**
 * Just enough of PVE's property-string grammar for adopt: `head,key=value,key=value`. PVE config values
 * never contain `,` inside a token (lists inside use `;`), so a split is exact for the keys adopt reads.
 */
export interface Props {
  /** the first token when it has no `=` (a volume, a BDF, a CPU type) */
  head?: string
  /** every `key=value` token, in order (a head written as `key=value`, like `virtio=MAC`, is here too) */
  values: Map<string, string>
}

export function parseProps(value: string): Props {
  const tokens = value
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
  const values = new Map<string, string>()
  let head: string | undefined
  tokens.forEach((token, i) => {
    const eq = token.indexOf('=')
    if (eq < 0) {
      if (i === 0) head = token
      else values.set(token, '')
    } else values.set(token.slice(0, eq), token.slice(eq + 1))
  })
  return head !== undefined ? { head, values } : { values }
}

export function isOn(value: string | undefined): boolean {
  return value === '1' || value === 'on' || value === 'true'
}
