/**
 * `spec.firewall` of VM, TemplateVM, LXC and TemplateCT: the guest's PVE firewall (options, ordered rules, IP sets,
 * aliases), checked offline the way pve-firewall's PVE::Firewall verify_rule, parse_address_list,
 * parse_port_name_number_or_range and the ipset / alias handlers check them, and written in the form PVE stores
 * (macro names in their preferred spelling, ipset names lower-case, `/32` and `/128` dropped from cidrs), so that
 * what PVE reads back compares equal. See docs/schema-reference.md (`spec.firewall`).
 */
import * as v from 'valibot'
import { issueMessage as m } from '../../errors.js'
import { bool, checked, jsonMeta, list, oneOf, str } from '../../manifest/fields.js'
import { FW_MACROS, ICMP_TYPES, ICMPV6_TYPES, PROTOCOLS, SERVICES } from './firewall-data.js'
import type { PathKey } from '../contract.js'

const LOG_LEVELS = ['emerg', 'alert', 'crit', 'err', 'warning', 'notice', 'info', 'debug', 'nolog'] as const
const POLICIES = ['ACCEPT', 'REJECT', 'DROP'] as const
export const FIREWALL_MACROS: readonly string[] = Object.keys(FW_MACROS)
const MACRO_BY_LC = new Map(FIREWALL_MACROS.map((k) => [k.toLowerCase(), k]))
const PORT_PROTOS = new Set(['udp', '17', 'udplite', '136', 'tcp', '6', 'dccp', '33', 'sctp', '132'])
const PROTO_IDS = new Set(Object.values(PROTOCOLS).map(String))
/** ipset and alias names (PVE's $ipset_name_pattern / $ip_alias_pattern, 2-64 characters) */
const NAME = /^[A-Za-z][A-Za-z0-9_-]{1,63}$/
const IPSET_NAME = /^[a-z][a-z0-9_-]{1,63}$/

// ---------------------------------------------------------------- addresses

interface Ip {
  version: 4 | 6
  value: bigint
}

