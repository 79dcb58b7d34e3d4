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

/** PVE sizes (`8G`, `512M`, `4K`, `1T`, bare bytes; binary units, maybe fractional) as bytes. */
export function pveSizeBytes(size: string | undefined): number | undefined {
  if (size === undefined) return undefined
  const m = /^(\d+(?:\.\d+)?)([KMGTP]?)$/i.exec(size.trim())
  if (!m) return undefined
  const power = { '': 0, K: 1, M: 2, G: 3, T: 4, P: 5 }[m[2]!.toUpperCase() as '' | 'K' | 'M' | 'G' | 'T' | 'P']
  const bytes = Number(m[1]) * 1024 ** power
  return Number.isSafeInteger(Math.round(bytes)) ? Math.round(bytes) : undefined
}

export function isOn(value: string | undefined): boolean {
  return value === '1' || value === 'on' || value === 'true'
}
