/** /cluster/sdn/controllers (pve-network PVE::API2::Network::SDN::Controllers; the EVPN controller type) */
import type { Cluster } from '../model/cluster.js'
import {
  CONTROLLER_OPTIONS,
  controllerDeleteHook,
  controllerUpdateHook,
  type SdnSection,
} from '../model/sdn-plugins.js'
import { str, type RouteTable } from './params.js'
import { applyUpdate, lockToken, ofType, pluginOptions, sdnObjects, sdnOptions } from './sdn-objects.js'

/** Controllers::Plugin->lookup */
const optionsOf = (type: string) => pluginOptions(CONTROLLER_OPTIONS, type)

export function sdnControllerRoutes(c: Cluster): RouteTable {
  const sdn = c.sdn
  const objects = sdnObjects(c, 'controllers')
  const base = '/cluster/sdn/controllers'
  const controllerId = objects.idOf
  const item = objects.item
  const write = (id: string, controller: SdnSection) =>
    objects.write(id, controller, (controllers) => controllerUpdateHook(id, controllers))

  return [
    ['GET', base, (ctx) => objects.index(ctx, item, ofType(ctx))],
    ['GET', `${base}/{controller}`, (ctx) => item(controllerId(ctx), objects.read(ctx, controllerId(ctx)))],
    [
      'POST',
      base,
      (ctx) => {
        const id = controllerId(ctx)
        const type = str(ctx, 'type') ?? ''
        const opts = sdnOptions(type, optionsOf(type), ctx.params, 'controller', true)
        return sdn.locked('create sdn controller object failed', lockToken(ctx), () => {
          objects.assertNew(id)
          return write(id, opts)
        })
      },
    ],
    [
      'PUT',
      `${base}/{controller}`,
      (ctx) =>
        objects.update(ctx, controllerId(ctx), (controller) => {
          applyUpdate(controller, optionsOf(String(controller.type)), ctx.params, 'controller')
          return write(controllerId(ctx), controller)
        }),
    ],
    [
      'DELETE',
      `${base}/{controller}`,
      (ctx) => objects.remove(ctx, controllerId(ctx), () => controllerDeleteHook(controllerId(ctx), sdn.config.zones)),
    ],
  ]
}
