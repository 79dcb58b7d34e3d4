/**
 * ClusterOptions, planner side: each option of the schema's table (CLUSTER_OPTIONS) in the string form the client
 * reads `GET /cluster/options` in (decodeClusterOptions: objects as sorted `key=value` pairs, lists `;`-joined),
 * which is also what `PUT /cluster/options` takes.
 */
import { CLUSTER_OPTIONS, type ClusterOptionKey, type ClusterOptionsManifest } from '@proxops/schema'
import { sortedPairs } from '../../kit/text.js'

export const OPTION_KEYS = Object.keys(CLUSTER_OPTIONS) as ClusterOptionKey[]

const text = (x: unknown): string => (x === true ? '1' : x === false ? '0' : String(x))

/** A declared option in PVE's string form. */
export function encodeClusterOption(key: ClusterOptionKey, value: unknown): string {
  const form = CLUSTER_OPTIONS[key].form
  if (form === 'map') return sortedPairs(value as Record<string, unknown>)
  if (form === 'list') return (value as string[]).join(';')
  return text(value)
}

/** A live option as the compare reads it: the description without its trailing newline (comment lines) */
export const liveClusterOption = (live: Readonly<Record<string, string>>, key: ClusterOptionKey): string | undefined =>
  key === 'description' ? live.description?.replace(/\n+$/, '') : live[key]

/** The declared options, in table order. */
export function declaredClusterOptions(m: ClusterOptionsManifest): { key: ClusterOptionKey; value: string }[] {
  const spec = m.spec as Record<string, unknown>
  return OPTION_KEYS.flatMap((key) =>
    spec[key] === undefined ? [] : [{ key, value: encodeClusterOption(key, spec[key]) }],
  )
}

/** A live option as a manifest value (adopt): the table's form read backwards. */
export function decodeClusterOption(key: ClusterOptionKey, value: string): unknown {
  const form = CLUSTER_OPTIONS[key].form
  if (form === 'map') {
    const out: Record<string, string> = {}
    for (const token of value.split(',')) {
      const eq = token.indexOf('=')
      if (eq > 0) out[token.slice(0, eq)] = token.slice(eq + 1)
    }
    return out
  }
  if (form === 'list') return value.split(';').filter((x) => x !== '')
  if (form === 'int') return Number(value)
  return value
}
