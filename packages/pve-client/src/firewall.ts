/**
 * Guest firewall reads and writes (`/nodes/{node}/{qemu|lxc}/{vmid}/firewall/*`, pve-firewall's
 * PVE::API2::Firewall::VM / CT): the decoded sections with their digests, and each write as its PVE call.
 * Rule positions and ipset cidrs go into the path; a cidr's `/` is percent-encoded by the transport and PVE's
 * handler takes the rest of the path (empty fragment delimiter).
 */
import { decodeWith, list, obj } from './decode.js'
import type { GetFn } from './tasks.js'
import type { Method, Params } from './transport.js'
import type { FirewallWrite, GuestFirewall, GuestType } from './wire/types.js'
import { optStr, toBool, toKey, toPosition, toStr } from './wire/scalars.js'

const base = (type: GuestType) => `/nodes/{node}/${type}/{vmid}/firewall`
/** the keys of a rule that are not rule data */
const RULE_META = new Set(['pos', 'digest', 'ipversion', 'errors'])

const digestOf = (rows: Record<string, unknown>[], what: string): string =>
  rows.length > 0 ? toStr(rows[0]?.digest, `${what}.digest`) : ''

export async function readGuestFirewall(
  get: GetFn,
  node: string,
  type: GuestType,
  vmid: number,
): Promise<GuestFirewall> {
  const p = base(type)
  const pathParams = { node, vmid }
  const [options, rules, aliases, ipsets] = await Promise.all([
    get({ path: `${p}/options`, pathParams }),
    get({ path: `${p}/rules`, pathParams }),
    get({ path: `${p}/aliases`, pathParams }),
    get({ path: `${p}/ipset`, pathParams }),
  ])
  const sets = decodeWith(`GET ${p}/ipset`, () => list(ipsets, 'ipset'))
  const entries = await Promise.all(
    sets.map((s) =>
      get({ path: `${p}/ipset/{name}`, pathParams: { ...pathParams, name: toStr(s.name, 'ipset.name') } }),
    ),
  )
  return decodeWith(`GET ${p}`, () => {
    const o = obj(options, 'options')
    const opts: Record<string, string> = {}
    for (const [k, v] of Object.entries(o)) if (k !== 'digest' && v !== null && v !== undefined) opts[k] = toStr(v, k)
    const ruleRows = list(rules, 'rules')
    const aliasRows = list(aliases, 'aliases')
    const out: GuestFirewall = {
      options: opts,
      optionsDigest: optStr(o.digest, 'options.digest') ?? '',
      rules: ruleRows.map((r, i) => {
        // a rule is written back by its position and read by its type (pve-firewall's rule list always has both)
        toPosition(r.pos, `rules[${i}].pos`)
        toKey(r.type, `rules[${i}].type`)
        const rule: Record<string, string> = {}
        for (const [k, v] of Object.entries(r)) {
          if (RULE_META.has(k) || v === null || v === undefined || typeof v === 'object') continue
          rule[k] = toStr(v, `rules.${k}`)
        }
        return rule
      }),
      rulesDigest: digestOf(ruleRows, 'rules'),
      aliases: aliasRows.map((a) => {
        const comment = optStr(a.comment, 'aliases.comment')
        return {
          name: toKey(a.name, 'aliases.name'),
          cidr: toKey(a.cidr, 'aliases.cidr'),
          ...(comment ? { comment } : {}),
        }
      }),
      aliasesDigest: digestOf(aliasRows, 'aliases'),
      ipsets: sets.map((s, i) => {
        const rows = list(entries[i], 'ipset entries')
        const comment = optStr(s.comment, 'ipset.comment')
        return {
          name: toKey(s.name, 'ipset.name'),
          ...(comment ? { comment } : {}),
          entries: rows.map((e) => {
            const c = optStr(e.comment, 'entry.comment')
            return {
              cidr: toKey(e.cidr, 'entry.cidr'),
              nomatch: e.nomatch == null ? false : toBool(e.nomatch, 'entry.nomatch'),
              ...(c ? { comment: c } : {}),
            }
          }),
          digest: digestOf(rows, 'ipset entries'),
        }
      }),
      ipsetsDigest: digestOf(sets, 'ipset'),
    }
    return out
  })
}

