import type { RequestContext } from '../http/types.js'
import type { Cluster } from '../model/cluster.js'
import { fail400, fail500, LXC_DIGEST_MISMATCH } from '../model/errors.js'
import {
  listWithDigest,
  objectWithDigest,
  ParamError,
  RULE_KEYS,
  verifyRule,
  type FwConf,
  type FwRule,
  type RuleEnv,
} from '../model/firewall.js'
import { cleanCidr, FwError, parseIpOrCidr } from '../model/fw-addr.js'
import { int, str, type RouteTable } from './routes.js'

/** vm_option_properties: the keys PUT .../firewall/options takes */
const OPTION_KEYS = [
  'enable',
  'macfilter',
  'dhcp',
  'ndp',
  'radv',
  'ipfilter',
  'policy_in',
  'policy_out',
  'log_level_in',
  'log_level_out',
]
const BOOL_OPTIONS = new Set(['enable', 'macfilter', 'dhcp', 'ndp', 'radv', 'ipfilter'])
/** rule_properties (the keys copy_rule_data copies; `pos` and `digest` are copied too but never written) */
const RULE_PARAM_KEYS: readonly string[] = RULE_KEYS

/** PVE::Tools::assert_if_modified */
function assertDigest(current: string, given: unknown): void {
  if (given !== undefined && given !== null && given !== '' && String(given) !== current) {
    throw fail500(LXC_DIGEST_MISMATCH)
  }
}

/** PVE::Tools::split_list */
const splitList = (s: unknown): string[] =>
  String(s ?? '')
    .split(/[\s,;\0]+/)
    .filter((x) => x !== '')

/**
 * /nodes/{node}/{qemu|lxc}/{vmid}/firewall (pve-firewall PVE::API2::Firewall::VM / CT with VMRules / CTRules,
 * VMAliases / CTAliases, VMIPSetList / VMIPset, and the option handlers of VMBase). As in PVE nothing checks that
 * the guest exists: a missing file reads as an empty configuration.
 */
