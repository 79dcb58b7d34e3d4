/**
 * The PVE model (src/model) joined with the route handlers that serve it (src/api): what the HTTP layer and the
 * controls are built on. Kept out of src/model so the model depends on no layer above it.
 */
import type { Route } from './http/types.js'
import { buildRoutes } from './api/routes.js'
import { createModel, type ClusterOptions, type SimModel } from './model/index.js'

export interface SimCluster extends SimModel {
  /** route handlers for every PVE path the model serves (paths as in apidoc.json) */
  readonly routes: Route[]
}

export function createCluster(options: ClusterOptions): SimCluster {
  const { state, model } = createModel(options)
  return { ...model, routes: buildRoutes(state) }
}
