/**
 * The handler families pve-firewall's API classes share, each built once for every file that uses it:
 * PVE::API2::Firewall::RulesBase (get_rules, get_rule, create_rule, update_rule, delete_rule), AliasesBase
 * (get_aliases, create_alias, read_alias, update_alias, remove_alias), BaseIPSetList (ipset_index, create_ipset)
 * and IPSetBase (get_ipset, delete_ipset, create_ip, read_ip, update_ip, remove_ip), plus
 * PVE::Firewall::Helpers::collect_refs. A subclass is an `FwFile`: its rule_env and its load_config /
 * save_config. Nothing here refuses a delete because a rule still names the object: PVE does not check.
 */
import type { RequestContext } from '../http/types.js'
import { fail400, fail500, LXC_DIGEST_MISMATCH } from '../model/errors.js'
import {
  listWithDigest,
  ParamError,
  resolveAlias,
  RULE_KEYS,
  verifyRule,
  type FwAlias,
  type FwConf,
  type FwIpsetEntry,
  type FwRule,
  type FwScope,
  type RuleEnv,
} from '../model/firewall.js'
import { cleanCidr, FwError, parseIpOrCidr } from '../model/fw-addr.js'
import { int, str, type RouteTable } from './params.js'

/** one API class's file: what its load_config returns (`$cluster_conf`, `$fw_conf`) and its save_config */
export interface FwFile {
  env: RuleEnv
  load(ctx: RequestContext): { cluster?: FwConf; conf: FwConf }
  save(ctx: RequestContext, conf: FwConf): void
}

/** a rules class also names the list it edits (load_config's `$rules`) and how save_rules stores it */
export interface FwRuleFile extends FwFile {
  rules(conf: FwConf, ctx: RequestContext): FwRule[]
  storeRules(conf: FwConf, ctx: RequestContext, rules: FwRule[]): void
}

/** the lock_*fw_conf call around a handler: the model's errors become PVE's answers */
export function locked<T>(code: () => T): T {
  try {
    return code()
  } catch (e) {
    if (e instanceof ParamError) throw fail400(e.errors)
    if (e instanceof FwError) throw fail500(e.message)
    throw e
  }
}

/** PVE::Tools::assert_if_modified */
export function assertDigest(current: string, given: unknown): void {
  if (given !== undefined && given !== null && given !== '' && String(given) !== current) {
    throw fail500(LXC_DIGEST_MISMATCH)
  }
}

/** PVE::Tools::split_list */
export const splitList = (s: unknown): string[] =>
  String(s ?? '')
    .split(/[\s,;\0]+/)
    .filter((x) => x !== '')

export const truthy = (v: unknown) => v === true || v === 1 || v === '1'

/** verify_rule's scope: the `$cluster_conf` and `$fw_conf` the class's load_config returned */
const verifyScope = (cluster: FwConf | undefined, conf: FwConf): FwScope => ({ cluster, local: conf })

/** resolve_alias without a cluster configuration (the cluster's own handlers) takes the file as the cluster's */
const resolveScope = (cluster: FwConf | undefined, conf: FwConf): FwScope =>
  cluster ? { cluster, local: conf } : { cluster: conf }

