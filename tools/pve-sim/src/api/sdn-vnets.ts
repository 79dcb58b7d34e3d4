/** /cluster/sdn/vnets (pve-network PVE::API2::Network::SDN::Vnets: index, read, create, update, delete) */
import type { Cluster } from '../model/cluster.js'
import { fail400 } from '../model/errors.js'
import {
  subnetsOf,
  VNET_OPTIONS,
  vnetDeleteHook,
  vnetUpdateHook,
  vnetZoneHook,
  type SdnSection,
} from '../model/sdn-plugins.js'
import type { RouteTable } from './params.js'
import { applyUpdate, lockToken, sdnObjects, sdnOptions } from './sdn-objects.js'

export function sdnVnetRoutes(c: Cluster): RouteTable {
  const sdn = c.sdn
  const objects = sdnObjects(c, 'vnets')
  const vnetId = objects.idOf
  const item = objects.item
  /** the zone plugin's vnet_update_hook, then VnetPlugin's; the file changes only if both pass */
  const write = (id: string, vnet: SdnSection) =>
    objects.write(id, vnet, (vnets) => {
      vnetZoneHook(id, vnets, sdn.config.zones)
      vnetUpdateHook(id, vnets, sdn.config.subnets)
    })

  return [
    ['GET', '/cluster/sdn/vnets', (ctx) => objects.index(ctx, item)],
    ['GET', '/cluster/sdn/vnets/{vnet}', (ctx) => item(vnetId(ctx), objects.read(ctx, vnetId(ctx)))],
    [
      'POST',
      '/cluster/sdn/vnets',
      (ctx) =>
        sdn.locked('create sdn vnet object failed', lockToken(ctx), () => {
          const id = vnetId(ctx)
          const opts = sdnOptions('vnet', VNET_OPTIONS, ctx.params, 'vnet', true)
          objects.assertNew(id)
          return write(id, opts)
        }),
    ],
    [
      'PUT',
      '/cluster/sdn/vnets/{vnet}',
      (ctx) =>
        objects.update(ctx, vnetId(ctx), (vnet, before) => {
          const id = vnetId(ctx)
          applyUpdate(vnet, VNET_OPTIONS, ctx.params, 'vnet')
          if (!vnet.zone) throw fail400({ zone: 'cannot delete zone' })
          if (subnetsOf(id, sdn.config.subnets).length && vnet.zone !== before.zone)
            throw fail400({ zone: "can't change zone if subnets exist" })
          return write(id, vnet)
        }),
    ],
    [
      'DELETE',
      '/cluster/sdn/vnets/{vnet}',
      (ctx) => objects.remove(ctx, vnetId(ctx), () => vnetDeleteHook(vnetId(ctx), sdn.config.subnets)),
    ],
  ]
}
