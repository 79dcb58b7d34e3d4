/** /cluster/sdn/zones (pve-network PVE::API2::Network::SDN::Zones: index, read, create, update, delete) */
import type { Cluster } from '../model/cluster.js'
import { fail400 } from '../model/errors.js'
import { ZONE_OPTIONS, zoneDeleteHook, zoneUpdateHook, type SdnSection } from '../model/sdn-plugins.js'
import { str, type RouteTable } from './params.js'
import { applyUpdate, lockToken, ofType, pluginOptions, sdnObjects, sdnOptions } from './sdn-objects.js'

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
const optionsOf = (type: string) => pluginOptions(ZONE_OPTIONS, type)

export function sdnZoneRoutes(c: Cluster): RouteTable {
  const sdn = c.sdn
  const objects = sdnObjects(c, 'zones')
  const zoneId = objects.idOf
  const item = objects.item
  /** on_update_hook over the file with the zone as it would be written; the file changes only if it passes */
  const write = (id: string, zone: SdnSection) =>
    objects.write(id, zone, (zones) => zoneUpdateHook(id, zones, sdn.config.controllers, () => c.rng.mac()))

  return [
    ['GET', '/cluster/sdn/zones', (ctx) => objects.index(ctx, item, ofType(ctx))],
    ['GET', '/cluster/sdn/zones/{zone}', (ctx) => item(zoneId(ctx), objects.read(ctx, zoneId(ctx)))],
    [
      'POST',
      '/cluster/sdn/zones',
      (ctx) => {
        const id = zoneId(ctx)
        const type = str(ctx, 'type') ?? ''
        // check_config runs before the lock, so its errors carry no prefix
        const opts = sdnOptions(type, optionsOf(type), ctx.params, 'zone', true)
        return sdn.locked('create sdn zone object failed', lockToken(ctx), () => {
          objects.assertNew(id)
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
        return objects.update(ctx, id, (zone, before) => {
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
      (ctx) => objects.remove(ctx, zoneId(ctx), () => zoneDeleteHook(zoneId(ctx), sdn.config.vnets)),
    ],
  ]
}
