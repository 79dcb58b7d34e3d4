/**
 * The guest firewall as plain comparable data, and the pure steps between two of them: `firewallWrites(live,
 * desired)` lists the PVE writes that turn one into the other, `applyWrite` is what each does on PVE
 * (pve-firewall's handlers: a created rule goes first, `moveto` puts a rule before the one that was at that
 * position, ipset entries are kept sorted, alias names are matched lower-cased). Rules are compared by
 * content and written by position; IP sets, their entries and aliases are compared as sets.
 */
import type { FirewallSpec } from '@proxops/schema'
import type { FirewallWrite, GuestFirewall } from '@proxops/pve-client/wire'

/** `spec.firewall` as the schema normalises it */
export type DesiredFirewall = FirewallSpec

export type { CanonAlias, CanonEntry, CanonFirewall, CanonIpset, CanonRule } from '../../plan-types.js'
import type { CanonFirewall, CanonRule } from '../../plan-types.js'

/** the rule fields ProxOps owns, in PVE's file order */
export const RULE_FIELDS = [
  'type',
  'action',
  'macro',
  'iface',
  'source',
  'dest',
  'proto',
  'dport',
  'sport',
  'log',
  'icmp-type',
  'enable',
  'comment',
] as const

/** manifest key -> PVE option key */
export const OPTION_KEYS: Readonly<Record<string, string>> = {
  enable: 'enable',
  'policy-in': 'policy_in',
  'policy-out': 'policy_out',
  'log-level-in': 'log_level_in',
  'log-level-out': 'log_level_out',
  ipfilter: 'ipfilter',
  macfilter: 'macfilter',
  dhcp: 'dhcp',
  ndp: 'ndp',
  radv: 'radv',
}

/**
 * What PVE applies for an option a guest's `<vmid>.fw` does not set (the defaults of pve-firewall's VM/CT option
 * properties): an absent `enable` is off, so a declared `enable: false` needs no write.
 */
const OPTION_DEFAULTS: Readonly<Record<string, string>> = { enable: '0', dhcp: '0', macfilter: '1', ndp: '1' }
/** the live value of an option, PVE's default when the file does not set it */
export const liveOption = (options: Readonly<Record<string, string>>, key: string): string | undefined =>
  options[key] ?? OPTION_DEFAULTS[key]

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
const withComment = <T extends object>(o: T, comment: string | undefined): T =>
  comment === undefined || comment === '' ? o : { ...o, comment }

function sortCanon(c: CanonFirewall): CanonFirewall {
  return {
    options: Object.fromEntries(Object.entries(c.options).sort(([a], [b]) => cmp(a, b))),
    rules: c.rules,
    aliases: [...c.aliases].sort((a, b) => cmp(a.name.toLowerCase(), b.name.toLowerCase())),
    ipsets: [...c.ipsets]
      .sort((a, b) => cmp(a.name, b.name))
      .map((s) => ({ ...s, entries: [...s.entries].sort((a, b) => cmp(a.cidr, b.cidr)) })),
  }
}

export function desiredFirewall(fw: DesiredFirewall): CanonFirewall {
  const options: Record<string, string> = {}
  for (const [key, pve] of Object.entries(OPTION_KEYS)) {
    const v = (fw as unknown as Record<string, unknown>)[key]
    if (v === undefined) continue
    options[pve] = typeof v === 'boolean' ? (v ? '1' : '0') : String(v)
  }
  const rules = fw.rules.map((r) => {
    const out: Record<string, string> = { type: r.direction, action: r.action }
    for (const k of ['macro', 'iface', 'source', 'dest', 'proto', 'dport', 'sport', 'log', 'icmp-type'] as const) {
      const v = r[k]
      if (v !== undefined && v !== '') out[k] = v
    }
    out.enable = r.enable ? '1' : '0'
    return withComment(out, r.comment)
  })
  return sortCanon({
    options,
    rules,
    aliases: fw.aliases.map((a) => withComment({ name: a.name, cidr: a.cidr }, a.comment)),
    ipsets: fw.ipsets.map((s) =>
      withComment(
        {
          name: s.name,
          entries: s.entries.map((e) => withComment({ cidr: e.cidr, nomatch: e.nomatch }, e.comment)),
        },
        s.comment,
      ),
    ),
  })
}

export function liveFirewall(g: GuestFirewall): CanonFirewall {
  return sortCanon({
    options: { ...g.options },
    rules: g.rules.map((r) => {
      const out: Record<string, string> = {}
      for (const k of RULE_FIELDS) if (r[k] !== undefined && r[k] !== '') out[k] = r[k]
      out.enable ??= '1'
      return out
    }),
    aliases: g.aliases.map((a) => withComment({ name: a.name, cidr: a.cidr }, a.comment)),
    ipsets: g.ipsets.map((s) =>
      withComment(
        { name: s.name, entries: s.entries.map((e) => withComment({ cidr: e.cidr, nomatch: e.nomatch }, e.comment)) },
        s.comment,
      ),
    ),
  })
}

export const EMPTY_FIREWALL: CanonFirewall = { options: {}, rules: [], aliases: [], ipsets: [] }

