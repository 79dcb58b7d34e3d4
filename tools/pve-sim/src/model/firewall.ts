/**
 * Firewall configuration files, kept as the file text PVE keeps and parsed on every request as pve-firewall does:
 * the guests' `/etc/pve/firewall/<vmid>.fw` (load_vmfw_conf / save_vmfw_conf) and the cluster's `cluster.fw`
 * (load_clusterfw_conf / save_clusterfw_conf), both read by one generic_fw_config_parser (sections [OPTIONS],
 * [ALIASES], [IPSET name], [RULES], and in cluster.fw [group name]; names lower-cased, `/32` dropped, bad lines
 * skipped) and written by one writer (aliases, ipsets and groups sorted, ipset entries sorted by cidr, an empty
 * configuration removes the file). parse_fw_rule / $format_rules, verify_rule (rule_env `vm`, `ct`, `cluster`,
 * `group`) and resolve_alias look names up in the guest's file and in cluster.fw; copy_list_with_digest /
 * copy_opject_with_digest make the SHA-1 digests the API hands out and checks with assert_if_modified.
 */
import { createHash } from 'node:crypto'
import { FW_MACROS, ICMP_TYPES, ICMPV6_TYPES, PROTOCOLS } from './firewall-data.js'
import { FwError, parseAddressList, parseIpOrCidr, parsePorts } from './fw-addr.js'

export type FwValue = string | number
export type FwRule = Record<string, FwValue | Record<string, string>>

export interface FwAlias {
  name: string
  cidr: string
  ipversion: 4 | 6
  comment?: string
}

export interface FwIpsetEntry {
  cidr: string
  nomatch?: 1
  comment?: string
  errors?: Record<string, string>
}

export interface FwConf {
  options: Record<string, FwValue>
  /** key: lower-cased name */
  aliases: Map<string, FwAlias>
  ipsets: Map<string, FwIpsetEntry[]>
  ipsetComments: Map<string, string>
  rules: FwRule[]
  /** cluster.fw's security groups (empty in a guest's file) */
  groups: Map<string, FwRule[]>
  groupComments: Map<string, string>
}

/** the rule_env verify_rule checks a rule for (`host` and `vnet` files are not modelled) */
export type RuleEnv = 'vm' | 'ct' | 'cluster' | 'group'
/** the kind of file generic_fw_config_parser reads */
export type FileEnv = 'vm' | 'ct' | 'cluster'

/**
 * The two configurations verify_rule and resolve_alias look names up in: `$cluster_conf` and the file's own
 * `$fw_conf`. Which is which depends on the caller (a guest file's scope is cluster.fw and the guest's file; the
 * cluster's API handlers pass cluster.fw as the file and no cluster configuration).
 */
export interface FwScope {
  cluster?: FwConf
  local?: FwConf
}

export const RULE_KEYS = [
  'type',
  'action',
  'macro',
  'iface',
  'source',
  'dest',
  'proto',
  'enable',
  'log',
  'sport',
  'dport',
  'comment',
  'icmp-type',
] as const

const MACRO_BY_LC = new Map(Object.keys(FW_MACROS).map((k) => [k.toLowerCase(), k]))
const PORT_PROTOS = new Set(['udp', '17', 'udplite', '136', 'tcp', '6', 'dccp', '33', 'sctp', '132'])
const PROTO_IDS = new Set(Object.values(PROTOCOLS).map(String))
const GROUP_RE = /^[A-Za-z][A-Za-z0-9\-_]+$/
const IPSET_RE = /^[A-Za-z][A-Za-z0-9\-_]+$/
/** $max_group_name_length */
const MAX_GROUP_NAME = 18
/** PVE::JSONSchema pve_verify_iface */
const IFACE_RE = /^[a-z][a-z0-9_]{1,20}([:.]\d+)?$/i
/** $rule_env_direction_lookup and $rule_env_iface_lookup */
const DIRECTIONS: Record<RuleEnv, readonly string[]> = {
  vm: ['in', 'out', 'group'],
  ct: ['in', 'out', 'group'],
  group: ['in', 'out', 'forward'],
  cluster: ['in', 'out', 'forward', 'group'],
}
const ALLOWS_IFACE: Record<RuleEnv, boolean> = { vm: true, ct: true, group: false, cluster: true }
const LOG_LEVELS = 'emerg|alert|crit|err|warning|notice|info|debug|nolog'
const isIcmp = (p: string) => p === 'icmp' || p === 'icmpv6' || p === 'ipv6-icmp'