function parseIp(s: string): Ip | undefined {
  const m4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s)
  if (m4) {
    const parts = m4.slice(1).map(Number)
    if (parts.some((p) => p > 255)) return undefined
    return { version: 4, value: parts.reduce((a, p) => (a << 8n) | BigInt(p), 0n) }
  }
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(':')) return undefined
  let text = s
  const last = text.lastIndexOf(':')
  if (text.slice(last + 1).includes('.')) {
    const v4 = parseIp(text.slice(last + 1))
    if (!v4 || v4.version !== 4) return undefined
    text = `${text.slice(0, last + 1)}${(v4.value >> 16n).toString(16)}:${(v4.value & 0xffffn).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const groups = (h: string) => (h === '' ? [] : h.split(':'))
  const head = groups(halves[0] as string)
  const tail = halves.length === 2 ? groups(halves[1] as string) : []
  if ([...head, ...tail].some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined
  const n = head.length + tail.length
  if (halves.length === 1 ? n !== 8 : n > 7) return undefined
  const words = [...head, ...Array<string>(8 - n).fill('0'), ...tail].map((g) => BigInt(parseInt(g, 16)))
  return { version: 6, value: words.reduce((a, w) => (a << 16n) | w, 0n) }
}

/** IPv6 written as PVE's Net::IP ip_compress_address does (lower-case, longest zero run as `::`) */
function formatIp(ip: Ip): string {
  if (ip.version === 4) return [24n, 16n, 8n, 0n].map((s) => String((ip.value >> s) & 0xffn)).join('.')
  const w = Array.from({ length: 8 }, (_, i) => Number((ip.value >> BigInt((7 - i) * 16)) & 0xffffn))
  let best = -1
  let len = 1
  for (let i = 0; i < 8;) {
    let j = i
    while (j < 8 && w[j] === 0) j++
    if (j - i > len) [best, len] = [i, j - i]
    i = j === i ? i + 1 : j
  }
  const hex = w.map((x) => x.toString(16))
  return best < 0 ? hex.join(':') : `${hex.slice(0, best).join(':')}::${hex.slice(best + len).join(':')}`
}

type Cidr = { ok: true; version: 4 | 6; canonical: string; hostBits: boolean } | { ok: false }

/** an IP or CIDR; `canonical` is PVE's stored form (parse_ip_or_cidr drops /32 and /128; IPv6 compressed) */
function parseCidr(s: string): Cidr {
  const [addr, len, extra] = s.split('/')
  const ip = extra === undefined ? parseIp(addr as string) : undefined
  if (!ip) return { ok: false }
  const bits = ip.version === 4 ? 32 : 128
  if (len === undefined) return { ok: true, version: ip.version, canonical: formatIp(ip), hostBits: false }
  if (!/^\d{1,3}$/.test(len) || Number(len) > bits) return { ok: false }
  const n = Number(len)
  const host = (1n << BigInt(bits - n)) - 1n
  const canonical = n === bits ? formatIp(ip) : `${formatIp(ip)}/${n}`
  return { ok: true, version: ip.version, canonical, hostBits: (ip.value & host) !== 0n }
}

const ALIAS_REF = /^(dc\/|guest\/)?([A-Za-z][A-Za-z0-9_-]+)$/
const IPSET_REF = /^\+(guest\/|dc\/|sdn\/)?([A-Za-z][A-Za-z0-9_-]+)$/

/** parse_address_list: the problem, or the list's IP version (undefined for references) */
function addressProblem(s: string): string | { version: 4 | 6 | undefined } {
  if (s.startsWith('+')) return IPSET_REF.test(s) ? { version: undefined } : `invalid ipset reference ${s}`
  if (ALIAS_REF.test(s)) return { version: undefined }
  const items = s.split(',')
  if (items.some((x) => x === '')) return 'extraneous commas in list'
  let version: 4 | 6 | undefined
  for (const item of items) {
    const range = /^([^-]+)-([^-]+)$/.exec(item)
    let ver: 4 | 6
    if (range) {
      const a = parseIp(range[1] as string)
      const b = parseIp(range[2] as string)
      if (!a || !b || a.version !== b.version) return `invalid IP range ${item}`
      if (a.value > b.value) return `range ${item} begins after it ends`
      if (items.length > 1) return "a range can't be part of a list"
      ver = a.version
    } else {
      const c = parseCidr(item)
      if (!c.ok) return `invalid IP address or network ${item}`
      if (c.hostBits) return `${item} has host bits set: write the network address (PVE refuses it)`
      ver = c.version
    }
    if (version && ver !== version) return `mixes IPv4 and IPv6 addresses`
    version = ver
  }
  return { version }
}

/** parse_port_name_number_or_range */
function portsProblem(s: string, icmpAllowed: boolean): string | undefined {
  const items = s.split(',')
  if (items.some((x) => x === '')) return 'extraneous commas in list'
  let count = 0
  let icmp = false
  for (const item of items) {
    const r = /^(\d+):(\d+)$/.exec(item)
    if (r) {
      count += 2
      if (Number(r[1]) > 65535 || Number(r[2]) > 65535) return `invalid port in ${item} (0-65535)`
      if (Number(r[1]) > Number(r[2])) return `backwards range ${item}: write ${r[2]}:${r[1]}`
    } else if (/^\d+$/.test(item)) {
      count += 1
      if (Number(item) > 65535) return `invalid port ${item} (0-65535)`
    } else if (icmpAllowed && (ICMP_TYPES.has(item) || ICMPV6_TYPES.has(item))) {
      icmp = true
    } else if (!SERVICES.has(item)) {
      return `unknown service name ${JSON.stringify(item)} (not in /etc/services): use a port number`
    }
  }
  if (icmp && count > 0) return 'ICMP types cannot be mixed with ports'
  if (count > 15) return 'too many entries in the port list (more than 15 ports, a range counts 2)'
  return undefined
}

// ---------------------------------------------------------------- schemas

const portSpec = (description: string) =>
  v.pipe(
    v.union([v.string(), v.number()], m('field-type', 'must be a port, a range a:b or a comma-separated list')),
    v.description(description),
    jsonMeta<string | number>({ examples: ['22', '80,443', '8000:8080', 'ssh'] }),
    v.transform((x) => String(x).trim()),
  )

const comment = (description: string) =>
  v.pipe(
    v.string(m('field-type', 'must be a string')),
    v.description(description),
    v.check((s) => !/[\r\n]/.test(s), m('field-invalid', 'must be a single line')),
    // the config parser trims comments; an empty one is not stored
    v.transform((s) => s.trim()),
  )

const cidrField = (description: string, allowHostBits: boolean, allowAlias: boolean) =>
  v.pipe(
    v.string(m('field-type', 'must be a string')),
    v.description(description),
    checked<string>('firewall-invalid', (s) => {
      if (allowAlias && ALIAS_REF.test(s)) return undefined
      const c = parseCidr(s)
      if (!c.ok) return `${JSON.stringify(s)} is not an IP address or CIDR network`
      if (c.hostBits && !allowHostBits) return `${s} has host bits set: write the network address`
      if (/\/0+$/.test(s) && !allowHostBits) return 'a zero prefix is not allowed in ipset entries'
      return undefined
    }),
    v.transform((s) => {
      const c = parseCidr(s)
      return c.ok ? c.canonical : s
    }),
  )

export const firewallRuleSchema = v.pipe(
  v.strictObject(
    {
      direction: oneOf(['in', 'out'], 'Traffic direction (PVE rule `type`).'),
      action: oneOf(POLICIES, 'What a matching packet gets.'),
      macro: v.optional(
        v.pipe(
          v.string(m('field-type', 'must be a string')),
          v.description('A standard PVE macro (e.g. `SSH`, `HTTPS`, `DNS`), any case; it fixes proto and ports.'),
          jsonMeta<string>({ examples: ['SSH', 'HTTP', 'HTTPS', 'DNS', 'Ping'] }),
          checked<string>('firewall-invalid', (s) =>
            MACRO_BY_LC.has(s.toLowerCase()) ? undefined : `unknown macro ${JSON.stringify(s)}`,
          ),
          v.transform((s) => MACRO_BY_LC.get(s.toLowerCase()) ?? s),
        ),
      ),
      proto: v.optional(
        v.pipe(
          v.union([v.string(), v.number()], m('field-type', 'must be a protocol name or number')),
          v.description('IP protocol: a name from /etc/protocols (`tcp`, `udp`, `icmp`, `icmpv6`, ...) or its number.'),
          v.transform((x) => String(x)),
          checked<string>('firewall-invalid', (s) =>
            Object.hasOwn(PROTOCOLS, s) || s === 'icmpv6' || PROTO_IDS.has(s) ? undefined : `unknown protocol ${s}`,
          ),
        ),
      ),
      dport: v.optional(portSpec('Destination ports: `22`, `80,443`, `8000:8080` or service names; needs proto.')),
      sport: v.optional(portSpec('Source ports, as dport; needs proto.')),
      source: v.optional(
        str(
          'Source: IPs, networks or one range (comma-separated), `+ipset`, or an alias name (`dc/` for cluster ones).',
        ),
      ),
      dest: v.optional(str('Destination, as source.')),
      iface: v.optional(
        v.pipe(
          v.string(m('field-type', 'must be a string')),
          v.description('NIC slot the rule applies to (`net0`, ...).'),
          v.regex(/^net\d+$/, m('firewall-invalid', 'iface must be a NIC slot like net0')),
        ),
      ),
      'icmp-type': v.optional(str('ICMP type name (proto icmp or icmpv6 only).')),
      log: v.optional(oneOf(LOG_LEVELS, 'Log level for packets this rule matches.')),
      enable: v.optional(bool('Rule enabled (PVE `enable`).'), true),
      comment: v.optional(comment('Rule comment.')),
    },
    (issue) => (issue.expected === 'never' ? 'unknown key' : m('field-type', 'must be a mapping')),
  ),
  v.description('One firewall rule; rules are matched in list order.'),
)

const ipsetEntrySchema = v.pipe(
  v.strictObject(
    {
      cidr: cidrField('An IP or network (network address), or the name of an alias of this guest.', false, true),
      nomatch: v.optional(bool('Exclude this address from the set (`!` entry).'), false),
      comment: v.optional(comment('Entry comment.')),
    },
    (issue) => (issue.expected === 'never' ? 'unknown key' : m('field-type', 'must be a mapping')),
  ),
  v.description('One IP set entry.'),
)

export const firewallIpsetSchema = v.pipe(
  v.strictObject(
    {
      name: v.pipe(
        v.string(m('field-type', 'must be a string')),
        v.description(
          'IP set name: lower-case letters, digits, `-` and `_` (PVE lower-cases names when it reads them).',
        ),
        v.regex(
          IPSET_NAME,
          m('firewall-invalid', 'must be 2-64 lower-case letters, digits, "-" or "_", starting with a letter'),
        ),
      ),
      comment: v.optional(comment('IP set comment.')),
      entries: v.optional(list(ipsetEntrySchema, 'The addresses; compared as a set (PVE sorts them).'), []),
    },
    (issue) => (issue.expected === 'never' ? 'unknown key' : m('field-type', 'must be a mapping')),
  ),
  v.description('A per-guest IP set, referenced from rules as `+name`.'),
)

export const firewallAliasSchema = v.pipe(
  v.strictObject(
    {
      name: v.pipe(
        v.string(m('field-type', 'must be a string')),
        v.description('Alias name (letters, digits, `-`, `_`); unique regardless of case.'),
        v.regex(NAME, m('firewall-invalid', 'must be 2-64 letters, digits, "-" or "_", starting with a letter')),
      ),
      cidr: cidrField('The IP or network the name stands for.', true, false),
      comment: v.optional(comment('Alias comment.')),
    },
    (issue) => (issue.expected === 'never' ? 'unknown key' : m('field-type', 'must be a mapping')),
  ),
  v.description('A per-guest alias usable in rules and IP sets.'),
)

export const firewallSchema = v.pipe(
  v.strictObject(
    {
      enable: v.optional(bool('Guest firewall on (`enable`); NICs filter only with `firewall: true`.'), true),
      'policy-in': v.optional(oneOf(POLICIES, 'Policy for incoming traffic no rule matched; absent = not owned.')),
      'policy-out': v.optional(oneOf(POLICIES, 'Policy for outgoing traffic; absent = not owned.')),
      'log-level-in': v.optional(oneOf(LOG_LEVELS, 'Log level for incoming traffic; absent = not owned.')),
      'log-level-out': v.optional(oneOf(LOG_LEVELS, 'Log level for outgoing traffic; absent = not owned.')),
      ipfilter: v.optional(bool('Default IP filters (`ipfilter`); absent = not owned.')),
      macfilter: v.optional(bool('MAC address filter (`macfilter`, PVE default on); absent = not owned.')),
      dhcp: v.optional(bool('Allow DHCP (`dhcp`); absent = not owned.')),
      ndp: v.optional(bool('Allow NDP (`ndp`, PVE default on); absent = not owned.')),
      radv: v.optional(bool('Allow sending router advertisements (`radv`); absent = not owned.')),
      rules: v.optional(
        list(firewallRuleSchema, 'Rules in order; owned whole (live rules not listed are removed).'),
        [],
      ),
      ipsets: v.optional(list(firewallIpsetSchema, 'Per-guest IP sets; owned whole.'), []),
      aliases: v.optional(list(firewallAliasSchema, 'Per-guest aliases; owned whole.'), []),
    },
    (issue) => (issue.expected === 'never' ? 'unknown key' : m('field-type', 'must be a mapping')),
  ),
  v.description(
    'The guest firewall (`/nodes/{node}/{qemu|lxc}/{vmid}/firewall`). Absent = not owned. Present = rules, IP sets and aliases are owned whole; options only where set.',
  ),
)

export type FirewallSpec = v.InferOutput<typeof firewallSchema>
export type FirewallRule = FirewallSpec['rules'][number]
export type FirewallIpset = FirewallSpec['ipsets'][number]
export type FirewallAlias = FirewallSpec['aliases'][number]

// ---------------------------------------------------------------- cross-field checks (verify_rule)

type Code = 'firewall-invalid' | 'firewall-ref' | 'firewall-nic' | 'value-duplicate'
type Add = (code: Code, path: PathKey[], message: string) => void
const isIcmp = (p: string | undefined) => p === 'icmp' || p === 'icmpv6' || p === 'ipv6-icmp'

/**
 * The rules' cross-field checks, references to the guest's IP sets and aliases, uniqueness, and the NICs:
 * `nics` are the declared NICs (slot and firewall flag); an empty list is not checked (the NICs are not owned).
 */
export function checkFirewall(fw: FirewallSpec, nics: readonly { slot: string; firewall: boolean }[], add: Add): void {
  const base: PathKey[] = ['spec', 'firewall']
  const aliases = new Map<string, FirewallAlias>()
  fw.aliases.forEach((a, i) => {
    const key = a.name.toLowerCase()
    if (aliases.has(key))
      add('value-duplicate', [...base, 'aliases', i, 'name'], `alias ${a.name} is declared twice (names ignore case)`)
    aliases.set(key, a)
  })
  const ipsets = new Set<string>()
  fw.ipsets.forEach((set, i) => {
    if (ipsets.has(set.name))
      add('value-duplicate', [...base, 'ipsets', i, 'name'], `IP set ${set.name} is declared twice`)
    ipsets.add(set.name)
    const seen = new Set<string>()
    set.entries.forEach((e, j) => {
      const p = [...base, 'ipsets', i, 'entries', j, 'cidr']
      if (seen.has(e.cidr)) add('value-duplicate', p, `${e.cidr} is listed twice in IP set ${set.name}`)
      seen.add(e.cidr)
      const ref = ALIAS_REF.exec(e.cidr)
      if (ref && ref[1] !== 'dc/' && !aliases.has((ref[2] as string).toLowerCase())) {
        add(
          'firewall-ref',
          p,
          `no alias ${ref[2]} is declared in spec.firewall.aliases (write dc/${ref[2]} for a cluster alias)`,
        )
      }
    })
  })
  const slots = new Set(nics.map((n) => n.slot))
  fw.rules.forEach((r, i) => {
    const p: PathKey[] = [...base, 'rules', i]
    const proto = r.proto
    if (r.macro) {
      for (const line of FW_MACROS[r.macro] ?? []) {
        for (const [k, fixed] of line) {
          const mine = (r as Record<string, unknown>)[k]
          if (mine !== undefined && String(mine) !== fixed) {
            add('firewall-invalid', [...p, k], `macro ${r.macro} already sets ${k} to ${fixed}: remove ${k}`)
          }
        }
      }
    }
    let version: 4 | 6 | undefined
    const setVersion = (ver: 4 | 6 | undefined, field: string) => {
      if (!ver) return
      if (version && ver !== version) add('firewall-invalid', [...p, field], 'the rule mixes IPv4 and IPv6 addresses')
      version = ver
    }
    if (proto === 'icmp') version = 4
    if (proto === 'icmpv6' || proto === 'ipv6-icmp') version = 6
    for (const field of ['dport', 'sport'] as const) {
      const value = r[field]
      if (value === undefined) continue
      const problem = portsProblem(value, field === 'dport' && isIcmp(proto))
      if (problem) add('firewall-invalid', [...p, field], `${field} ${JSON.stringify(value)}: ${problem}`)
      if (!proto) add('firewall-invalid', [...p, field], `${field} needs proto (e.g. proto: tcp), even with a macro`)
      else if (proto && !PORT_PROTOS.has(proto) && !(field === 'dport' && isIcmp(proto))) {
        add('firewall-invalid', [...p, field], `protocol ${proto} has no ports`)
      }
    }
    if (r['icmp-type'] !== undefined) {
      const t = r['icmp-type']
      if (!isIcmp(proto)) add('firewall-invalid', [...p, 'icmp-type'], 'icmp-type needs proto icmp or icmpv6')
      else if (r.dport !== undefined)
        add('firewall-invalid', [...p, 'icmp-type'], 'icmp-type cannot be combined with dport')
      else if (!(proto === 'icmp' ? ICMP_TYPES : ICMPV6_TYPES).has(t)) {
        add('firewall-invalid', [...p, 'icmp-type'], `unknown icmp-type ${JSON.stringify(t)} for proto ${proto}`)
      }
    }
    for (const field of ['source', 'dest'] as const) {
      const value = r[field]
      if (value === undefined) continue
      const parsed = addressProblem(value)
      if (typeof parsed === 'string') {
        add('firewall-invalid', [...p, field], `${field} ${JSON.stringify(value)}: ${parsed}`)
        continue
      }
      setVersion(parsed.version, field)
      const set = IPSET_REF.exec(value)
      if (set) {
        if (set[1] !== 'dc/' && set[1] !== 'sdn/' && !ipsets.has(set[2] as string)) {
          add(
            'firewall-ref',
            [...p, field],
            `no IP set ${set[2]} is declared in spec.firewall.ipsets (write +dc/${set[2]} for a cluster IP set)`,
          )
        }
        continue
      }
      const alias = ALIAS_REF.exec(value)
      if (alias && alias[1] !== 'dc/') {
        const a = aliases.get((alias[2] as string).toLowerCase())
        if (!a)
          add(
            'firewall-ref',
            [...p, field],
            `no alias ${alias[2]} is declared in spec.firewall.aliases (write dc/${alias[2]} for a cluster alias)`,
          )
        else {
          const c = parseCidr(a.cidr)
          if (c.ok) setVersion(c.version, field)
        }
      }
    }
    if (r.iface !== undefined && slots.size > 0 && !slots.has(r.iface)) {
      add('firewall-ref', [...p, 'iface'], `iface ${r.iface} is not a NIC in spec.networks`)
    }
  })
  if (fw.enable && nics.length > 0 && !nics.some((n) => n.firewall)) {
    add(
      'firewall-nic',
      [...base, 'enable'],
      'the guest firewall is enabled but no NIC in spec.networks has firewall: true, so no traffic is filtered: set firewall: true on the NICs to filter (or enable: false)',
    )
  }
}