const ruleKey = (r: CanonRule): string =>
  JSON.stringify(
    Object.keys(r)
      .sort(cmp)
      .map((k) => [k, r[k]]),
  )

/** The rule as PVE writes it in `<vmid>.fw` (`|IN SSH(ACCEPT) -source +admins # comment`): for plans and logs. */
export function ruleLine(r: CanonRule): string {
  let s = r.enable === '0' ? '|' : ''
  s += (r.type ?? '').toUpperCase()
  s += r.macro !== undefined ? ` ${r.macro}(${r.action ?? ''})` : ` ${r.action ?? ''}`
  if (r.iface !== undefined) s += ` -i ${r.iface}`
  for (const [k, flag] of [
    ['source', '-source'],
    ['dest', '-dest'],
    ['proto', '-p'],
    ['dport', '-dport'],
    ['sport', '-sport'],
    ['log', '-log'],
    ['icmp-type', '-icmp-type'],
  ] as const) {
    if (r[k] !== undefined) s += ` ${flag} ${r[k]}`
  }
  if (r.comment !== undefined) s += ` # ${r.comment}`
  return s
}

/** The writes that make `live` what `desired` owns, in an order PVE accepts (references exist before use). */
export function firewallWrites(live: CanonFirewall, desired: CanonFirewall): FirewallWrite[] {
  const out: FirewallWrite[] = []
  // aliases first: rules and ipset entries may name them
  const liveAliases = new Map(live.aliases.map((a) => [a.name.toLowerCase(), a]))
  const wantAliases = new Set(desired.aliases.map((a) => a.name.toLowerCase()))
  for (const a of desired.aliases) {
    const l = liveAliases.get(a.name.toLowerCase())
    if (!l) out.push({ op: 'alias-create', ...a })
    else if (l.name !== a.name || l.cidr !== a.cidr || l.comment !== a.comment) out.push({ op: 'alias-update', ...a })
  }
  const liveSets = new Map(live.ipsets.map((s) => [s.name, s]))
  const wantSets = new Set(desired.ipsets.map((s) => s.name))
  for (const s of desired.ipsets) {
    const l = liveSets.get(s.name)
    if (!l) out.push({ op: 'ipset-create', name: s.name, ...(s.comment === undefined ? {} : { comment: s.comment }) })
    else if (l.comment !== s.comment) out.push({ op: 'ipset-comment', name: s.name, comment: s.comment ?? '' })
    const have = new Map((l?.entries ?? []).map((e) => [e.cidr, e]))
    const want = new Set(s.entries.map((e) => e.cidr))
    for (const e of l?.entries ?? [])
      if (!want.has(e.cidr)) out.push({ op: 'ipset-remove', name: s.name, cidr: e.cidr })
    for (const e of s.entries) {
      const h = have.get(e.cidr)
      if (!h) out.push({ op: 'ipset-add', name: s.name, ...e })
      else if (h.nomatch !== e.nomatch || h.comment !== e.comment) out.push({ op: 'ipset-update', name: s.name, ...e })
    }
  }
  out.push(...ruleWrites(live.rules, desired.rules))
  // what is no longer declared goes once no rule uses it
  for (const s of live.ipsets) if (!wantSets.has(s.name)) out.push({ op: 'ipset-delete', name: s.name })
  for (const a of live.aliases)
    if (!wantAliases.has(a.name.toLowerCase())) out.push({ op: 'alias-delete', name: a.name })
  // options last: a firewall is switched on once its rules are in place
  const set: Record<string, string> = {}
  for (const [k, v] of Object.entries(desired.options)) if (liveOption(live.options, k) !== v) set[k] = v
  if (Object.keys(set).length > 0) out.push({ op: 'options', set })
  return out
}

/**
 * Rule writes: equal rules (by content) are kept, the remaining live rules are rewritten in place into the
 * remaining desired ones (in order), what is left over is deleted or created, then every rule is moved to its
 * place. A created rule lands at position 0; `moveto` t puts a rule before the one that was at t.
 */