/** RulesBase's handlers at `path` (the list) and `path/{pos}` */
export function rulesRoutes(path: string, file: FwRuleFile): RouteTable {
  const pos = (ctx: RequestContext) => int(ctx, 'pos') ?? 0
  return [
    [
      'GET',
      path,
      (ctx) =>
        locked(() => {
          const { conf } = file.load(ctx)
          return listWithDigest(file.rules(conf, ctx)).list.map((r, i) => ({ ...r, pos: i }))
        }),
    ],
    [
      'GET',
      `${path}/{pos}`,
      (ctx) =>
        locked(() => {
          const { conf } = file.load(ctx)
          const rule = listWithDigest(file.rules(conf, ctx)).list[pos(ctx)]
          if (!rule) throw new FwError(`no rule at position ${pos(ctx)}`)
          return { ...rule, pos: pos(ctx) }
        }),
    ],
    [
      'POST',
      path,
      (ctx) =>
        locked(() => {
          // create_rule: the new rule goes first (unshift), whatever `pos` says; enable defaults to 0
          const { cluster, conf } = file.load(ctx)
          const rules = file.rules(conf, ctx)
          const rule: FwRule = {}
          copyRuleData(rule, ctx.params)
          verifyRule(rule, verifyScope(cluster, conf), file.env, false)
          if (ctx.params.enable === undefined || ctx.params.enable === null) rule.enable = 0
          rules.unshift(rule)
          file.storeRules(conf, ctx, rules)
          file.save(ctx, conf)
          return null
        }),
    ],
    [
      'PUT',
      `${path}/{pos}`,
      (ctx) =>
        locked(() => {
          const { cluster, conf } = file.load(ctx)
          let rules = file.rules(conf, ctx)
          assertDigest(listWithDigest(rules).digest, ctx.params.digest)
          const at = pos(ctx)
          const rule = rules[at]
          if (!rule) throw new FwError(`no rule at position ${at}`)
          const moveto = int(ctx, 'moveto')
          if (moveto !== undefined && moveto !== at) {
            // update_rule's move: the rule is taken out and put before the rule that was at `moveto`
            const next: FwRule[] = []
            rules.forEach((r, i) => {
              if (i === at) return
              if (i === moveto) next.push(rule)
              next.push(r)
            })
            if (moveto >= rules.length) next.push(rule)
            rules = next
          } else {
            copyRuleData(rule, ctx.params)
            deleteRuleProperties(rule, ctx.params.delete)
            delete rule.errors
            verifyRule(rule, verifyScope(cluster, conf), file.env, false)
          }
          file.storeRules(conf, ctx, rules)
          file.save(ctx, conf)
          return null
        }),
    ],
    [
      'DELETE',
      `${path}/{pos}`,
      (ctx) =>
        locked(() => {
          const { conf } = file.load(ctx)
          const rules = file.rules(conf, ctx)
          assertDigest(listWithDigest(rules).digest, ctx.params.digest)
          if (pos(ctx) >= rules.length) throw new FwError(`no rule at position ${pos(ctx)}`)
          rules.splice(pos(ctx), 1)
          file.storeRules(conf, ctx, rules)
          file.save(ctx, conf)
          return null
        }),
    ],
  ]
}

/** $aliases_to_list: by lower-cased name */
const aliasList = (conf: FwConf): FwAlias[] =>
  [...conf.aliases.keys()].sort().map((k) => conf.aliases.get(k) as FwAlias)

/** AliasesBase's handlers at `path` and `path/{name}`; names are kept as written and looked up lower-cased */
export function aliasRoutes(path: string, file: FwFile): RouteTable {
  const key = (ctx: RequestContext) => (str(ctx, 'name') ?? '').toLowerCase()
  return [
    ['GET', path, (ctx) => locked(() => listWithDigest(aliasList(file.load(ctx).conf)).list)],
    [
      'POST',
      path,
      (ctx) =>
        locked(() => {
          const { conf } = file.load(ctx)
          const name = str(ctx, 'name') ?? ''
          if (conf.aliases.has(key(ctx))) throw new ParamError({ name: `alias '${name}' already exists` })
          conf.aliases.set(key(ctx), aliasData(ctx))
          file.save(ctx, conf)
          return null
        }),
    ],
    [
      'GET',
      `${path}/{name}`,
      (ctx) =>
        locked(() => {
          const alias = file.load(ctx).conf.aliases.get(key(ctx))
          if (!alias) throw new ParamError({ name: 'no such alias' })
          return alias
        }),
    ],
    [
      'PUT',
      `${path}/{name}`,
      (ctx) =>
        locked(() => {
          const { conf } = file.load(ctx)
          assertDigest(listWithDigest(aliasList(conf)).digest, ctx.params.digest)
          if (!conf.aliases.has(key(ctx))) throw new ParamError({ name: 'no such alias' })
          const data = aliasData(ctx)
          conf.aliases.set(key(ctx), data)
          const rename = str(ctx, 'rename')
          if (rename && rename.toLowerCase() !== key(ctx)) {
            if (conf.aliases.has(rename.toLowerCase())) {
              throw new ParamError({ name: `alias '${rename}' already exists` })
            }
            data.name = rename
            conf.aliases.set(rename.toLowerCase(), data)
            conf.aliases.delete(key(ctx))
          }
          file.save(ctx, conf)
          return null
        }),
    ],
    [
      'DELETE',
      `${path}/{name}`,
      (ctx) =>
        locked(() => {
          // remove_alias: rules and ipset entries that name the alias are not looked at
          const { conf } = file.load(ctx)
          assertDigest(listWithDigest(aliasList(conf)).digest, ctx.params.digest)
          conf.aliases.delete(key(ctx))
          file.save(ctx, conf)
          return null
        }),
    ],
  ]
}

