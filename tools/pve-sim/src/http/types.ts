/**
 * The seam between the simulator's HTTP layer (decoding, schema validation, auth, envelopes, faults)
 * and its PVE model (guests, storage, tasks). Handlers see decoded, validated parameters and answer with
 * the value that goes into `{"data": ...}`, or throw a PveHttpError that the HTTP layer renders as PVE does.
 */

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'

/** An error that PVE would answer with. `errors` renders as the 400 `errors` map. */
export class PveHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: Record<string, string>,
  ) {
    super(message)
    this.name = 'PveHttpError'
  }
}

export interface Caller {
  /** `root@pam`, or the token's user */
  userid: string
  /** token name when authenticated by an API token (`root@pam!gitops` -> `gitops`) */
  tokenid?: string
  /** the full actor as PVE writes it in UPIDs: `root@pam` or `root@pam!gitops` */
  actor: string
}

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