function ruleWrites(live: readonly CanonRule[], desired: readonly CanonRule[]): FirewallWrite[] {
  const out: FirewallWrite[] = []
  const liveKeys = live.map(ruleKey)
  const used = new Set<number>()
  /** desired index -> live index it keeps */
  const keep = new Map<number, number>()
  desired.forEach((r, j) => {
    const key = ruleKey(r)
    const i = liveKeys.findIndex((k, idx) => k === key && !used.has(idx))
    if (i >= 0) {
      used.add(i)
      keep.set(j, i)
    }
  })
  const spareLive = live.map((_, i) => i).filter((i) => !used.has(i))
  const spareWant = desired.map((_, j) => j).filter((j) => !keep.has(j))
  // the working list: ids stand for rules; a live rule's id is its index, a created one's is -1 - j
  let work = live.map((_, i) => i)
  const pairs = Math.min(spareLive.length, spareWant.length)
  for (let n = 0; n < pairs; n++) {
    const i = spareLive[n] as number
    const j = spareWant[n] as number
    keep.set(j, i)
    const before = live[i] as CanonRule
    const after = desired[j] as CanonRule
    const set: Record<string, string> = {}
    for (const k of RULE_FIELDS) if (after[k] !== undefined && after[k] !== before[k]) set[k] = after[k]
    const del = RULE_FIELDS.filter((k) => before[k] !== undefined && after[k] === undefined)
    out.push({ op: 'rule-update', pos: work.indexOf(i), set, delete: del })
  }
  for (const i of [...spareLive.slice(pairs)].sort((a, b) => b - a)) {
    const pos = work.indexOf(i)
    out.push({ op: 'rule-delete', pos })
    work = work.filter((x) => x !== i)
  }
  const target = desired.map((_, j) => keep.get(j) ?? -1 - j)
  for (const j of spareWant.slice(pairs)) {
    out.push({ op: 'rule-create', rule: desired[j] as CanonRule })
    work = [-1 - j, ...work]
  }
  for (let t = 0; t < target.length; t++) {
    const p = work.indexOf(target[t] as number)
    if (p === t) continue
    // p > t: the rules before t are in place already
    out.push({ op: 'rule-move', pos: p, moveto: t })
    const id = work[p] as number
    work = [...work.slice(0, p), ...work.slice(p + 1)]
    work.splice(t, 0, id)
  }
  return out
}

/** What one write does to a firewall on PVE (for checking a live read against the plan step by step). */
export function applyWrite(c: CanonFirewall, w: FirewallWrite): CanonFirewall {
  const rules = [...c.rules]
  const aliases = [...c.aliases]
  let ipsets = c.ipsets.map((s) => ({ ...s, entries: [...s.entries] }))
  const options = { ...c.options }
  const set = (name: string) => ipsets.find((s) => s.name === name)
  switch (w.op) {
    case 'options':
      Object.assign(options, w.set)
      break
    case 'rule-create':
      rules.unshift({ ...w.rule })
      break
    case 'rule-update': {
      const r: Record<string, string> = { ...(rules[w.pos] as CanonRule), ...w.set }
      for (const k of w.delete) delete r[k]
      rules[w.pos] = r
      break
    }
    case 'rule-move': {
      const rule = rules[w.pos] as CanonRule
      const next: CanonRule[] = []
      rules.forEach((r, i) => {
        if (i === w.pos) return
        if (i === w.moveto) next.push(rule)
        next.push(r)
      })
      if (w.moveto >= rules.length) next.push(rule)
      return sortCanon({ options, rules: next, aliases, ipsets })
    }
    case 'rule-delete':
      rules.splice(w.pos, 1)
      break
    case 'alias-create':
    case 'alias-update': {
      const rest = aliases.filter((a) => a.name.toLowerCase() !== w.name.toLowerCase())
      return sortCanon({
        options,
        rules,
        aliases: [...rest, withComment({ name: w.name, cidr: w.cidr }, w.comment)],
        ipsets,
      })
    }
    case 'alias-delete':
      return sortCanon({
        options,
        rules,
        aliases: aliases.filter((a) => a.name.toLowerCase() !== w.name.toLowerCase()),
        ipsets,
      })
    case 'ipset-create':
      ipsets.push(withComment({ name: w.name, entries: [] }, w.comment))
      break
    case 'ipset-comment': {
      const s = set(w.name)
      if (s) {
        if (w.comment === '') delete s.comment
        else s.comment = w.comment
      }
      break
    }
    case 'ipset-delete':
      ipsets = ipsets.filter((s) => s.name !== w.name)
      break
    case 'ipset-add':
    case 'ipset-update': {
      const s = set(w.name)
      if (s) {
        s.entries = s.entries.filter((e) => e.cidr !== w.cidr)
        s.entries.push(withComment({ cidr: w.cidr, nomatch: w.nomatch }, w.comment))
      }
      break
    }
    case 'ipset-remove': {
      const s = set(w.name)
      if (s) s.entries = s.entries.filter((e) => e.cidr !== w.cidr)
      break
    }
  }
  return sortCanon({ options, rules, aliases, ipsets })
}

/**
 * An object's set fields in key order: two objects with the same fields print the same, however they were built
 * (an absent field and one set to undefined alike).
 */
const byKey = (o: object): [string, unknown][] =>
  Object.entries(o)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => cmp(a, b))

/**
 * The firewall as one canonical text: every object's keys in order (a rule-update spreads new fields after the
 * old ones, a read lists them in file order), aliases, IP sets and entries in their canonical order, rules in
 * their position (which is content). Absent optional fields print as absent, never as `undefined`.
 */
function canonicalText(c: CanonFirewall): string {
  const s = sortCanon(c)
  return JSON.stringify([
    byKey(s.options),
    s.rules.map(byKey),
    s.aliases.map(byKey),
    s.ipsets.map(({ entries, ...set }) => [byKey(set), entries.map(byKey)]),
  ])
}

/**
 * Equal for every part of the firewall, options included (for checking a live read against an expected state):
 * compared as values, never by the order in which an object's keys happen to be written.
 */
export function sameFirewall(a: CanonFirewall, b: CanonFirewall): boolean {
  return canonicalText(a) === canonicalText(b)
}