export function firewallRoutes(c: Cluster): RouteTable {
  const table: RouteTable = []
  for (const type of ['qemu', 'lxc'] as const) {
    const env: RuleEnv = type === 'qemu' ? 'vm' : 'ct'
    const base = `/nodes/{node}/${type}/{vmid}/firewall`
    const vmid = (ctx: RequestContext) => int(ctx, 'vmid') ?? 0
    /** handlers run under lock_vmfw_conf; errors map onto PVE's answers */
    const locked = <T>(ctx: RequestContext, code: (conf: FwConf) => T): T => {
      try {
        return code(c.firewalls.load(vmid(ctx), env))
      } catch (e) {
        if (e instanceof ParamError) throw fail400(e.errors)
        if (e instanceof FwError) throw fail500(e.message)
        throw e
      }
    }
    const save = (ctx: RequestContext, conf: FwConf) => c.firewalls.save(vmid(ctx), conf)
    const ipsetOf = (conf: FwConf, ctx: RequestContext) => {
      const name = str(ctx, 'name') ?? ''
      const set = conf.ipsets.get(name)
      if (!set) throw new FwError(`no such IPSet '${name}'`)
      return { name, set }
    }
    const aliasList = (conf: FwConf) =>
      [...conf.aliases.keys()]
        .sort()
        .map((k) => conf.aliases.get(k) as NonNullable<ReturnType<typeof conf.aliases.get>>)
    const ipsetList = (conf: FwConf) =>
      [...conf.ipsets.keys()].sort().map((name) => {
        const comment = conf.ipsetComments.get(name)
        return comment ? { name, comment } : { name }
      })

    table.push(
      [
        'GET',
        base,
        () => [{ name: 'rules' }, { name: 'aliases' }, { name: 'ipset' }, { name: 'refs' }, { name: 'options' }],
      ],
      // ------------------------------------------------------------------ options (VMBase get_options / set_options)
      [
        'GET',
        `${base}/options`,
        (ctx) => {
          c.requireNode(str(ctx, 'node') ?? '')
          return objectWithDigest(c.firewalls.load(vmid(ctx), 'vm').options).object
        },
      ],
      [
        'PUT',
        `${base}/options`,
        (ctx) => {
          c.requireNode(str(ctx, 'node') ?? '')
          const conf = c.firewalls.load(vmid(ctx), 'vm')
          assertDigest(objectWithDigest(conf.options).digest, ctx.params.digest)
          for (const opt of splitList(ctx.params.delete)) {
            if (!OPTION_KEYS.includes(opt)) throw fail400({ delete: `no such option '${opt}'` })
            delete conf.options[opt]
          }
          for (const k of OPTION_KEYS) {
            const v = ctx.params[k]
            if (v === undefined || v === null) continue
            conf.options[k] = BOOL_OPTIONS.has(k) ? (v === true || v === 1 || v === '1' ? 1 : 0) : String(v)
          }
          save(ctx, conf)
          return null
        },
      ],
      // ------------------------------------------------------------------ rules (PVE::API2::Firewall::RulesBase)
      [
        'GET',
        `${base}/rules`,
        (ctx) => locked(ctx, (conf) => listWithDigest(conf.rules).list.map((r, pos) => ({ ...r, pos }))),
      ],
      [
        'GET',
        `${base}/rules/{pos}`,
        (ctx) =>
          locked(ctx, (conf) => {
            const pos = int(ctx, 'pos') ?? 0
            const { list } = listWithDigest(conf.rules)
            const rule = list[pos]
            if (!rule) throw new FwError(`no rule at position ${pos}`)
            return { ...rule, pos }
          }),
      ],
      [
        'POST',
        `${base}/rules`,
        (ctx) =>
          locked(ctx, (conf) => {
            // create_rule: the new rule goes first (unshift), whatever `pos` says; enable defaults to 0
            const rule: FwRule = {}
            copyRuleData(rule, ctx.params)
            verifyRule(rule, conf, env, false)
            if (ctx.params.enable === undefined || ctx.params.enable === null) rule.enable = 0
            conf.rules.unshift(rule)
            save(ctx, conf)
            return null
          }),
      ],
      [
        'PUT',
        `${base}/rules/{pos}`,
        (ctx) =>
          locked(ctx, (conf) => {
            assertDigest(listWithDigest(conf.rules).digest, ctx.params.digest)
            const pos = int(ctx, 'pos') ?? 0
            const rule = conf.rules[pos]
            if (!rule) throw new FwError(`no rule at position ${pos}`)
            const moveto = int(ctx, 'moveto')
            if (moveto !== undefined && moveto !== pos) {
              // update_rule's move: the rule is taken out and put before the rule that was at `moveto`
              const next: FwRule[] = []
              conf.rules.forEach((r, i) => {
                if (i === pos) return
                if (i === moveto) next.push(rule)
                next.push(r)
              })
              if (moveto >= conf.rules.length) next.push(rule)
              conf.rules = next
            } else {
              copyRuleData(rule, ctx.params)
              for (const opt of splitList(ctx.params.delete)) {
                if (!RULE_PARAM_KEYS.includes(opt) && opt !== 'pos' && opt !== 'digest') {
                  throw new ParamError({ delete: `no such property ('${opt}')` })
                }
                if (opt === 'type' || opt === 'action') {
                  throw new ParamError({ delete: `unable to delete required property '${opt}'` })
                }
                delete rule[opt]
              }
              delete rule.errors
              verifyRule(rule, conf, env, false)
            }
            save(ctx, conf)
            return null
          }),
      ],
      [
        'DELETE',
        `${base}/rules/{pos}`,
        (ctx) =>
          locked(ctx, (conf) => {
            assertDigest(listWithDigest(conf.rules).digest, ctx.params.digest)
            const pos = int(ctx, 'pos') ?? 0
            if (pos >= conf.rules.length) throw new FwError(`no rule at position ${pos}`)
            conf.rules.splice(pos, 1)
            save(ctx, conf)
            return null
          }),
      ],
      // ------------------------------------------------------------------ aliases (PVE::API2::Firewall::AliasesBase)
      ['GET', `${base}/aliases`, (ctx) => locked(ctx, (conf) => listWithDigest(aliasList(conf)).list)],
      [
        'POST',
        `${base}/aliases`,
        (ctx) =>
          locked(ctx, (conf) => {
            const name = str(ctx, 'name') ?? ''
            if (conf.aliases.has(name.toLowerCase())) throw new ParamError({ name: `alias '${name}' already exists` })
            conf.aliases.set(name.toLowerCase(), aliasData(ctx))
            save(ctx, conf)
            return null
          }),
      ],
      [
        'GET',
        `${base}/aliases/{name}`,
        (ctx) =>
          locked(ctx, (conf) => {
            const alias = conf.aliases.get((str(ctx, 'name') ?? '').toLowerCase())
            if (!alias) throw new ParamError({ name: 'no such alias' })
            return alias
          }),
      ],
      [
        'PUT',
        `${base}/aliases/{name}`,
        (ctx) =>
          locked(ctx, (conf) => {
            assertDigest(listWithDigest(aliasList(conf)).digest, ctx.params.digest)
            const key = (str(ctx, 'name') ?? '').toLowerCase()
            if (!conf.aliases.has(key)) throw new ParamError({ name: 'no such alias' })
            const data = aliasData(ctx)
            conf.aliases.set(key, data)
            const rename = str(ctx, 'rename')
            if (rename && rename.toLowerCase() !== key) {
              if (conf.aliases.has(rename.toLowerCase())) {
                throw new ParamError({ name: `alias '${rename}' already exists` })
              }
              data.name = rename
              conf.aliases.set(rename.toLowerCase(), data)
              conf.aliases.delete(key)
            }
            save(ctx, conf)
            return null
          }),
      ],
      [
        'DELETE',
        `${base}/aliases/{name}`,
        (ctx) =>
          locked(ctx, (conf) => {
            assertDigest(listWithDigest(aliasList(conf)).digest, ctx.params.digest)
            conf.aliases.delete((str(ctx, 'name') ?? '').toLowerCase())
            save(ctx, conf)
            return null
          }),
      ],
      // ------------------------------------------------------------------ ipsets (BaseIPSetList, IPSetBase)
      ['GET', `${base}/ipset`, (ctx) => locked(ctx, (conf) => listWithDigest(ipsetList(conf)).list)],
      [
        'POST',
        `${base}/ipset`,
        (ctx) =>
          locked(ctx, (conf) => {
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
            save(ctx, conf)
            return null
          }),
      ],
      ['GET', `${base}/ipset/{name}`, (ctx) => locked(ctx, (conf) => listWithDigest(ipsetOf(conf, ctx).set).list)],
      [
        'DELETE',
        `${base}/ipset/{name}`,
        (ctx) =>
          locked(ctx, (conf) => {
            const { name, set } = ipsetOf(conf, ctx)
            if (set.length && !(ctx.params.force === true || ctx.params.force === 1 || ctx.params.force === '1')) {
              throw new FwError(`IPSet '${name}' is not empty`)
            }
            conf.ipsets.delete(name)
            save(ctx, conf)
            return null
          }),
      ],
      [
        'POST',
        `${base}/ipset/{name}`,
        (ctx) =>
          locked(ctx, (conf) => {
            const { set } = ipsetOf(conf, ctx)
            let cidr = str(ctx, 'cidr') ?? ''
            const alias = /^(dc\/|guest\/)?([A-Za-z][A-Za-z0-9\-_]+)$/.exec(cidr)
            if (alias) {
              // resolve_alias: the guest's aliases unless `dc/`; cluster.fw has none
              if (alias[1] === 'dc/' || !conf.aliases.has((alias[2] as string).toLowerCase())) {
                throw new FwError(`no such alias '${alias[2]}'`)
              }
            } else {
              cidr = parseIpOrCidr(cleanCidr(cidr)).cidr
            }
            if (set.some((e) => e.cidr === cidr)) throw new ParamError({ cidr: `address '${cidr}' already exists` })
            if (/\/0+$/.test(cidr)) throw new ParamError({ cidr: 'a zero prefix is not allowed in ipset entries' })
            const entry: (typeof set)[number] = { cidr }
            if (truthy(ctx.params.nomatch)) entry.nomatch = 1
            const comment = str(ctx, 'comment')
            if (comment) entry.comment = comment
            set.unshift(entry)
            save(ctx, conf)
            return null
          }),
      ],
      [
        'GET',
        `${base}/ipset/{name}/{cidr}`,
        (ctx) =>
          locked(ctx, (conf) => {
            const { set } = ipsetOf(conf, ctx)
            const found = listWithDigest(set).list.find((e) => e.cidr === str(ctx, 'cidr'))
            if (!found) throw new ParamError({ cidr: 'no such IP/Network' })
            return found
          }),
      ],
      [
        'PUT',
        `${base}/ipset/{name}/{cidr}`,
        (ctx) =>
          locked(ctx, (conf) => {
            const { set } = ipsetOf(conf, ctx)
            assertDigest(listWithDigest(set).digest, ctx.params.digest)
            const entry = set.find((e) => e.cidr === str(ctx, 'cidr'))
            if (!entry) throw new ParamError({ cidr: 'no such IP/Network' })
            // update_ip sets both from the request: an absent nomatch or comment clears it
            if (truthy(ctx.params.nomatch)) entry.nomatch = 1
            else delete entry.nomatch
            const comment = str(ctx, 'comment')
            if (comment !== undefined) entry.comment = comment
            else delete entry.comment
            save(ctx, conf)
            return null
          }),
      ],
      [
        'DELETE',
        `${base}/ipset/{name}/{cidr}`,
        (ctx) =>
          locked(ctx, (conf) => {
            const { name, set } = ipsetOf(conf, ctx)
            assertDigest(listWithDigest(set).digest, ctx.params.digest)
            conf.ipsets.set(
              name,
              set.filter((e) => e.cidr !== str(ctx, 'cidr')),
            )
            save(ctx, conf)
            return null
          }),
      ],
      // ------------------------------------------------------------------ refs (VMBase refs)
      [
        'GET',
        `${base}/refs`,
        (ctx) =>
          locked(ctx, (conf) => {
            const want = str(ctx, 'type')
            const out: Record<string, unknown>[] = []
            if (!want || want === 'alias') {
              for (const a of aliasList(conf)) {
                out.push({
                  type: 'alias',
                  name: a.name,
                  ref: `guest/${a.name}`,
                  scope: 'guest',
                  ...(a.comment ? { comment: a.comment } : {}),
                })
              }
            }
            if (!want || want === 'ipset') {
              for (const s of ipsetList(conf)) {
                out.push({ type: 'ipset', ref: `+guest/${s.name}`, scope: 'guest', ...s })
              }
            }
            return out
          }),
      ],
    )
  }
  return table
}

const truthy = (v: unknown) => v === true || v === 1 || v === '1'

function aliasData(ctx: RequestContext): { name: string; cidr: string; ipversion: 4 | 6; comment?: string } {
  const name = str(ctx, 'name') ?? ''
  const cidr = str(ctx, 'cidr') ?? ''
  const data: { name: string; cidr: string; ipversion: 4 | 6; comment?: string } = {
    name,
    cidr,
    ipversion: parseIpOrCidr(cidr).version,
  }
  const comment = str(ctx, 'comment')
  if (comment) data.comment = comment
  return data
}

/** copy_rule_data: '' or '-' removes a key */
function copyRuleData(rule: FwRule, params: Record<string, unknown>): void {
  for (const k of RULE_PARAM_KEYS) {
    const v = params[k]
    if (v === undefined || v === null) continue
    const s = typeof v === 'boolean' ? (v ? 1 : 0) : v
    if (s === '' || s === '-') delete rule[k]
    else rule[k] = k === 'enable' ? Number(s) : String(s)
  }
}
