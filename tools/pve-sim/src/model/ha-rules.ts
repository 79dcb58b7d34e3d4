import { createHash } from 'node:crypto'
import { PveHttpError } from '../http/types.js'
import { fail500 } from './errors.js'

/**
 * The two forms of an HA node preference: groups (`/etc/pve/ha/groups.cfg`, PVE::HA::Groups, 8.x) and rules
 * (`/etc/pve/ha/rules.cfg`, PVE::HA::Rules with its NodeAffinity and ResourceAffinity plugins, 9.x). Both are
 * section configs whose SHA-1 is the `digest` every read returns and every update may send. Writes run under
 * `lock_ha_domain`, which prefixes a failure with the handler's message (`create ha group failed: ...`).
 */

type Section = Record<string, string | number>

/** PVE::SectionConfig::assert_if_modified */
export const HA_DIGEST_MISMATCH = 'detected modified configuration - file changed by other user? Try again.'

/** PVE::HA::Config::lock_ha_domain: the locked code's error, prefixed with the handler's message */
export function underHaLock<T>(errmsg: string, code: () => T): T {
  try {
    return code()
  } catch (e) {
    if (!(e instanceof PveHttpError)) throw e
    // a PVE::Exception (the 400 of a rule check) is stringified: code, message and one line per error
    const text =
      e.status === 400 && e.errors
        ? [`400 ${e.message}`, ...Object.entries(e.errors).map(([k, v]) => `${k}: ${v}`)].join('\n')
        : e.message
    throw fail500(`${errmsg}: ${text}`)
  }
}

function sectionDigest(kind: (id: string, s: Section) => string, ids: Map<string, Section>): string {
  let text = ''
  for (const id of [...ids.keys()].sort()) {
    const s = ids.get(id) as Section
    text += `${kind(id, s)}: ${id}\n`
    for (const k of Object.keys(s).sort()) if (k !== 'type') text += `\t${k} ${String(s[k])}\n`
    text += '\n'
  }
  return createHash('sha1').update(text).digest('hex')
}

/** `node[:priority]` entries (PVE::HA::Tools::parse_node_priority); the last entry of a node wins */
export function parseNodeList(value: string): Map<string, number | undefined> {
  const out = new Map<string, number | undefined>()
  for (const entry of value.split(/[,;\s]+/).filter(Boolean)) {
    const [node, prio] = entry.split(':') as [string, string | undefined]
    out.set(node, prio === undefined ? undefined : Number(prio))
  }
  return out
}

const flag = (v: unknown): number => (v === true || v === 1 || v === '1' ? 1 : 0)

/**
 * PVE::API2::HA::Groups (8.x; on 9.x the API dies once the groups are migrated). Node names are not checked
 * against the cluster (pve-ha-group-node-list only checks their form). `nodes` is read back as Perl's hash
 * key order (`encode_value` joins `keys %$value`): the simulator lists them in reverse name order, so no
 * client may rely on the order it wrote.
 */
export class HaGroups {
  readonly ids = new Map<string, Section>()

  digest(): string {
    return sectionDigest(() => 'group', this.ids)
  }

  item(group: string): Record<string, unknown> {
    const g = this.ids.get(group)
    if (!g) throw fail500(`no such ha group '${group}'`)
    const nodes = [...parseNodeList(String(g.nodes ?? ''))]
      .sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))
      .map(([n, p]) => (p === undefined ? n : `${n}:${p}`))
      .join(',')
    return { ...g, nodes, group, type: 'group', digest: this.digest() }
  }

  list(): Record<string, unknown>[] {
    return [...this.ids.keys()].sort().map((g) => this.item(g))
  }

  create(params: Record<string, unknown>): null {
    const group = String(params.group)
    if (params.type !== undefined && params.type !== 'group') throw fail500('types does not match')
    const conf = this.options(params, {})
    return underHaLock('create ha group failed', () => {
      if (this.ids.has(group)) throw fail500(`ha group ID '${group}' already defined`)
      this.ids.set(group, conf)
      return null
    })
  }

  update(params: Record<string, unknown>): null {
    const group = String(params.group)
    if (params.type !== undefined && params.type !== 'group') throw fail500('types does not match')
    return underHaLock('update ha group failed', () => {
      if (params.digest !== undefined && String(params.digest) !== this.digest()) throw fail500(HA_DIGEST_MISMATCH)
      const conf = this.ids.get(group)
      if (!conf) throw fail500(`no such ha group '${group}'`)
      this.options(params, conf)
      for (const k of splitList(params.delete)) {
        if (!['nodes', 'comment', 'nofailback', 'restricted'].includes(k)) throw fail500(`no such option '${k}'`)
        if (k === 'nodes') throw fail500(`unable to delete required option '${k}'`)
        delete conf[k]
      }
      return null
    })
  }

  /** delete: refused while a resource names the group */
  remove(group: string, usedBy: (group: string) => string | undefined): null {
    return underHaLock('delete ha group failed', () => {
      const sid = usedBy(group)
      if (sid !== undefined) throw fail500(`ha group is used by service '${sid}'`)
      this.ids.delete(group)
      return null
    })
  }

  private options(params: Record<string, unknown>, conf: Section): Section {
    if (params.nodes !== undefined) conf.nodes = String(params.nodes)
    for (const k of ['restricted', 'nofailback'] as const) if (params[k] !== undefined) conf[k] = flag(params[k])
    if (params.comment !== undefined) conf.comment = String(params.comment)
    return conf
  }
}

