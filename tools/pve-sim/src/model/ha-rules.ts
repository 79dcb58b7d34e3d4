import { fail500, PveHttpError } from './errors.js'
import { checkFeasibility, type RuleErrors, type RuleView } from './ha-feasibility.js'
import type { ServiceAffinity } from './ha-manager.js'
import { assertDigest, bit, checkConfig, deleteOptions, sectionDigest, splitList, underHaLock } from './ha-section.js'
import type { Section, SectionOptions } from './ha-section.js'

/**
 * HA rules (`/etc/pve/ha/rules.cfg`, PVE 9.x): PVE::API2::HA::Rules over PVE::HA::Rules and its NodeAffinity and
 * ResourceAffinity plugins. The file keeps the rules in order; `order` is a rule's place in it, as parse_config
 * numbers the sections. Each rule is stored as write_config writes it (resources sorted, nodes sorted with
 * `:prio`), so its text gives the `digest`.
 */

/** each plugin's options() (PVE::HA::Rules::NodeAffinity, ::ResourceAffinity) */
const RULE_OPTIONS: Record<string, SectionOptions> = {
  'node-affinity': { resources: false, nodes: false, strict: true, disable: true, comment: true },
  'resource-affinity': { resources: false, affinity: false, disable: true, comment: true },
}

export interface RuleEnv {
  /** PVE::HA::Config::service_is_configured */
  configured(sid: string): boolean
  /** PVE::Cluster::check_node_exists */
  nodeExists(node: string): boolean
  /** the nodes of the manager status (`node_status`), which the feasibility checks count */
  nodes(): string[]
}

/** PVE::HA::Rules decode_value `resources`: split_list, entries that are no `type:name` dropped, sorted, unique */
function decodeResources(value: unknown): string[] {
  return [...new Set(splitList(value).filter((sid) => /^[a-z]+:\S+$/.test(sid)))].sort()
}

/**
 * NodeAffinity decode_plugin_value `nodes` (parse_node_priority, the last entry of a node wins; a bad entry is
 * dropped) and encode_plugin_value (sorted by node, `node:prio` unless the priority is 0)
 */
export function decodeNodes(value: unknown): Map<string, number> {
  const out = new Map<string, number>()
  for (const entry of splitList(value)) {
    const m = /^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)(:(\d+))?$/.exec(entry)
    if (m) out.set(m[1] as string, Number(m[4] ?? 0))
  }
  return out
}
const encodeNodes = (nodes: Map<string, number>): string =>
  [...nodes]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([n, p]) => (p ? `${n}:${p}` : n))
    .join(',')

/** PVE::HA::Rules->lookup */
function optionsOf(type: string): SectionOptions {
  const options = RULE_OPTIONS[type]
  if (!options) throw fail500(`unknown section type '${type}'`)
  return options
}

export class HaRules {
  readonly ids = new Map<string, Section>()
  /** the rules in file order: `order` is the place (1-based) */
  private file: string[] = []

  digest(): string {
    return sectionDigest(
      (_, s) => String(s.type),
      this.file.map((id) => [id, this.ids.get(id) as Section]),
    )
  }

  /** PVE::HA::Rules->check_feasibility over the whole rule set (the manager's nodes) */
  feasibility(env: Pick<RuleEnv, 'nodes'>): RuleErrors {
    const views: RuleView[] = this.file.map((id) => {
      const r = this.ids.get(id) as Section
      const view: RuleView = {
        id,
        type: String(r.type),
        resources: new Set(splitList(r.resources)),
        disabled: r.disable !== undefined,
      }
      if (r.nodes !== undefined) view.nodes = decodeNodes(r.nodes)
      if (r.affinity !== undefined) view.affinity = String(r.affinity)
      return view
    })
    return checkFeasibility(views, env.nodes())
  }

  /** $get_api_ha_rule: the stored options, `rule`, `digest`, `order`, and `errors` when the checks blame it */
  item(rule: string, errors?: RuleErrors): Record<string, unknown> {
    const r = this.ids.get(rule)
    if (!r) throw fail500(`no such ha rule '${rule}'`)
    const out: Record<string, unknown> = { ...r, rule, digest: this.digest(), order: this.file.indexOf(rule) + 1 }
    const blamed = errors?.get(rule)
    if (blamed) out.errors = Object.fromEntries(blamed)
    return out
  }

  read(rule: string, env: RuleEnv): Record<string, unknown> {
    return this.item(rule, this.feasibility(env))
  }

  /** index: in file order (foreach_rule with sorted => 1), `type` and `resource` filters, each with its `errors` */
  list(env: RuleEnv, type?: string, resource?: string): Record<string, unknown>[] {
    const errors = this.feasibility(env)
    return this.file
      .filter((id) => type === undefined || this.ids.get(id)?.type === type)
      .filter((id) => resource === undefined || splitList(this.ids.get(id)?.resources).includes(resource))
      .map((id) => this.item(id, errors))
  }

  /**
   * create_rule: check_config before the lock, then under it: the id is free, resources are configured and nodes
   * exist, the rule takes get_next_ordinal's place, and the feasibility checks must not blame it
   */
  create(params: Record<string, unknown>, env: RuleEnv): null {
    const { rule: ruleParam, type: typeParam, ...rest } = params
    const rule = String(ruleParam)
    const type = String(typeParam)
    // `delete $param->{disable} if !$param->{disable}`
    if (!bit(rest.disable)) delete rest.disable
    const opts = checkConfig(type, optionsOf(type), rest, true)
    return underHaLock('create ha rule failed', () => {
      if (this.ids.has(rule)) throw fail500(`HA rule '${rule}' already defined`)
      const conf = this.decode(type, opts)
      this.assertResources(conf, env)
      if (conf.nodes !== undefined) this.assertNodes(conf, env)
      const before = [...this.file]
      this.ids.set(rule, conf)
      this.file.splice(this.nextPlace(), 0, rule)
      this.commitIfFeasible(rule, env, () => {
        this.ids.delete(rule)
        this.file = before
      })
      return null
    })
  }

