/**
 * What the handlers of pve-network's SDN object APIs share (PVE::API2::Network::SDN::Zones, ::Vnets, ::Subnets,
 * ::Controllers): the index and read with `pending` (pending_config) or `running`, check_config of a plugin's
 * options with the values stored as SectionConfig's check_value stores them, and `delete` with
 * delete_from_config.
 */
import type { RequestContext } from '../http/types.js'
import type { Cluster } from '../model/cluster.js'
import { fail500 } from '../model/errors.js'
import { checkConfig, deleteOptions, HA_DIGEST_MISMATCH, splitList, type SectionOptions } from '../model/ha-section.js'
import { flag } from '../model/guestconf.js'
import { SDN_BOOLEANS, SDN_INTEGERS, type SdnSection, type SdnValue } from '../model/sdn-plugins.js'
import type { SdnKind } from '../model/sdn.js'
import { bool, str } from './params.js'

type Item = Record<string, unknown>

/** the parameters a handler extracts before check_config */
const EXTRACTED = new Set(['digest', 'delete', 'lock-token'])

/** check_config on `params` (less the id key and the extracted ones), values stored as check_value does */
export function sdnOptions(
  type: string,
  options: SectionOptions,
  params: Record<string, unknown>,
  idKey: string,
  create: boolean,
): SdnSection {
  const given = Object.fromEntries(Object.entries(params).filter(([k]) => k !== idKey && !EXTRACTED.has(k)))
  const checked = checkConfig(type, options, given, create)
  const out: SdnSection = create ? { type } : {}
  for (const [k, v] of Object.entries(checked)) out[k] = storeValue(k, v)
  return out
}

function storeValue(key: string, v: unknown): SdnValue {
  if (SDN_BOOLEANS.has(key)) return flag(v) ? 1 : 0
  if (SDN_INTEGERS.has(key)) return Number(v)
  if (Array.isArray(v)) return v.map(String)
  return String(v)
}

/** PVE::SectionConfig::assert_if_modified */
export function assertSdnDigest(current: string, given: unknown): void {
  if (given !== undefined && given !== null && String(given) !== current) throw fail500(HA_DIGEST_MISMATCH)
}

/** an update: the plugin's options set, `delete` through delete_from_config; answers the options set */
export function applyUpdate(
  section: SdnSection,
  options: SectionOptions,
  params: Record<string, unknown>,
  idKey: string,
): SdnSection {
  const set = sdnOptions(String(section.type), options, params, idKey, false)
  const del = splitList(params.delete)
  if (del.length) deleteOptions(section, options, set, del, true)
  Object.assign(section, set)
  return set
}

/**
 * The object lists of an index or read: the config file (with its digest), `running` (the running config's
 * objects), or `pending` (pending_config: `state` and `pending` per object, no digest)
 */
export function sdnView(c: Cluster, kind: SdnKind, ctx: RequestContext): Map<string, Item> {
  const sdn = c.sdn
  if (bool(ctx, 'pending')) return sdn.pending(kind)
  if (bool(ctx, 'running')) return sdn.runningIds(kind)
  const digest = sdn.digest(kind)
  return new Map([...sdn.config[kind]].map(([id, s]) => [id, { ...s, digest }]))
}

/** the lock token a handler passes to lock_sdn_config */
export const lockToken = (ctx: RequestContext): string | undefined => str(ctx, 'lock-token')

export const sortedIds = <T>(m: Map<string, T>): [string, T][] => [...m].sort(([a], [b]) => (a < b ? -1 : 1))

/** the object's name in the handlers' messages */
const NOUN: Record<SdnKind, string> = { zones: 'zone', vnets: 'vnet', subnets: 'subnet', controllers: 'controller' }

/** the handlers' steps on one kind of object, each bound to the cluster and the kind */
export function sdnObjects(c: Cluster, kind: SdnKind) {
  const noun = NOUN[kind]
  /** the object in the config file, or the handler's "does not exist" */
  const existing = (id: string): SdnSection => {
    const s = c.sdn.config[kind].get(id)
    if (!s) throw fail500(`sdn ${noun} '${id}' does not exist`)
    return s
  }
  return {
    existing,
    /** the object's id, a parameter of the path */
    idOf: (ctx: RequestContext): string => str(ctx, noun) ?? '',
    /** an object as the index and the read show it: its options and its id */
    item: (id: string, s: object): Item => ({ ...s, [noun]: id }),
    /** the plugin's update hook over the file as it would be written; the file changes only if it passes */
    write: (id: string, section: SdnSection, hook: (all: Map<string, SdnSection>) => void): null => {
      hook(new Map(c.sdn.config[kind]).set(id, section))
      c.sdn.config[kind].set(id, section)
      return null
    },
    /** the index: the view's objects by id, those `keep` accepts, each as `item` shows it */
    index: (ctx: RequestContext, item: (id: string, s: Item) => Item, keep: (s: Item) => boolean = () => true) =>
      sortedIds(sdnView(c, kind, ctx))
        .filter(([, s]) => keep(s))
        .map(([id, s]) => item(id, s)),
    /** the read: the object of the view, or the handler's "does not exist" */
    read: (ctx: RequestContext, id: string): Item => {
      const s = sdnView(c, kind, ctx).get(id)
      if (!s) throw fail500(`sdn ${noun} '${id}' does not exist`)
      return s
    },
    /** create's check under the lock: the id is not yet in the config file */
    assertNew: (id: string): void => {
      if (c.sdn.config[kind].has(id)) throw fail500(`sdn ${noun} object ID '${id}' already defined`)
    },
    /** update under the lock: the digest checked, then `change` on a copy of the object (`before` as it was) */
    update: (ctx: RequestContext, id: string, change: (copy: SdnSection, before: SdnSection) => null): null =>
      c.sdn.locked(`update sdn ${noun} object failed`, lockToken(ctx), () => {
        assertSdnDigest(c.sdn.digest(kind), ctx.params.digest)
        const before = existing(id)
        return change(structuredClone(before), before)
      }),
    /** delete under the lock: the object must exist, the plugin's hook may refuse, then it leaves the file */
    remove: (ctx: RequestContext, id: string, hook: () => void): null =>
      c.sdn.locked(`delete sdn ${noun} object failed`, lockToken(ctx), () => {
        existing(id)
        hook()
        c.sdn.config[kind].delete(id)
        return null
      }),
  }
}

/** keep the objects of the `type` parameter, where it is given (the zone and controller indexes) */
export const ofType =
  (ctx: RequestContext) =>
  (s: Item): boolean => {
    const type = str(ctx, 'type')
    return type === undefined || s.type === type
  }

/** Plugin->lookup: the options of a section type's plugin */
export function pluginOptions(table: Record<string, SectionOptions | undefined>, type: string): SectionOptions {
  const options = table[type]
  if (!options) throw fail500(`unknown section type '${type}'`)
  return options
}
