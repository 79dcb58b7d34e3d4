import type { Add } from '../contract.js'
import { finaliseSdnId, ZONE_ID } from '../../manifest/sdn.js'
import { ZONE_KEYS, ZONE_REQUIRED } from './schema.js'
import type { ZoneManifest } from './types.js'

/**
 * The id rule, then check_config's per-type rules: a key the type's plugin does not take, a required one missing
 * (Zones::*Plugin options()), and QinQ's service tag at most 4096.
 */
export function finaliseZone(m: ZoneManifest, add: Add): void {
  finaliseSdnId(m, ZONE_ID, add)
  const spec = m.spec as Record<string, unknown>
  const allowed = new Set(['id', 'type', ...ZONE_KEYS[m.spec.type]])
  for (const k of Object.keys(spec))
    if (!allowed.has(k) && spec[k] !== undefined)
      add('field-invalid', ['spec', k], `a ${m.spec.type} zone has no ${k} (PVE refuses it: unexpected property)`)
  for (const k of ZONE_REQUIRED[m.spec.type])
    if (spec[k] === undefined) add('field-required', ['spec', k], `a ${m.spec.type} zone needs ${k}`)
  if (m.spec.dnszone !== undefined && m.spec.dns === undefined)
    add('field-invalid', ['spec', 'dnszone'], 'dnszone needs dns (PVE: missing dns server)')
}
