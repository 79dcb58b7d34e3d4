/** /cluster/sdn/controllers (pve-network PVE::API2::Network::SDN::Controllers; the EVPN controller type) */
import type { RequestContext } from '../http/types.js'
import type { Cluster } from '../model/cluster.js'
import { fail500 } from '../model/errors.js'
import {
  CONTROLLER_OPTIONS,
  controllerDeleteHook,
  controllerUpdateHook,
  type SdnSection,
} from '../model/sdn-plugins.js'
import { str, type RouteTable } from './params.js'
import { applyUpdate, assertSdnDigest, lockToken, sdnOptions, sdnView, sortedIds } from './sdn-objects.js'

/** Controllers::Plugin->lookup (only the EVPN plugin is modelled) */
function optionsOf(type: string) {
  const options = CONTROLLER_OPTIONS[type]
  if (!options) throw fail500(`unknown section type '${type}'`)
  return options
}

export function sdnControllerRoutes(c: Cluster): RouteTable {
  const sdn = c.sdn
  const base = '/cluster/sdn/controllers'
  const controllerId = (ctx: RequestContext) => str(ctx, 'controller') ?? ''
  const item = (id: string, s: object) => ({ ...s, controller: id })
  const write = (id: string, controller: SdnSection) => {
    const controllers = new Map(sdn.config.controllers).set(id, controller)
    controllerUpdateHook(id, controllers)
    sdn.config.controllers.set(id, controller)
    return null
  }

  return [
    [
      'GET',
      base,
      (ctx) => {
        const type = str(ctx, 'type')
        return sortedIds(sdnView(c, 'controllers', ctx))
          .filter(([, s]) => type === undefined || s.type === type)
          .map(([id, s]) => item(id, s))
      },
    ],
    [
      'GET',
      `${base}/{controller}`,
      (ctx) => {
        const s = sdnView(c, 'controllers', ctx).get(controllerId(ctx))
        if (!s) throw fail500(`sdn controller '${controllerId(ctx)}' does not exist`)
        return item(controllerId(ctx), s)
      },
    ],
    [
      'POST',
      base,
      (ctx) => {
        const id = controllerId(ctx)
        const type = str(ctx, 'type') ?? ''
        const opts = sdnOptions(type, optionsOf(type), ctx.params, 'controller', true)
        return sdn.locked('create sdn controller object failed', lockToken(ctx), () => {
          if (sdn.config.controllers.has(id)) throw fail500(`sdn controller object ID '${id}' already defined`)
          return write(id, opts)
        })
      },
    ],
    [
      'PUT',
      `${base}/{controller}`,
      (ctx) =>
        sdn.locked('update sdn controller object failed', lockToken(ctx), () => {
          const id = controllerId(ctx)
          assertSdnDigest(sdn.digest('controllers'), ctx.params.digest)
          const before = sdn.config.controllers.get(id)
          if (!before) throw fail500(`sdn controller '${id}' does not exist`)
          const controller = structuredClone(before)
          applyUpdate(controller, optionsOf(String(controller.type)), ctx.params, 'controller')
          return write(id, controller)
        }),
    ],
    [
      'DELETE',
      `${base}/{controller}`,
      (ctx) =>
        sdn.locked('delete sdn controller object failed', lockToken(ctx), () => {
          const id = controllerId(ctx)
          if (!sdn.config.controllers.has(id)) throw fail500(`sdn controller '${id}' does not exist`)
          controllerDeleteHook(id, sdn.config.zones)
          sdn.config.controllers.delete(id)
          return null
        }),
    ],
  ]
}
