/**
 * The seam between the simulator's HTTP layer (decoding, schema validation, auth, envelopes, faults)
 * and its PVE model (guests, storage, tasks). Handlers see decoded, validated parameters and answer with
 * the value that goes into `{"data": ...}`, or throw a PveHttpError (src/model/errors.ts) that the HTTP layer
 * renders as PVE does.
 */

import type { Caller } from '../model/caller.js'

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

export interface RequestContext {
  method: Method
  /** path below /api2/json, e.g. `/nodes/pve1/qemu/100/config` */
  path: string
  /** the apidoc path template, e.g. `/nodes/{node}/qemu/{vmid}/config` */
  template: string
  /** path parameters and decoded, validated query/body parameters (strings, numbers, booleans as PVE would coerce them) */
  params: Record<string, unknown>
  caller: Caller
}

export type Handler = (ctx: RequestContext) => unknown | Promise<unknown>

export interface Route {
  method: Method
  /** as written in apidoc.json, e.g. `/nodes/{node}/qemu/{vmid}/config` */
  path: string
  handler: Handler
}
