/** /cluster/sdn/zones (pve-network PVE::API2::Network::SDN::Zones: index, read, create, update, delete) */
import type { RequestContext } from '../http/types.js'
import type { Cluster } from '../model/cluster.js'
import { fail400, fail500 } from '../model/errors.js'
import { ZONE_OPTIONS, zoneDeleteHook, zoneUpdateHook, type SdnSection } from '../model/sdn-plugins.js'
import { str, type RouteTable } from './params.js'
import { applyUpdate, assertSdnDigest, lockToken, sdnOptions, sdnView, sortedIds } from './sdn-objects.js'

/** Ipams::config: the built-in `pve` IPAM is always there (no other IPAM plugin is modelled) */
const IPAMS = new Set(['pve'])

/** the DNS and IPAM references create and update check in the options given (no DNS plugin is modelled) */
function checkZoneRefs(opts: SdnSection): void {
  if (opts.dns) throw fail400({ dns: `${String(opts.dns)} don't exist` })
  if (opts.reversedns) throw fail400({ reversedns: `${String(opts.reversedns)} don't exist` })
  if (opts.dnszone) throw fail400({ dnszone: 'missing dns server' })
  if (opts.ipam && !IPAMS.has(String(opts.ipam))) throw fail400({ ipam: `${String(opts.ipam)} not existing` })
}

/** Zones::Plugin->lookup */
function optionsOf(type: string) {
  const options = ZONE_OPTIONS[type]
  if (!options) throw fail500(`unknown section type '${type}'`)
  return options
}

export function sdnZoneRoutes(c: Cluster): RouteTable {
  const sdn = c.sdn
  const zoneId = (ctx: RequestContext) => str(ctx, 'zone') ?? ''
  const item = (id: string, s: object) => ({ ...s, zone: id })
  /** on_update_hook over the file with the zone as it would be written; the file changes only if it passes */
  const write = (id: string, zone: SdnSection) => {
    const zones = new Map(sdn.config.zones).set(id, zone)
    zoneUpdateHook(id, zones, sdn.config.controllers, () => c.rng.mac())
    sdn.config.zones.set(id, zone)
    return null
  }

  return [
    [
      'GET',
      '/cluster/sdn/zones',
      (ctx) => {
        const type = str(ctx, 'type')
        return sortedIds(sdnView(c, 'zones', ctx))
          .filter(([, s]) => type === undefined || s.type === type)
          .map(([id, s]) => item(id, s))
      },
    ],
    [
      'GET',
      '/cluster/sdn/zones/{zone}',
      (ctx) => {
        const s = sdnView(c, 'zones', ctx).get(zoneId(ctx))
        if (!s) throw fail500(`sdn zone '${zoneId(ctx)}' does not exist`)
        return item(zoneId(ctx), s)
      },
    ],
    [
      'POST',
      '/cluster/sdn/zones',
      (ctx) => {
        const id = zoneId(ctx)
        const type = str(ctx, 'type') ?? ''
        // check_config runs before the lock, so its errors carry no prefix
        const opts = sdnOptions(type, optionsOf(type), ctx.params, 'zone', true)
        return sdn.locked('create sdn zone object failed', lockToken(ctx), () => {
          if (sdn.config.zones.has(id)) throw fail500(`sdn zone object ID '${id}' already defined`)
          checkZoneRefs(opts)
          return write(id, opts)
        })
      },
    ],
    [
      'PUT',
      '/cluster/sdn/zones/{zone}',
      (ctx) => {
        const id = zoneId(ctx)
        return sdn.locked('update sdn zone object failed', lockToken(ctx), () => {
          assertSdnDigest(sdn.digest('zones'), ctx.params.digest)
          const before = sdn.config.zones.get(id)
          if (!before) throw fail500(`sdn zone '${id}' does not exist`)
          const zone = structuredClone(before)
          const set = applyUpdate(zone, optionsOf(String(zone.type)), ctx.params, 'zone')
          // the IPAM cannot change while a subnet of the zone exists (its content would need a resync)
          if (String(zone.ipam ?? '') !== String(before.ipam ?? ''))
            for (const s of [...sdn.config.subnets.keys()].sort())
              if (s.split('-')[0] === id)
                throw fail400({ ipam: "can't change ipam if a subnet is already defined in this zone" })
          checkZoneRefs(set)
          return write(id, zone)
        })
      },
    ],
    [
      'DELETE',
      '/cluster/sdn/zones/{zone}',
      (ctx) =>
        sdn.locked('delete sdn zone object failed', lockToken(ctx), () => {
          const id = zoneId(ctx)
          if (!sdn.config.zones.has(id)) throw fail500(`sdn zone '${id}' does not exist`)
          zoneDeleteHook(id, sdn.config.vnets)
          sdn.config.zones.delete(id)
          return null
        }),
    ],
  ]
}