/** $get_ipset_list */
const ipsetList = (conf: FwConf) =>
  [...conf.ipsets.keys()].sort().map((name) => {
    const comment = conf.ipsetComments.get(name)
    return comment ? { name, comment } : { name }
  })

/** BaseIPSetList's handlers at `path`, IPSetBase's at `path/{name}` and `path/{name}/{cidr}` */
export function ipsetRoutes(path: string, file: FwFile): RouteTable {
  const named = (ctx: RequestContext) => {
    const loaded = file.load(ctx)
    const name = str(ctx, 'name') ?? ''
    const set = loaded.conf.ipsets.get(name)
    if (!set) throw new FwError(`no such IPSet '${name}'`)
    return { ...loaded, name, set }
  }
  return [
    ['GET', path, (ctx) => locked(() => listWithDigest(ipsetList(file.load(ctx).conf)).list)],
    [
      'POST',
      path,
      (ctx) =>
        locked(() => {
          const { conf } = file.load(ctx)
          const name = str(ctx, 'name') ?? ''
          const rename = str(ctx, 'rename')
          const comment = str(ctx, 'comment')
          if (rename) {
            assertDigest(listWithDigest(ipsetList(conf)).digest, ctx.params.digest)
            if (!conf.ipsets.has(rename)) throw new ParamError({ name: `IPSet '${rename}' does not exist` })
            if (conf.ipsets.has(name) && name !== rename) {
              throw new ParamError({ name: `IPSet '${name}' does already exist` })
            }
            const data = conf.ipsets.get(rename) ?? []
            conf.ipsets.delete(rename)
            conf.ipsets.set(name, data)
            const old = conf.ipsetComments.get(rename)
            conf.ipsetComments.delete(rename)
            if (old) conf.ipsetComments.set(name, old)
          } else {
            if (conf.ipsets.has(name)) throw new ParamError({ name: `IPSet '${name}' already exists` })
            conf.ipsets.set(name, [])
          }
          if (comment !== undefined) conf.ipsetComments.set(name, comment)
          file.save(ctx, conf)
          return null
        }),
    ],
    ['GET', `${path}/{name}`, (ctx) => locked(() => listWithDigest(named(ctx).set).list)],
    [
      'DELETE',
      `${path}/{name}`,
      (ctx) =>
        locked(() => {
          // delete_ipset refuses only a set with entries (unless `force`): rules naming it are not looked at
          const { conf, name, set } = named(ctx)
          if (set.length && !truthy(ctx.params.force)) throw new FwError(`IPSet '${name}' is not empty`)
          conf.ipsets.delete(name)
          file.save(ctx, conf)
          return null
        }),
    ],
    [
      'POST',
      `${path}/{name}`,
      (ctx) =>
        locked(() => {
          const { cluster, conf, set } = named(ctx)
          let cidr = str(ctx, 'cidr') ?? ''
          const alias = /^(dc\/|guest\/)?([A-Za-z][A-Za-z0-9\-_]+)$/.exec(cidr)
          if (alias) resolveAlias(resolveScope(cluster, conf), alias[2] as string, alias[1] ?? '')
          else cidr = parseIpOrCidr(cleanCidr(cidr)).cidr
          if (set.some((e) => e.cidr === cidr)) throw new ParamError({ cidr: `address '${cidr}' already exists` })
          if (/\/0+$/.test(cidr)) throw new ParamError({ cidr: 'a zero prefix is not allowed in ipset entries' })
          const entry: FwIpsetEntry = { cidr }
          if (truthy(ctx.params.nomatch)) entry.nomatch = 1
          const comment = str(ctx, 'comment')
          if (comment) entry.comment = comment
          set.unshift(entry)
          file.save(ctx, conf)
          return null
        }),
    ],
    [
      'GET',
      `${path}/{name}/{cidr}`,
      (ctx) =>
        locked(() => {
          const found = listWithDigest(named(ctx).set).list.find((e) => e.cidr === str(ctx, 'cidr'))
          if (!found) throw new ParamError({ cidr: 'no such IP/Network' })
          return found
        }),
    ],
    [
      'PUT',
      `${path}/{name}/{cidr}`,
      (ctx) =>
        locked(() => {
          const { conf, set } = named(ctx)
          assertDigest(listWithDigest(set).digest, ctx.params.digest)
          const entry = set.find((e) => e.cidr === str(ctx, 'cidr'))
          if (!entry) throw new ParamError({ cidr: 'no such IP/Network' })
          // update_ip sets both from the request: an absent nomatch or comment clears it
          if (truthy(ctx.params.nomatch)) entry.nomatch = 1
          else delete entry.nomatch
          const comment = str(ctx, 'comment')
          if (comment !== undefined) entry.comment = comment
          else delete entry.comment
          file.save(ctx, conf)
          return null
        }),
    ],
    [
      'DELETE',
      `${path}/{name}/{cidr}`,
      (ctx) =>
        locked(() => {
          const { conf, name, set } = named(ctx)
          assertDigest(listWithDigest(set).digest, ctx.params.digest)
          conf.ipsets.set(
            name,
            set.filter((e) => e.cidr !== str(ctx, 'cidr')),
          )
          file.save(ctx, conf)
          return null
        }),
    ],
  ]
}

