/**
 * The parameter lists of the guest calls api/guests.ts routes and the HA LRM makes: one home for what every
 * /nodes/{node}/{qemu,lxc}/{vmid}/... handler is given (the node, the guest's id, the request's parameters and
 * who asks), so that each handler states only what it does with them.
 */
import type { Caller } from './caller.js'
import type { Cluster } from './cluster.js'
import type { GuestType } from './options.js'

export type Params = Record<string, unknown>

/**
 * A call on a guest whose type the route names. `byHa`: the HA LRM makes it (rpcenv type `ha`), so an HA-managed
 * guest's call is not turned into an HA request again; calls that HA never makes ignore it.
 */
export type GuestCall = (
  c: Cluster,
  nodeName: string,
  vmid: number,
  params: Params,
  caller: Caller,
  byHa?: boolean,
) => string

/** a call both guest types share, the type given by the route */
export type TypedGuestCall = (
  c: Cluster,
  nodeName: string,
  vmid: number,
  type: GuestType,
  params: Params,
  caller: Caller,
) => string

/** a call on one snapshot of a guest (.../snapshot/{snapname}/...) */
export type SnapshotCall = (
  c: Cluster,
  nodeName: string,
  type: GuestType,
  vmid: number,
  name: string,
  params: Params,
  caller: Caller,
) => string
