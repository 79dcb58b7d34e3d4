/**
 * /cluster/sdn/vnets/{vnet}/subnets (pve-network PVE::API2::Network::SDN::Subnets). A subnet's id is
 * `<zone>-<network>-<mask>`; its listing adds what sdn_subnets_config derives from the id (`cidr`, `zone`,
 * `network`, `mask`, `id`) and the parsed `dhcp-range` (get_dhcp_ranges). The IPAM registration of a subnet and
 * its gateway (Subnets::add_subnet, add_ip) is not modelled.
 */
import type { RequestContext } from '../http/types.js'
import type { Cluster } from '../model/cluster.js'
import { fail400 } from '../model/errors.js'
import { dhcpRanges, SUBNET_OPTIONS, subnetUpdateHook, type SdnSection } from '../model/sdn-plugins.js'
import { str, type RouteTable } from './params.js'
import { applyUpdate, assertSdnDigest, lockToken, sdnObjects, sdnOptions } from './sdn-objects.js'

/** sdn_subnets_config's derived keys and the API's `subnet`, `digest` and parsed `dhcp-range` */
export function subnetItem(id: string, s: Record<string, unknown>): Record<string, unknown> {
  const [zone, network, mask] = id.split('-')
  return {
    ...s,
    id,
    cidr: `${network}/${mask}`,
    zone,
    network,
    mask,
    subnet: id,
    'dhcp-range': dhcpRanges(s as SdnSection),
  }
}

export function sdnSubnetRoutes(c: Cluster): RouteTable {
  const sdn = c.sdn
  const objects = sdnObjects(c, 'subnets')
  const base = '/cluster/sdn/vnets/{vnet}/subnets'
  const vnetId = (ctx: RequestContext) => str(ctx, 'vnet') ?? ''
  const subnetId = (ctx: RequestContext) => str(ctx, 'subnet') ?? ''
  const cidrOf = (id: string) => id.split('-').slice(1).join('/')
  const write = (id: string, subnet: SdnSection) => {
    subnetUpdateHook(subnet, cidrOf(id), sdn.config.vnets)
    sdn.config.subnets.set(id, subnet)
    return null
  }

  return [
    ['GET', base, (ctx) => objects.index(ctx, subnetItem, (s) => s.vnet === vnetId(ctx))],
    [
      'GET',
      `${base}/{subnet}`,
      (ctx) => {
        const s = objects.read(ctx, subnetId(ctx))
        if (s.vnet !== vnetId(ctx)) throw fail400({ vnet: 'wrong vnet' })
        return subnetItem(subnetId(ctx), s)
      },
    ],
    [
      'POST',
      base,
      (ctx) =>
        sdn.locked('create sdn subnet object failed', lockToken(ctx), () => {
          const zone = sdn.config.vnets.get(vnetId(ctx))?.zone
          const id = `${zone === undefined ? '' : String(zone)}-${subnetId(ctx).replace('/', '-')}`
          const opts = sdnOptions('subnet', SUBNET_OPTIONS, ctx.params, 'subnet', true)
          objects.assertNew(id)
          return write(id, opts)
        }),
    ],
    [
      'PUT',
      `${base}/{subnet}`,
      (ctx) =>
        sdn.locked('update sdn subnet object failed', lockToken(ctx), () => {
          const id = subnetId(ctx)
          const before = objects.existing(id)
          assertSdnDigest(sdn.digest('subnets'), ctx.params.digest)
          const subnet = structuredClone(before)
          // `vnet` is a parameter of the path and an option: check_config takes it as one
          applyUpdate(subnet, SUBNET_OPTIONS, ctx.params, 'subnet')
          return write(id, subnet)
        }),
    ],
    [
      'DELETE',
      `${base}/{subnet}`,
      (ctx) =>
        sdn.locked('delete sdn subnet object failed', lockToken(ctx), () => {
          // sdn_subnets_config with noerr: a subnet that does not exist is no error (no IPAM to tell)
          sdn.config.subnets.delete(subnetId(ctx))
          return null
        }),
    ],
  ]
}