/**
 * PVE::Firewall::Helpers::collect_refs: the file's ipsets, then its aliases, each by its (lower-cased) key with
 * `ref` `+name` or `name` and the given scope. PVE walks Perl hashes here; the simulator sorts by name.
 */
export function collectRefs(conf: FwConf, type: string | undefined, scope: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  if (!type || type === 'ipset') {
    for (const { name, comment } of ipsetList(conf)) {
      out.push({ type: 'ipset', name, ref: `+${name}`, scope, ...(comment ? { comment } : {}) })
    }
  }
  if (!type || type === 'alias') {
    for (const name of [...conf.aliases.keys()].sort()) {
      const comment = conf.aliases.get(name)?.comment
      out.push({ type: 'alias', name, ref: name, scope, ...(comment ? { comment } : {}) })
    }
  }
  return out
}

function aliasData(ctx: RequestContext): FwAlias {
  const cidr = str(ctx, 'cidr') ?? ''
  const data: FwAlias = { name: str(ctx, 'name') ?? '', cidr, ipversion: parseIpOrCidr(cidr).version }
  const comment = str(ctx, 'comment')
  if (comment) data.comment = comment
  return data
}

/** copy_rule_data: '' or '-' removes a key */
function copyRuleData(rule: FwRule, params: Record<string, unknown>): void {
  for (const k of RULE_KEYS) {
    const v = params[k]
    if (v === undefined || v === null) continue
    const s = typeof v === 'boolean' ? (v ? 1 : 0) : v
    if (s === '' || s === '-') delete rule[k]
    else rule[k] = k === 'enable' ? Number(s) : String(s)
  }
}

/** delete_rule_properties */
function deleteRuleProperties(rule: FwRule, list: unknown): void {
  for (const opt of splitList(list)) {
    // rule_properties also holds `pos` and `digest`, so deleting them is accepted (and changes nothing written)
    if (!(RULE_KEYS as readonly string[]).includes(opt) && opt !== 'pos' && opt !== 'digest') {
      throw new ParamError({ delete: `no such property ('${opt}')` })
    }
    if (opt === 'type' || opt === 'action') {
      throw new ParamError({ delete: `unable to delete required property '${opt}'` })
    }
    delete rule[opt]
  }
}