const splitList = (v: unknown): string[] =>
  String(v ?? '')
    .split(/[,;\s]+/)
    .filter(Boolean)

const RULE_OPTIONS: Record<string, readonly string[]> = {
  'node-affinity': ['resources', 'nodes', 'strict', 'disable', 'comment'],
  'resource-affinity': ['resources', 'affinity', 'disable', 'comment'],
}
const RULE_REQUIRED: Record<string, readonly string[]> = {
  'node-affinity': ['resources', 'nodes'],
  'resource-affinity': ['resources', 'affinity'],
}

export interface RuleEnv {
  /** PVE::HA::Config::service_is_configured */
  configured(sid: string): boolean
  /** PVE::Cluster::check_node_exists */
  nodeExists(node: string): boolean
  /** PVE::HA::Config::parse_sid */
  sid(value: string): string
}

/**
 * PVE::API2::HA::Rules (9.x). Each rule keeps its `order` (get_next_ordinal). Creates and updates check that
 * every resource is configured and every node exists, then run the feasibility checks on the whole rule set
 * (check_feasibility; of them the simulator models NodeAffinity's check_single_resource_reference: a
 * resource in two enabled node-affinity rules) and refuse the rule they blame with a 400 `Rule '...' is
 * invalid.`, which lock_ha_domain turns into a 500 carrying the error lines.
 */
export class HaRules {
  readonly ids = new Map<string, Section>()
  private readonly order = new Map<string, number>()

  digest(): string {
    return sectionDigest((_, s) => String(s.type), this.ids)
  }