export function emptyConf(): FwConf {
  return {
    options: {},
    aliases: new Map(),
    ipsets: new Map(),
    ipsetComments: new Map(),
    rules: [],
    groups: new Map(),
    groupComments: new Map(),
  }
}

/**
 * The alias resolve_alias finds (and verify_rule takes a rule's IP version from): the file's own unless the name
 * says `dc/`, then the cluster's unless it says `guest/`.
 */
export function findAlias(scope: FwScope, name: string, prefix: string): FwAlias | undefined {
  const key = name.toLowerCase()
  let found = prefix !== 'dc/' ? scope.local?.aliases.get(key) : undefined
  if (prefix !== 'guest/' && !found) found = scope.cluster?.aliases.get(key)
  return found
}

/** resolve_alias: dies `no such alias` */
export function resolveAlias(scope: FwScope, name: string, prefix: string): FwAlias {
  const alias = findAlias(scope, name, prefix)
  if (!alias) throw new FwError(`no such alias '${name}'`)
  return alias
}

/** pve_fw_verify_protocol_spec */
export function verifyProtocol(proto: string): void {
  if (proto && !(Object.hasOwn(PROTOCOLS, proto) || proto === 'icmpv6' || PROTO_IDS.has(proto))) {
    throw new FwError(`unknown protocol '${proto}'`)
  }
}

/** pve_fw_verify_icmp_type_spec */
export function verifyIcmpType(t: string): void {
  if (ICMP_TYPES.has(t) || ICMPV6_TYPES.has(t) || t === '') return
  throw new FwError(`invalid icmp-type value '${t}'`)
}

/**
 * verify_rule: with `noerr` every error is collected into `errors` (the config parser's mode), without it the
 * first one is thrown as `{ param: message }` (raise_param_exc).
 */
