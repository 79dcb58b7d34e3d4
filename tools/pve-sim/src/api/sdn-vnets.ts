/** /cluster/sdn/vnets (pve-network PVE::API2::Network::SDN::Vnets: index, read, create, update, delete) */
import type { RequestContext } from '../http/types.js'
import type { Cluster } from '../model/cluster.js'
import { fail400, fail500 } from '../model/errors.js'
import {
  subnetsOf,
  VNET_OPTIONS,
  vnetDeleteHook,
  vnetUpdateHook,
  vnetZoneHook,
  type SdnSection,
} from '../model/sdn-plugins.js'
import { str, type RouteTable } from './params.js'
import { applyUpdate, assertSdnDigest, lockToken, sdnOptions, sdnView, sortedIds } from './sdn-objects.js'

export function sdnVnetRoutes(c: Cluster): RouteTable {
  const sdn = c.sdn
  const vnetId = (ctx: RequestContext) => str(ctx, 'vnet') ?? ''
  const item = (id: string, s: object) => ({ ...s, vnet: id })
  /** the zone plugin's vnet_update_hook, then VnetPlugin's; the file changes only if both pass */
  const write = (id: string, vnet: SdnSection) => {
    const vnets = new Map(sdn.config.vnets).set(id, vnet)
    vnetZoneHook(id, vnets, sdn.config.zones)
    vnetUpdateHook(id, vnets, sdn.config.subnets)
    sdn.config.vnets.set(id, vnet)
    return null
  }

  return [
    ['GET', '/cluster/sdn/vnets', (ctx) => sortedIds(sdnView(c, 'vnets', ctx)).map(([id, s]) => item(id, s))],
    [
      'GET',
      '/cluster/sdn/vnets/{vnet}',
      (ctx) => {
        const s = sdnView(c, 'vnets', ctx).get(vnetId(ctx))
        if (!s) throw fail500(`sdn vnet '${vnetId(ctx)}' does not exist`)
        return item(vnetId(ctx), s)
      },
    ],
    [
      'POST',
      '/cluster/sdn/vnets',
      (ctx) =>
        sdn.locked('create sdn vnet object failed', lockToken(ctx), () => {
          const id = vnetId(ctx)
          const opts = sdnOptions('vnet', VNET_OPTIONS, ctx.params, 'vnet', true)
          if (sdn.config.vnets.has(id)) throw fail500(`sdn vnet object ID '${id}' already defined`)
          return write(id, opts)
        }),
    ],
    [
      'PUT',
      '/cluster/sdn/vnets/{vnet}',
      (ctx) =>
        sdn.locked('update sdn vnet object failed', lockToken(ctx), () => {
          const id = vnetId(ctx)
          assertSdnDigest(sdn.digest('vnets'), ctx.params.digest)
          const before = sdn.config.vnets.get(id)
          if (!before) throw fail500(`sdn vnet '${id}' does not exist`)
          const vnet = structuredClone(before)
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
      (ctx) =>
        sdn.locked('delete sdn vnet object failed', lockToken(ctx), () => {
          const id = vnetId(ctx)
          if (!sdn.config.vnets.has(id)) throw fail500(`sdn vnet '${id}' does not exist`)
          vnetDeleteHook(id, sdn.config.subnets)
          sdn.config.vnets.delete(id)
          return null
        }),
    ],
  ]
}
