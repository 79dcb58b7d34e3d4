import { WireError } from './errors.js'
import { toStr } from './scalars.js'

/**
 * Guest config as PVE returns it (`GET .../config`): a flat object whose values are typed by Perl history
 * (`cores:2`, `memory:"2048"`, `onboot:1`). Decoded into PVE's string form for every key, `digest` apart.
 */
export interface DecodedGuestConfig {
  digest: string
  values: Record<string, string>
}

export function decodeGuestConfig(raw: unknown, field = 'config'): DecodedGuestConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new WireError('WIRE_CONFIG', 'expected an object', field)
  }
  let digest = ''
  const entries: [string, string][] = []
  for (const key of Object.keys(raw).sort()) {
    const value = (raw as Record<string, unknown>)[key]
    if (value === null || value === undefined) continue
    if (key === 'lxc' && Array.isArray(value)) {
      entries.push([key, rawLxcLines(value, `${field}.lxc`)])
      continue
    }
    if (typeof value === 'object')
      throw new WireError('WIRE_CONFIG', `key '${key.slice(0, 40)}' is not a scalar`, field)
    const s = toStr(value, `${field}.${key.slice(0, 40)}`)
    if (key === 'digest') digest = s
    else entries.push([key, s])
  }
  // fromEntries defines own properties, so a key such as `__proto__` cannot touch the prototype
  return { digest, values: Object.fromEntries(entries) }
}

/**
 * pve-container returns a container's raw `lxc.*` lines as `lxc: [[key, value], ...]` (parse_pct_config). They
 * become one value, the lines as the config file has them (`lxc.key: value`, newline-separated, file order),
 * so the key stays a plain unmodelled key.
 */
function rawLxcLines(pairs: unknown[], field: string): string {
  return pairs
    .map((pair, i) => {
      if (!Array.isArray(pair) || pair.length !== 2)
        throw new WireError('WIRE_CONFIG', 'expected [key, value] pairs', `${field}[${i}]`)
      return `${toStr(pair[0], `${field}[${i}][0]`)}: ${toStr(pair[1], `${field}[${i}][1]`)}`
    })
    .join('\n')
}