export function verifyRule(rule: FwRule, scope: FwScope, env: RuleEnv, noerr: boolean): Record<string, string> {
  const errors: Record<string, string> = {}
  let count = 0
  const add = (param: string, msg: string) => {
    if (!noerr) throw new ParamError({ [param]: msg })
    count++
    errors[param] ??= msg
  }
  const s = (k: string): string | undefined => {
    const v = rule[k]
    return v === undefined || typeof v === 'object' ? undefined : String(v)
  }
  let ipversion: 4 | 6 | undefined
  const setVersion = (v: 4 | 6 | undefined) => {
    if (!v) return
    if (ipversion && v !== ipversion) throw new FwError('detected mixed ipv4/ipv6 addresses in rule')
    ipversion = v
  }
  const checkRef = (name: 'source' | 'dest') => {
    const value = s(name)
    if (!value) return
    if (value.startsWith('+')) {
      const m = /^\+(guest\/|dc\/|sdn\/)?([A-Za-z][A-Za-z0-9\-_]+)$/.exec(value)
      if (!m) return add(name, `invalid ipset name '${value}'`)
      // whatever the prefix says, both files are asked, by the name as written (SDN ipsets are not modelled)
      const set = m[2] as string
      if (!scope.cluster?.ipsets.has(set) && !scope.local?.ipsets.has(set)) add(name, `no such ipset '${set}'`)
    } else {
      const m = /^(guest\/|dc\/)?([A-Za-z][A-Za-z0-9\-_]+)$/.exec(value)
      if (!m) return
      const key = (m[2] as string).toLowerCase()
      if (!scope.cluster?.aliases.has(key) && !scope.local?.aliases.has(key)) add(name, `no such alias '${value}'`)
      setVersion(findAlias(scope, key, m[1] ?? '')?.ipversion)
    }
  }

  const type = s('type')
  const action = s('action')
  if (!type) add('type', 'missing property')
  if (!action) add('action', 'missing property')
  if (type) {
    if (!DIRECTIONS[env].includes(type)) add('type', `invalid rule type '${type}' for rule_env '${env}'`)
    if (type === 'in' || type === 'out' || type === 'forward') {
      if (type === 'forward' && action === 'REJECT') add('action', 'cannot define REJECT rules on forward chain')
      if (action && !/^(ACCEPT|DROP|REJECT)$/.test(action)) add('action', `unknown action '${action}'`)
    } else if (type === 'group') {
      // a group rule names a security group by pattern only: whether it exists is not checked
      if (env === 'group') add('type', 'security groups not allowed')
      if (action && !GROUP_RE.test(action)) add('action', 'invalid characters in security group name')
    } else {
      add('type', `unknown rule type '${type}'`)
    }
  }
  const iface = s('iface')
  if (iface) {
    if (!ALLOWS_IFACE[env]) add('type', 'parameter -i not allowed for this rule type')
    if (!IFACE_RE.test(iface)) add('iface', `invalid network interface name '${iface}'`)
    if ((env === 'vm' || env === 'ct') && !/^net(\d+)$/.test(iface)) {
      add('iface', "value does not match the regex pattern 'net\\d+'")
    }
  }
  const macro = s('macro')
  if (macro) {
    const preferred = MACRO_BY_LC.get(macro.toLowerCase())
    if (preferred) rule.macro = preferred
    else add('macro', `unknown macro '${macro}'`)
  }
  const proto = s('proto')
  let icmp = false
  if (proto) {
    try {
      verifyProtocol(proto)
    } catch (e) {
      add('proto', (e as Error).message)
    }
    if (proto === 'icmp') setVersion(4)
    if (proto === 'icmpv6' || proto === 'ipv6-icmp') setVersion(6)
    icmp = isIcmp(proto)
  }
  const dport = s('dport')
  if (dport) {
    try {
      parsePorts(dport, icmp)
    } catch (e) {
      add('dport', (e as Error).message)
    }
    if (!proto) add('proto', "missing property - 'dport' requires this property")
    if (!PORT_PROTOS.has(proto ?? '') && !icmp) add('dport', `protocol '${proto ?? ''}' does not support ports`)
  }
  const icmpType = s('icmp-type')
  if (icmpType) {
    if (!icmp) add('proto', "missing property - 'icmp-type' requires this property")
    if (dport) add('icmp-type', "'icmp-type' cannot be specified together with 'dport'")
    if (proto === 'icmp' && !ICMP_TYPES.has(icmpType)) {
      add('icmp-type', `invalid icmp-type '${icmpType}' for proto 'icmp'`)
    } else if ((proto === 'icmpv6' || proto === 'ipv6-icmp') && !ICMPV6_TYPES.has(icmpType)) {
      add('icmp-type', `invalid icmp-type '${icmpType}' for proto '${proto}'`)
    }
  }
  const sport = s('sport')
  if (sport) {
    try {
      parsePorts(sport, false)
    } catch (e) {
      add('sport', (e as Error).message)
    }
    if (!proto) add('proto', "missing property - 'sport' requires this property")
    if (!PORT_PROTOS.has(proto ?? '')) add('sport', `protocol '${proto ?? ''}' does not support ports`)
  }
  for (const name of ['source', 'dest'] as const) {
    const value = s(name)
    if (!value) continue
    try {
      setVersion(parseAddressList(value))
    } catch (e) {
      add(name, (e as Error).message)
    }
    checkRef(name)
  }
  if (ipversion) rule.ipversion = ipversion
  if (macro && count === 0) applyMacro(rule, add)
  if (count > 0) rule.errors = errors
  return errors
}

/** $apply_macro's verification: a key the rule sets must not contradict a fixed key of any macro line */
function applyMacro(rule: FwRule, add: (param: string, msg: string) => void): void {
  const lines = FW_MACROS[String(rule.macro)] ?? []
  for (const line of lines) {
    for (const [k, v] of line) {
      const mine = rule[k]
      if (mine !== undefined && typeof mine !== 'object' && String(mine) !== v) {
        add(k, `parameter '${k}' already define in macro (value = '${v}')`)
      }
    }
  }
}

