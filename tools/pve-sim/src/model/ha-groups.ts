import { fail500 } from './errors.js'
import { assertDigest, bit, checkConfig, deleteOptions, sectionDigest, splitList, underHaLock } from './ha-section.js'
import type { Section, SectionOptions } from './ha-section.js'

/** PVE::HA::Groups->options() */
const GROUP_OPTIONS: SectionOptions = { nodes: false, comment: true, nofailback: true, restricted: true }

/**
 * PVE::HA::Groups decode_value: `nodes` is a set of its entries as written (`pve1:2` and `pve1:3` are two
 * entries; entries that are not `node[:prio]` are dropped, pve_verify_ha_node with noerr)
 */
function groupNodes(value: unknown): string[] {
  return [...new Set(splitList(value).filter((e) => /^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)(:\d+)?$/.test(e)))]
}

/**
 * PVE::API2::HA::Groups (8.x; on 9.x the API dies once the groups are migrated, see api/ha.ts). Node names are
 * not checked against the cluster (the format only checks their form). `nodes` is read back as Perl's hash key
 * order (`encode_value` joins `keys %$value`): the simulator lists the entries in reverse order, so no client
 * may rely on the order it wrote. Groups constrain nothing else: a resource names a group by its id only.
 */
export class HaGroups {
  readonly ids = new Map<string, Section>()

  digest(): string {
    return sectionDigest(
      () => 'group',
      [...this.ids].sort(([a], [b]) => (a < b ? -1 : 1)),
    )
  }

  /** $api_copy_config */
  item(group: string): Record<string, unknown> {
    const g = this.ids.get(group)
    if (!g) throw fail500(`no such ha group '${group}'`)
    const nodes = String(g.nodes ?? '')
      .split(',')
      .filter(Boolean)
      .sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
      .join(',')
    return { ...g, nodes, group, type: 'group', digest: this.digest() }
  }

  list(): Record<string, unknown>[] {
    return [...this.ids.keys()].sort().map((g) => this.item(g))
  }

  /**
   * PVE::HA::Groups::migrate_groups_to_rules, as the manager reads a group: its nodes with their priorities
   * (`node:prio`, 0 when not given), every other cluster node at -1 unless `restricted`; and `failback` unless
   * `nofailback` (migrate_groups_to_resources)
   */
  placement(group: string, nodes: readonly string[]): { nodes: Map<string, number>; failback: boolean } | undefined {
    const g = this.ids.get(group)
    if (!g) return undefined
    const out = new Map<string, number>()
    for (const entry of String(g.nodes ?? '').split(',')) {
      const m = /^([^:]+)(?::(\d+))?$/.exec(entry)
      if (m) out.set(m[1] as string, Number(m[2] ?? 0))
    }
    if (!bit(g.restricted)) for (const n of nodes) if (!out.has(n)) out.set(n, -1)
    return { nodes: out, failback: !bit(g.nofailback) }
  }

  /** create: `type` must be `group`; check_config (create: `nodes` required) before the lock */
  create(params: Record<string, unknown>): null {
    const { group, type, ...rest } = params
    if (type !== undefined && type !== 'group') throw fail500('types does not match')
    const conf = this.decode(checkConfig('group', GROUP_OPTIONS, rest, true))
    return underHaLock('create ha group failed', () => {
      if (this.ids.has(String(group))) throw fail500(`ha group ID '${String(group)}' already defined`)
      this.ids.set(String(group), conf)
      return null
    })
  }

  /** update: digest, the group, check_config, the options set, then `delete` (no set-and-delete check here) */
  update(params: Record<string, unknown>): null {
    const { group, type, digest, delete: del, ...rest } = params
    if (type !== undefined && type !== 'group') throw fail500('types does not match')
    return underHaLock('update ha group failed', () => {
      assertDigest(digest, this.digest())
      const conf = this.ids.get(String(group))
      if (!conf) throw fail500(`no such ha group '${String(group)}'`)
      const next = { ...conf, ...this.decode(checkConfig('group', GROUP_OPTIONS, rest, false)) }
      deleteOptions(next, GROUP_OPTIONS, rest, del, false)
      this.ids.set(String(group), next)
      return null
    })
  }

  /** delete: refused while a resource names the group; a group that does not exist is no error */
  remove(group: string, usedBy: (group: string) => string | undefined): null {
    return underHaLock('delete ha group failed', () => {
      const sid = usedBy(group)
      if (sid !== undefined) throw fail500(`ha group is used by service '${sid}'`)
      this.ids.delete(group)
      return null
    })
  }

  private decode(opts: Record<string, unknown>): Section {
    const out: Section = {}
    if (opts.nodes !== undefined) out.nodes = groupNodes(opts.nodes).join(',')
    for (const k of ['restricted', 'nofailback'] as const) if (opts[k] !== undefined) out[k] = bit(opts[k])
    if (opts.comment !== undefined) out.comment = String(opts.comment)
    return out
  }
}
