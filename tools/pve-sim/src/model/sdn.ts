import { fail500 } from './errors.js'
import { sectionDigest, underHaLock } from './ha-section.js'
import { encodeValue, type SdnIds, type SdnSection, type SdnValue } from './sdn-plugins.js'

/**
 * pve-network's SDN configuration (PVE::Network::SDN): the section config files the API edits
 * (`/etc/pve/sdn/{zones,vnets,subnets,controllers}.cfg`, the "pending" side), the running config
 * `.running-config` that `PUT /cluster/sdn` compiles from them (compile_running_cfg, with a version), and each
 * node's generated `/etc/network/interfaces.d/sdn`, whose `#version:` a node's network reload brings up to the
 * running version (Zones::read_etc_network_config_version).
 */

export type SdnKind = 'zones' | 'vnets' | 'subnets' | 'controllers'
export const SDN_KINDS: readonly SdnKind[] = ['zones', 'vnets', 'subnets', 'controllers']

type Ids = Record<SdnKind, SdnIds>
const emptyIds = (): Ids => ({ zones: new Map(), vnets: new Map(), subnets: new Map(), controllers: new Map() })
const copyIds = (ids: Ids): Ids => {
  const out = emptyIds()
  for (const k of SDN_KINDS) for (const [id, s] of ids[k]) out[k].set(id, structuredClone(s))
  return out
}

/** the object pending_config builds for one id: running values, `pending` changes and a `state` */
export type PendingEntry = Record<string, SdnValue | Record<string, SdnValue>>

/** what a node's last network reload generated: the running version and the vnets it brought up */
export interface NodeSdn {
  version: number
  vnets: Map<string, SdnSection>
  zones: SdnIds
}

export class Sdn {
  readonly config: Ids = emptyIds()
  running: { version: number; ids: Ids } | undefined
  readonly nodes = new Map<string, NodeSdn>()
  /** /etc/pve/sdn/.lock (create_global_lock), PVE 9 */
  lockToken: string | undefined

  /** the `digest` of one config file as the API hands it out */
  digest(kind: SdnKind): string {
    return sectionDigest(
      (_, s) => String(s.type),
      [...this.config[kind]].sort(([a], [b]) => (a < b ? -1 : 1)),
    )
  }

  runningIds(kind: SdnKind): SdnIds {
    return this.running?.ids[kind] ?? new Map<string, SdnSection>()
  }

  /**
   * PVE::Network::SDN::pending_config: each running object with its running values, `state` deleted/changed and
   * a `pending` map of keys that differ (`deleted` for a key the config lost); each configured object's `type`
   * (and a subnet's `vnet`) on top, the rest of a new or changed key under `pending`, `state` new for an object
   * the running config lacks.
   */
  pending(kind: SdnKind): Map<string, PendingEntry> {
    const running = this.runningIds(kind)
    const config = this.config[kind]
    const out = new Map<string, PendingEntry>()
    const entry = (id: string): PendingEntry => {
      let e = out.get(id)
      if (!e) out.set(id, (e = {}))
      return e
    }
    const pend = (e: PendingEntry): Record<string, SdnValue> => (e.pending ??= {}) as Record<string, SdnValue>
    for (const id of [...running.keys()].sort()) {
      const r = running.get(id) as SdnSection
      const c = config.get(id)
      const e = entry(id)
      for (const key of Object.keys(r).sort()) {
        e[key] = r[key] as SdnValue
        if (!c || !Object.keys(c).length) e.state = 'deleted'
        else if (c[key] === undefined) {
          pend(e)[key] = 'deleted'
          e.state = 'changed'
        } else if (encodeValue(key, r[key]) !== encodeValue(key, c[key])) e.state = 'changed'
      }
      if (e.state !== undefined) pend(e)
    }
    for (const id of [...config.keys()].sort()) {
      const r = running.get(id)
      const c = config.get(id) as SdnSection
      const e = entry(id)
      for (const key of Object.keys(c).sort()) {
        const cv = encodeValue(key, c[key])
        const rv = encodeValue(key, r?.[key])
        if (key === 'type' || key === 'vnet') e[key] = cv as string
        else if (rv === undefined || cv !== rv) pend(e)[key] = c[key] as SdnValue
        if (!r || !Object.keys(r).length) e.state = 'new'
        else if (rv === undefined && cv !== undefined) e.state = 'changed'
      }
      if (e.state !== undefined) pend(e)
    }
    return out
  }

  /** has_pending_changes: some object of the four files has a `pending` part */
  hasPendingChanges(): boolean {
    return SDN_KINDS.some((k) => [...this.pending(k).values()].some((e) => e.pending !== undefined))
  }

  /** compile_running_cfg + commit_config: the four files become the running config, its version one higher */
  commit(): number {
    const version = (this.running?.version ?? 0) + 1
    this.running = { version, ids: copyIds(this.config) }
    return version
  }

  /** the node's network reload (generate_etc_network_config): its local SDN file at the running version */
  reload(node: string): void {
    if (!this.running) return
    const { version, ids } = this.running
    const zones = new Map([...ids.zones].map(([id, z]) => [id, structuredClone(z)]))
    const vnets = new Map<string, SdnSection>()
    for (const [id, v] of ids.vnets) {
      const zone = zones.get(String(v.zone))
      if (zone && onNode(zone, node)) vnets.set(id, structuredClone(v))
    }
    this.nodes.set(node, { version, vnets, zones })
  }

  /**
   * Zones::tap_plug on `node`: a bridge that names a running vnet plugs there only when the vnet's zone may run on
   * the node and the node's reload generated it; a name no running vnet has is a classic bridge (not modelled,
   * except a vnet that exists only in the pending config: no interface of that name exists yet)
   */
  tapPlugError(node: string, bridge: string): string | undefined {
    const vnet = this.runningIds('vnets').get(bridge)
    if (!vnet) return this.config.vnets.has(bridge) ? `bridge '${bridge}' does not exist` : undefined
    const zone = this.runningIds('zones').get(String(vnet.zone))
    if (zone && !onNode(zone, node)) return `vnet ${bridge} is not allowed on this node`
    if (!this.nodes.get(node)?.vnets.has(bridge)) return `bridge '${bridge}' does not exist`
    return undefined
  }

  /** the first NIC of a starting guest's config (qemu or lxc `netN`) that cannot plug into its bridge */
  nicError(node: string, conf: Record<string, string>): string | undefined {
    const nics = Object.keys(conf)
      .filter((k) => /^net\d+$/.test(k))
      .sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)))
    for (const k of nics) {
      const bridge = /(?:^|,)bridge=([^,]+)/.exec(conf[k] ?? '')?.[1]
      const e = bridge === undefined ? undefined : this.tapPlugError(node, bridge)
      if (e) return e
    }
    return undefined
  }

  /**
   * lock_sdn_config: a held global lock needs its token, then lock_sdn_domain prefixes the locked code's error
   * with the handler's message, as lock_ha_domain does (a parameter check's exception stringified into one 500)
   */
  locked<T>(errmsg: string, token: string | undefined, code: () => T): T {
    return underHaLock(errmsg, () => {
      if (this.lockToken !== undefined && token !== this.lockToken) throw fail500('invalid lock token provided!')
      return code()
    })
  }
}

/** a zone's `nodes` (a node list; absent means every node) */
export function onNode(zone: SdnSection, node: string): boolean {
  if (zone.nodes === undefined) return true
  return String(zone.nodes)
    .split(/[,;\s]+/)
    .includes(node)
}