export class ParamError extends Error {
  constructor(readonly errors: Record<string, string>) {
    super('Parameter verification failed.')
  }
}

/** parse_fw_rule */
function parseRuleLine(line: string, scope: FwScope, env: RuleEnv): FwRule {
  const rule: FwRule = {}
  let rest = line
  const c = /#\s*(.*?)\s*$/.exec(rest)
  if (c) {
    rule.comment = c[1] as string
    rest = rest.slice(0, c.index)
  }
  rule.enable = rest.startsWith('|') ? 0 : 1
  if (rest.startsWith('|')) rest = rest.slice(1)
  const head = /^(\S+)\s+(\S+)\s*/.exec(rest)
  if (!head) throw new FwError(`unable to parse rule: ${rest}`)
  rest = rest.slice(head[0].length)
  rule.type = (head[1] as string).toLowerCase()
  rule.action = head[2] as string
  if (rule.type === 'in' || rule.type === 'out' || rule.type === 'forward') {
    const m = /^(\S+)\((ACCEPT|DROP|REJECT)\)$/.exec(rule.action)
    if (m) {
      rule.macro = m[1] as string
      rule.action = m[2] as string
    }
  }
  const opts: [RegExp, string][] = [
    [/^(?:-p|--?proto) (\S+)\s*/, 'proto'],
    [/^--?dport (\S+)\s*/, 'dport'],
    [/^--?sport (\S+)\s*/, 'sport'],
    [/^--?source (\S+)\s*/, 'source'],
    [/^--?dest (\S+)\s*/, 'dest'],
    [new RegExp(`^--?log (${LOG_LEVELS})\\s*`), 'log'],
    [/^--?icmp-type (\S+)\s*/, 'icmp-type'],
  ]
  outer: while (rest.length) {
    const i = /^-i (\S+)\s*/.exec(rest)
    if (i) {
      rule.iface = i[1] as string
      rest = rest.slice(i[0].length)
      continue
    }
    if (rule.type === 'group') break
    for (const [re, key] of opts) {
      const m = re.exec(rest)
      if (m) {
        rule[key] = m[1] as string
        rest = rest.slice(m[0].length)
        continue outer
      }
    }
    break
  }
  if (rest.length) throw new FwError(`unable to parse rule parameters: ${rest}`)
  verifyRule(rule, scope, env, true)
  return rule
}

/** parse_vmfw_option; undefined for a line it cannot parse (warned and skipped) */
function parseGuestOption(line: string): [string, FwValue] | undefined {
  let m = /^(enable|dhcp|ndp|radv|macfilter|ipfilter|ips):\s*(0|1)\s*$/i.exec(line)
  if (m) return [(m[1] as string).toLowerCase(), Number(m[2])]
  m = new RegExp(`^(log_level_in|log_level_out):\\s*((${LOG_LEVELS})\\s*)?$`, 'i').exec(line)
  if (m) return [(m[1] as string).toLowerCase(), m[2] ? (m[3] as string).toLowerCase() : '']
  m = /^(policy_(in|out)):\s*(ACCEPT|DROP|REJECT)\s*$/i.exec(line)
  if (m) return [(m[1] as string).toLowerCase(), (m[3] as string).toUpperCase()]
  m = /^(ips_queues):\s*((\d+)(:(\d+))?)\s*$/i.exec(line)
  if (m) return [(m[1] as string).toLowerCase(), m[2] as string]
  return undefined
}

/**
 * parse_clusterfw_option. `enable` above 1 is the time the anti-lockout first call stored (set_options): it reads
 * as 0 once more than 60 seconds have passed without the confirming second call.
 */