  /** $get_api_ha_rule: sorted `resources`, `nodes` sorted by name (`node:prio`, a priority of 0 left out) */
  item(rule: string): Record<string, unknown> {
    const r = this.ids.get(rule)
    if (!r) throw fail500(`no such ha rule '${rule}'`)
    const out: Record<string, unknown> = { ...r, rule, digest: this.digest(), order: this.order.get(rule) }
    out.resources = splitList(r.resources).sort().join(',')
    if (r.nodes !== undefined)
      out.nodes = [...parseNodeList(String(r.nodes))]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([n, p]) => (p ? `${n}:${p}` : n))
        .join(',')
    return out
  }

  /** index: sorted by order (foreach_rule with sorted => 1), `type` and `resource` filters */
  list(type?: string, resource?: string): Record<string, unknown>[] {
    return [...this.ids.keys()]
      .sort((a, b) => (this.order.get(a) ?? 0) - (this.order.get(b) ?? 0) || (a < b ? -1 : 1))
      .filter((id) => type === undefined || this.ids.get(id)?.type === type)
      .filter((id) => resource === undefined || splitList(this.ids.get(id)?.resources).includes(resource))
      .map((id) => this.item(id))
  }

  create(params: Record<string, unknown>, env: RuleEnv): null {
    const rule = String(params.rule)
    const type = String(params.type)
    const conf: Section = { type }
    this.assign(conf, type, params, env)
    for (const k of RULE_REQUIRED[type] ?? [])
      if (conf[k] === undefined)
        throw new PveHttpError(400, 'Parameter verification failed.', {
          [k]: 'property is missing and it is not optional',
        })
    return underHaLock('create ha rule failed', () => {
      if (this.ids.has(rule)) throw fail500(`HA rule '${rule}' already defined`)
      this.checkRefs(conf, env)
      const next = Math.max(0, ...this.order.values()) + 1
      this.ids.set(rule, conf)
      this.order.set(rule, next)
      try {
        this.assertFeasible(rule)
      } catch (e) {
        this.ids.delete(rule)
        this.order.delete(rule)
        throw e
      }
      return null
    })
  }

  update(params: Record<string, unknown>, env: RuleEnv): null {
    const rule = String(params.rule)
    return underHaLock('update HA rules failed', () => {
      if (params.digest !== undefined && String(params.digest) !== this.digest()) throw fail500(HA_DIGEST_MISMATCH)
      const conf = this.ids.get(rule)
      if (!conf) throw fail500(`HA rule '${rule}' does not exist`)
      const type = String(conf.type)
      if (params.type !== undefined && params.type !== type) throw fail500('types does not match')
      const before = { ...conf }
      const next: Section = { ...conf }
      this.assign(next, type, params, env)
      this.checkRefs(next, env, params)
      for (const k of splitList(params.delete)) {
        if (!(RULE_OPTIONS[type] ?? []).includes(k)) throw fail500(`no such option '${k}'`)
        if ((RULE_REQUIRED[type] ?? []).includes(k)) throw fail500(`unable to delete required option '${k}'`)
        delete next[k]
      }
      this.ids.set(rule, next)
      try {
        this.assertFeasible(rule)
      } catch (e) {
        this.ids.set(rule, before)
        throw e
      }
      return null
    })
  }

  /** delete_rule: no error for a rule that does not exist */
  remove(rule: string): null {
    return underHaLock('delete ha rule failed', () => {
      this.ids.delete(rule)
      this.order.delete(rule)
      return null
    })
  }

  /** delete_service_from_config with purge: the resource leaves every rule; a rule left empty goes */
  purge(sid: string): void {
    for (const [id, r] of this.ids) {
      const left = splitList(r.resources).filter((s) => s !== sid)
      if (left.length === 0) {
        this.ids.delete(id)
        this.order.delete(id)
      } else r.resources = left.join(',')
    }
  }

  private assign(conf: Section, type: string, params: Record<string, unknown>, env: RuleEnv): void {
    const allowed = RULE_OPTIONS[type] ?? []
    for (const k of allowed) {
      const v = params[k]
      if (v === undefined) continue
      if (k === 'resources') conf.resources = [...new Set(splitList(v).map((s) => env.sid(s)))].sort().join(',')
      else if (k === 'strict') conf.strict = flag(v)
      else if (k === 'disable') {
        // `delete $param->{disable} if !$param->{disable}`: disable=0 is not stored
        if (flag(v) === 1) conf.disable = 1
      } else conf[k] = String(v)
    }
    for (const k of Object.keys(params)) {
      if (['rule', 'type', 'digest', 'delete', ...allowed].includes(k)) continue
      throw new PveHttpError(400, 'Parameter verification failed.', {
        [k]: `property is not defined in schema and the schema does not allow additional properties`,
      })
    }
  }

  /** $assert_valid_resources_param / $assert_valid_nodes_param, for what the call sets */
  private checkRefs(conf: Section, env: RuleEnv, params?: Record<string, unknown>): void {
    if (params === undefined || params.resources !== undefined) {
      const resources = splitList(conf.resources)
      if (resources.length === 0) throw fail500('no resources were specified')
      const unmanaged = resources.filter((s) => !env.configured(s)).sort()
      if (unmanaged.length > 0) throw fail500(`cannot use unmanaged resource(s) ${unmanaged.join(', ')}.`)
    }
    if (conf.nodes !== undefined && (params === undefined || params.nodes !== undefined)) {
      const nodes = [...parseNodeList(String(conf.nodes)).keys()]
      if (nodes.length === 0) throw fail500('no nodes were specified')
      const missing = nodes.filter((n) => !env.nodeExists(n)).sort()
      if (missing.length > 0) throw fail500(`cannot use non-existent node(s) ${missing.join(', ')}.`)
    }
  }

  /** $assert_feasibility: NodeAffinity check_single_resource_reference over the enabled node-affinity rules */
  private assertFeasible(rule: string): void {
    const owners = new Map<string, string[]>()
    for (const [id, r] of this.ids) {
      if (r.type !== 'node-affinity' || r.disable === 1) continue
      for (const sid of splitList(r.resources)) owners.set(sid, [...(owners.get(sid) ?? []), id])
    }
    const errors: string[] = []
    for (const [sid, ids] of [...owners].sort(([a], [b]) => (a < b ? -1 : 1)))
      if (ids.length > 1 && ids.includes(rule))
        errors.push(`resource '${sid}' is already used in another node affinity rule`)
    if (errors.length > 0) throw new PveHttpError(400, `Rule '${rule}' is invalid.`, { resources: errors.join(', ') })
  }
}