export interface FirewallCall {
  method: Exclude<Method, 'GET'>
  path: string
  pathParams: Record<string, string | number>
  params: Params
}

const opt = (k: string, v: string | undefined): Params => (v === undefined ? {} : { [k]: v })

/** The PVE call one write is. */
export function firewallCall(node: string, type: GuestType, vmid: number, w: FirewallWrite): FirewallCall {
  const p = base(type)
  const pp = { node, vmid }
  const digest = 'digest' in w ? opt('digest', w.digest) : {}
  switch (w.op) {
    case 'options':
      return { method: 'PUT', path: `${p}/options`, pathParams: pp, params: { ...w.set, ...digest } }
    case 'rule-create':
      return { method: 'POST', path: `${p}/rules`, pathParams: pp, params: { ...w.rule } }
    case 'rule-update':
      return {
        method: 'PUT',
        path: `${p}/rules/{pos}`,
        pathParams: { ...pp, pos: w.pos },
        params: { ...w.set, ...(w.delete.length ? { delete: w.delete.join(',') } : {}), ...digest },
      }
    case 'rule-move':
      return {
        method: 'PUT',
        path: `${p}/rules/{pos}`,
        pathParams: { ...pp, pos: w.pos },
        params: { moveto: w.moveto, ...digest },
      }
    case 'rule-delete':
      return { method: 'DELETE', path: `${p}/rules/{pos}`, pathParams: { ...pp, pos: w.pos }, params: { ...digest } }
    case 'alias-create':
      return {
        method: 'POST',
        path: `${p}/aliases`,
        pathParams: pp,
        params: { name: w.name, cidr: w.cidr, ...opt('comment', w.comment) },
      }
    case 'alias-update':
      return {
        method: 'PUT',
        path: `${p}/aliases/{name}`,
        pathParams: { ...pp, name: w.name },
        // update_alias keeps the name's new spelling through `rename`
        params: { cidr: w.cidr, rename: w.name, ...opt('comment', w.comment), ...digest },
      }
    case 'alias-delete':
      return {
        method: 'DELETE',
        path: `${p}/aliases/{name}`,
        pathParams: { ...pp, name: w.name },
        params: { ...digest },
      }
    case 'ipset-create':
      return {
        method: 'POST',
        path: `${p}/ipset`,
        pathParams: pp,
        params: { name: w.name, ...opt('comment', w.comment) },
      }
    case 'ipset-comment':
      // create_ipset with rename = name only sets the comment
      return {
        method: 'POST',
        path: `${p}/ipset`,
        pathParams: pp,
        params: { name: w.name, rename: w.name, comment: w.comment, ...digest },
      }
    case 'ipset-delete':
      return { method: 'DELETE', path: `${p}/ipset/{name}`, pathParams: { ...pp, name: w.name }, params: { force: 1 } }
    case 'ipset-add':
      return {
        method: 'POST',
        path: `${p}/ipset/{name}`,
        pathParams: { ...pp, name: w.name },
        params: { cidr: w.cidr, ...(w.nomatch ? { nomatch: 1 } : {}), ...opt('comment', w.comment) },
      }
    case 'ipset-update':
      return {
        method: 'PUT',
        path: `${p}/ipset/{name}/{cidr}`,
        pathParams: { ...pp, name: w.name, cidr: w.cidr },
        params: { nomatch: w.nomatch ? 1 : 0, ...opt('comment', w.comment), ...digest },
      }
    case 'ipset-remove':
      return {
        method: 'DELETE',
        path: `${p}/ipset/{name}/{cidr}`,
        pathParams: { ...pp, name: w.name, cidr: w.cidr },
        params: { ...digest },
      }
  }
}