function parseClusterOption(line: string, nowSec: number): [string, FwValue] | undefined {
  let m = /^(enable):\s*(\d+)\s*$/i.exec(line)
  if (m) {
    const value = Number(m[2])
    return ['enable', value > 1 && nowSec - value > 60 ? 0 : value]
  }
  m = /^(ebtables):\s*(0|1)\s*$/i.exec(line)
  if (m) return ['ebtables', Number(m[2])]
  m = /^(policy_(in|out|forward)):\s*(ACCEPT|DROP|REJECT)\s*$/i.exec(line)
  if (m) return [(m[1] as string).toLowerCase(), (m[3] as string).toUpperCase()]
  m = /^(log_ratelimit):\s*(\S+)\s*$/.exec(line)
  if (m) return ['log_ratelimit', m[2] as string]
  return undefined
}

/** a section header names an ipset or group the parser accepts: else the section is skipped with a warning */
function sectionName(raw: string, max: number, pattern: RegExp): string | undefined {
  const name = raw.toLowerCase()
  return name.length > max || !pattern.test(name) ? undefined : name
}

/**
 * generic_fw_config_parser: a guest file (load_vmfw_conf, its names looked up in `cluster` too) or cluster.fw
 * (load_clusterfw_conf: the file is its own cluster configuration, and has [group] sections and cluster options).
 */