  /**
   * update_rule: under the lock the digest, the rule, check_config (a `type` other than the rule's is an
   * unexpected property), the resources and nodes given, delete_from_config, then the feasibility checks
   */
  update(params: Record<string, unknown>, env: RuleEnv): null {
    const { rule: ruleParam, digest, delete: del, ...rest } = params
    const rule = String(ruleParam)
    if (!bit(rest.disable)) delete rest.disable
    return underHaLock('update HA rules failed', () => {
      assertDigest(digest, this.digest())
      const conf = this.ids.get(rule)
      if (!conf) throw fail500(`HA rule '${rule}' does not exist`)
      const type = String(conf.type)
      const options = optionsOf(type)
      const opts = checkConfig(type, options, rest, false)
      const set = this.decode(type, opts)
      if (set.resources !== undefined) this.assertResources(set, env)
      if (set.nodes !== undefined) this.assertNodes(set, env)
      const next: Section = { ...conf }
      deleteOptions(next, options, opts, del, true)
      Object.assign(next, set)
      this.ids.set(rule, next)
      this.commitIfFeasible(rule, env, () => this.ids.set(rule, conf))
      return null
    })
  }

  /** delete_rule: no error for a rule that does not exist */
  remove(rule: string): null {
    return underHaLock('delete ha rule failed', () => {
      this.drop(rule)
      return null
    })
  }

  /**
   * PVE::HA::Rules->compile for one resource, over the enabled rules in file order: NodeAffinity plugin_compile (the
   * rule's nodes and priorities, every other cluster node at -1 unless `strict`; a later rule wins) and
   * ResourceAffinity plugin_compile (the other resources of each positive and negative rule)
   */
  compile(sid: string, nodes: readonly string[]): ServiceAffinity {
    const out: { nodes?: Map<string, number>; together: Set<string>; separate: Set<string> } = {
      together: new Set(),
      separate: new Set(),
    }
    for (const id of this.file) {
      const r = this.ids.get(id) as Section
      const resources = splitList(r.resources)
      if (bit(r.disable) || !resources.includes(sid)) continue
      if (r.type === 'node-affinity') {
        const effective = new Map(decodeNodes(r.nodes))
        if (!bit(r.strict)) for (const n of nodes) if (!effective.has(n)) effective.set(n, -1)
        out.nodes = effective
      } else if (r.type === 'resource-affinity') {
        const set = r.affinity === 'positive' ? out.together : out.separate
        for (const other of resources) if (other !== sid) set.add(other)
      }
    }
    return out
  }

  /** delete_service_from_config with purge: the resource leaves every rule; a rule left empty goes */
  purge(sid: string): void {
    for (const id of [...this.file]) {
      const r = this.ids.get(id) as Section
      const left = splitList(r.resources).filter((s) => s !== sid)
      if (left.length === 0) this.drop(id)
      else r.resources = left.join(',')
    }
  }

  private drop(rule: string): void {
    this.ids.delete(rule)
    this.file = this.file.filter((id) => id !== rule)
  }

  /**
   * PVE::HA::Rules::get_next_ordinal: the *smallest* order plus one, so a new rule ties with the second rule of
   * the file (or is first in an empty one); write_config sorts by order and breaks the tie in Perl hash order.
   * The simulator puts the new rule second: a client must not take the list's order for creation order.
   */
  private nextPlace(): number {
    return Math.min(1, this.file.length)
  }

  /** $assert_feasibility: a PVE::Exception 400 `Rule '<id>' is invalid.` with the blamed options' messages joined */
  private commitIfFeasible(rule: string, env: RuleEnv, undo: () => void): void {
    const blamed = this.feasibility(env).get(rule)
    if (!blamed) return
    undo()
    throw new PveHttpError(
      400,
      `Rule '${rule}' is invalid.`,
      Object.fromEntries([...blamed].map(([opt, messages]) => [opt, messages.join(', ')])),
    )
  }

  /** check_config's decode_value, into the form write_config writes */
  private decode(type: string, opts: Record<string, unknown>): Section {
    const out: Section = { type }
    for (const [k, v] of Object.entries(opts)) {
      if (k === 'resources') out.resources = decodeResources(v).join(',')
      else if (k === 'nodes') out.nodes = encodeNodes(decodeNodes(v))
      else if (k === 'strict' || k === 'disable') out[k] = bit(v)
      else out[k] = String(v)
    }
    return out
  }

  /** $assert_valid_resources_param */
  private assertResources(conf: Section, env: RuleEnv): void {
    const resources = splitList(conf.resources)
    if (resources.length === 0) throw fail500('no resources were specified')
    const unmanaged = resources.filter((s) => !env.configured(s))
    if (unmanaged.length > 0) throw fail500(`cannot use unmanaged resource(s) ${unmanaged.join(', ')}.`)
  }

  /** $assert_valid_nodes_param */
  private assertNodes(conf: Section, env: RuleEnv): void {
    const nodes = [...decodeNodes(conf.nodes).keys()].sort()
    if (nodes.length === 0) throw fail500('no nodes were specified')
    const missing = nodes.filter((n) => !env.nodeExists(n))
    if (missing.length > 0) throw fail500(`cannot use non-existent node(s) ${missing.join(', ')}.`)
  }
}
