/**
 * adopt: a guest's live firewall as `spec.firewall` in the shape a user writes, so that the adopted manifest
 * plans no firewall change. A guest whose firewall is empty (no `<vmid>.fw`) gets none: its firewall stays
 * not owned. What the schema cannot express (security group rules, `forward` rules) makes the file incomplete
 * through the schema check adopt runs on every file.
 */
import type { LiveFirewall } from '../../inventory.js'
import { liveFirewall, OPTION_KEYS } from './canon.js'

const BOOLEAN_OPTIONS = new Set(['enable', 'ipfilter', 'macfilter', 'dhcp', 'ndp', 'radv'])
const RULE_KEYS = ['macro', 'proto', 'dport', 'sport', 'source', 'dest', 'iface', 'icmp-type', 'log'] as const

export function adoptFirewall(entry: LiveFirewall | undefined): Record<string, unknown> | undefined {
  if (!entry || 'unreadable' in entry) return undefined
  const c = liveFirewall(entry.known)
  if (Object.keys(c.options).length + c.rules.length + c.aliases.length + c.ipsets.length === 0) return undefined
  const out: Record<string, unknown> = {}
  for (const [yaml, pve] of Object.entries(OPTION_KEYS)) {
    const v = c.options[pve]
    if (v === undefined) continue
    out[yaml] = BOOLEAN_OPTIONS.has(pve) ? v === '1' : v
  }
  // PVE's default for a guest firewall without an enable line is off; the manifest's default is on
  out.enable ??= false
  if (c.rules.length > 0) {
    out.rules = c.rules.map((r) => {
      const rule: Record<string, unknown> = { direction: r.type, action: r.action }
      for (const k of RULE_KEYS) if (r[k] !== undefined) rule[k] = r[k]
      if (r.enable === '0') rule.enable = false
      if (r.comment !== undefined) rule.comment = r.comment
      return rule
    })
  }
  if (c.ipsets.length > 0) {
    out.ipsets = c.ipsets.map((s) => ({
      name: s.name,
      ...(s.comment === undefined ? {} : { comment: s.comment }),
      entries: s.entries.map((e) => ({
        cidr: e.cidr,
        ...(e.nomatch ? { nomatch: true } : {}),
        ...(e.comment === undefined ? {} : { comment: e.comment }),
      })),
    }))
  }
  if (c.aliases.length > 0) out.aliases = c.aliases.map((a) => ({ ...a }))
  return out
}
