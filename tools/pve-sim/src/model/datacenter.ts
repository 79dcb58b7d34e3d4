/**
 * datacenter.cfg as pve-cluster's PVE::DataCenterConfig keeps it: one line per option, property strings as
 * written. `parse_datacenter_config` turns the property-string options into objects when the file is read (what
 * `GET /cluster/options` returns), the comment lines into `description`, and an unset `mac_prefix` into
 * Proxmox's OUI.
 */

/** the options parse_datacenter_config reads with parse_property_string */
const PROPERTY_STRINGS = new Set([
  'crs',
  'migration',
  'replication',
  'next-id',
  'ha',
  'notify',
  'u2f',
  'webauthn',
  'tag-style',
  'user-tag-access',
])

/** Proxmox Server Solutions' OUI, PVE::DataCenterConfig $PROXMOX_OUI */
export const PROXMOX_OUI = 'BC:24:11'

export class DatacenterConfig {
  /** option -> its line's value as written */
  readonly options = new Map<string, string>()

  /** parse_datacenter_config */
  read(): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    for (const [k, v] of [...this.options].sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (k === 'description') continue
      if (PROPERTY_STRINGS.has(k)) {
        // an empty crs line is ignored (warned about); the others are parsed
        if (v === '') continue
        const parsed: Record<string, unknown> = {}
        for (const token of v.split(',')) {
          const eq = token.indexOf('=')
          if (eq > 0) parsed[token.slice(0, eq)] = token.slice(eq + 1)
        }
        if (k === 'user-tag-access' && typeof parsed['user-allow-list'] === 'string')
          parsed['user-allow-list'] = parsed['user-allow-list'].split(';')
        out[k] = parsed
      } else if (k === 'registered-tags') out[k] = v.split(';')
      else out[k] = v
    }
    // the comment lines (description), always present
    out.description = this.options.get('description') ?? ''
    out.mac_prefix = this.options.get('mac_prefix') ?? PROXMOX_OUI
    return out
  }
}