export function parseConf(text: string | undefined, env: FileEnv, cluster?: FwConf, nowSec = 0): FwConf {
  const conf = emptyConf()
  if (!text) return conf
  const isCluster = env === 'cluster'
  // parse_fw_rule and resolve_alias get ($cluster_conf, $res): cluster.fw is passed as both for itself
  const scope: FwScope = isCluster ? { cluster: conf, local: conf } : { cluster, local: conf }
  let section: 'options' | 'aliases' | 'rules' | 'ipset' | 'group' | undefined
  let name = ''
  let keys = new Set<string>()
  for (const raw of text.split('\n')) {
    const line = raw.replace(/^[ \t]+|[ \t]+$/g, '')
    if (line.startsWith('#') || /^\s*$/.test(line)) continue
    if (/^\[options\]$/i.test(line)) {
      section = 'options'
      continue
    }
    if (/^\[aliases\]$/i.test(line)) {
      section = 'aliases'
      continue
    }
    const group = isCluster ? /^\[group\s+(\S+)\]\s*(?:#\s*(.*?)\s*)?$/i.exec(line) : null
    if (group) {
      const accepted = sectionName(group[1] as string, MAX_GROUP_NAME, GROUP_RE)
      section = accepted ? 'group' : undefined
      if (!accepted) continue
      name = accepted
      conf.groups.set(name, [])
      if (group[2]) conf.groupComments.set(name, group[2])
      continue
    }
    if (/^\[rules\]$/i.test(line)) {
      section = 'rules'
      continue
    }
    const set = /^\[ipset\s+(\S+)\]\s*(?:#\s*(.*?)\s*)?$/i.exec(line)
    if (set) {
      const accepted = sectionName(set[1] as string, 64, IPSET_RE)
      section = accepted ? 'ipset' : undefined
      if (!accepted) continue
      name = accepted
      keys = new Set()
      conf.ipsets.set(name, [])
      if (set[2]) conf.ipsetComments.set(name, set[2])
      continue
    }
    if (section === 'options') {
      const o = isCluster ? parseClusterOption(line, nowSec) : parseGuestOption(line)
      if (o) conf.options[o[0]] = o[1]
    } else if (section === 'aliases') {
      const commentMatch = /\s*#\s*(.*?)\s*$/.exec(line)
      const body = commentMatch ? line.slice(0, commentMatch.index) : line
      const m = /^(\S+)\s(\S+)$/.exec(body)
      if (!m) continue
      try {
        const { cidr, version } = parseIpOrCidr(m[2] as string)
        const alias: FwAlias = { name: m[1] as string, cidr, ipversion: version }
        if (commentMatch?.[1]) alias.comment = commentMatch[1]
        conf.aliases.set((m[1] as string).toLowerCase(), alias)
      } catch {
        // warned and skipped, as the parser does
      }
    } else if (section === 'rules' || section === 'group') {
      try {
        // a group's rules are verified as rule_env `group` against cluster.fw alone
        const rule =
          section === 'rules'
            ? parseRuleLine(line, scope, isCluster ? 'cluster' : env)
            : parseRuleLine(line, { cluster: conf }, 'group')
        if (section === 'rules') conf.rules.push(rule)
        else conf.groups.get(name)?.push(rule)
      } catch {
        // `unable to parse rule`: warned and skipped
      }
    } else if (section === 'ipset') {
      conf.ipsets.get(name)?.push(parseIpsetEntry(line, scope, keys))
    }
  }
  return conf
}

/** an ipset line: `[!]cidr-or-alias [# comment]`, with `errors` where the parser flags it (the line is kept) */
function parseIpsetEntry(line: string, scope: FwScope, keys: Set<string>): FwIpsetEntry {
  const commentMatch = /#\s*(.*?)\s*$/.exec(line)
  const body = commentMatch ? line.slice(0, commentMatch.index) : line
  const m = /^(!)?\s*(\S+)\s*$/.exec(body)
  let cidr = m?.[2] ?? ''
  const errors: Record<string, string> = {}
  try {
    const a = /^(dc\/|guest\/)?([A-Za-z][A-Za-z0-9\-_]+)$/.exec(cidr)
    if (a) resolveAlias(scope, a[2] as string, a[1] ?? '')
    else cidr = parseIpOrCidr(cidr).cidr
    if (keys.has(cidr)) throw new FwError(`duplicate ipset entry for '${cidr}'`)
  } catch (e) {
    errors.cidr = (e as Error).message
  }
  if (/\/0+$/.test(cidr)) errors.cidr = 'a zero prefix is not allowed in ipset entries'
  const entry: FwIpsetEntry = { cidr }
  if (m?.[1]) entry.nomatch = 1
  if (commentMatch?.[1]) entry.comment = commentMatch[1]
  if (Object.keys(errors).length) entry.errors = errors
  keys.add(cidr)
  return entry
}

const hasText = (s: unknown): s is string => typeof s === 'string' && !/^\s*$/.test(s)
const sortStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * save_vmfw_conf and save_clusterfw_conf (the same sections in the same order, cluster.fw's groups last); ''
 * means the file is removed. Options are written sorted (PVE writes them in Perl hash order).
 */
export function formatConf(conf: FwConf): string {
  let raw = ''
  const opts = Object.keys(conf.options).sort(sortStr)
  if (opts.length) raw += `[OPTIONS]\n\n${opts.map((k) => `${k}: ${conf.options[k]}\n`).join('')}\n`
  if (conf.aliases.size) {
    raw += '[ALIASES]\n\n'
    for (const k of [...conf.aliases.keys()].sort(sortStr)) {
      const a = conf.aliases.get(k) as FwAlias
      raw += `${a.name} ${a.cidr}${hasText(a.comment) ? ` # ${a.comment}` : ''}\n`
    }
    raw += '\n'
  }
  for (const name of [...conf.ipsets.keys()].sort(sortStr)) {
    const comment = conf.ipsetComments.get(name)
    raw += comment ? `[IPSET ${name}] # ${comment}\n\n` : `[IPSET ${name}]\n\n`
    const byCidr = new Map<string, FwIpsetEntry>()
    for (const e of conf.ipsets.get(name) ?? []) if (!byCidr.has(e.cidr)) byCidr.set(e.cidr, e)
    for (const cidr of [...byCidr.keys()].sort(sortStr)) {
      const e = byCidr.get(cidr) as FwIpsetEntry
      raw += `${e.nomatch ? '!' : ''}${e.cidr}${hasText(e.comment) ? ` # ${e.comment}` : ''}\n`
    }
    raw += '\n'
  }
  if (conf.rules.length) raw += `[RULES]\n\n${conf.rules.map((r) => formatRule(r, true)).join('')}\n`
  for (const name of [...conf.groups.keys()].sort(sortStr)) {
    const comment = conf.groupComments.get(name)
    raw += comment ? `[group ${name}] # ${comment}\n\n` : `[group ${name}]\n\n`
    raw += `${(conf.groups.get(name) ?? []).map((r) => formatRule(r, false)).join('')}\n`
  }
  return raw
}

/** $format_rules: a group's rules are written without `-i` */
function formatRule(r: FwRule, allowIface: boolean): string {
  const v = (k: string) => (r[k] === undefined || typeof r[k] === 'object' ? undefined : String(r[k]))
  let raw = r.enable !== undefined && !Number(r.enable) ? '|' : ''
  raw += String(r.type).toUpperCase()
  raw += v('macro') ? ` ${v('macro')}(${v('action')})` : ` ${v('action')}`
  if (allowIface && v('iface')) raw += ` -i ${v('iface')}`
  if (r.type !== 'group') {
    for (const [k, flag] of [
      ['source', '-source'],
      ['dest', '-dest'],
      ['proto', '-p'],
      ['dport', '-dport'],
      ['sport', '-sport'],
      ['log', '-log'],
      ['icmp-type', '-icmp-type'],
    ] as const) {
      if (v(k)) raw += ` ${flag} ${v(k)}`
    }
  }
  if (hasText(r.comment)) raw += ` # ${r.comment}`
  return `${raw}\n`
}

/** copy_list_with_digest: entries with their keys sorted, every entry carrying the list's digest */
export function listWithDigest<T extends object>(
  list: readonly T[],
): { list: Record<string, unknown>[]; digest: string } {
  const sha = createHash('sha1')
  const out = list.map((entry) => {
    const data: Record<string, unknown> = {}
    for (const k of Object.keys(entry).sort(sortStr)) {
      const value = (entry as Record<string, unknown>)[k]
      if (value === undefined) continue
      data[k] = value
      if (typeof value !== 'object') sha.update(`${k}:${String(value)}\n`, 'utf8')
    }
    return data
  })
  const digest = sha.digest('hex')
  for (const e of out) e.digest = digest
  return { list: out, digest }
}

/** copy_opject_with_digest */
export function objectWithDigest(obj: Record<string, FwValue>): { object: Record<string, unknown>; digest: string } {
  const sha = createHash('sha1')
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(obj).sort(sortStr)) {
    out[k] = obj[k]
    sha.update(`${k}:${String(obj[k])}\n`, 'utf8')
  }
  const digest = sha.digest('hex')
  out.digest = digest
  return { object: out, digest }
}

/** the firewall files the cluster filesystem holds under /etc/pve/firewall: `<vmid>.fw` and `cluster.fw` */
export class FirewallFiles {
  readonly files = new Map<number, string>()
  /** cluster.fw; undefined when there is none */
  clusterText: string | undefined

  /** `nowSec` is the clock the cluster options' anti-lockout `enable` timestamp is read against */
  constructor(private readonly nowSec: () => number) {}

  /** load_clusterfw_conf */
  loadCluster(): FwConf {
    return parseConf(this.clusterText, 'cluster', undefined, this.nowSec())
  }

  /** save_clusterfw_conf */
  saveCluster(conf: FwConf): void {
    const raw = formatConf(conf)
    this.clusterText = raw === '' ? undefined : raw
  }

  /** load_vmfw_conf: the guest's file, its references resolved against cluster.fw */
  load(vmid: number, env: RuleEnv, cluster: FwConf = this.loadCluster()): FwConf {
    return parseConf(this.files.get(vmid), env === 'ct' ? 'ct' : 'vm', cluster)
  }

  /** save_vmfw_conf */
  save(vmid: number, conf: FwConf): void {
    const raw = formatConf(conf)
    if (raw) this.files.set(vmid, raw)
    else this.files.delete(vmid)
  }

  /** remove_vmfw_conf (guest destroy) */
  remove(vmid: number): void {
    this.files.delete(vmid)
  }

  /** clone_vmfw_conf: the target's file is replaced by a copy of the source's (or removed) */
  clone(from: number, to: number): void {
    const text = this.files.get(from)
    if (text === undefined) this.files.delete(to)
    else this.files.set(to, text)
  }
}
