/**
 * What every route module needs: reading a handler's decoded parameters, and the shape of a route table. Kept
 * apart from routes.ts, which imports every route module to assemble the table.
 */
import type { Handler, Method, RequestContext } from '../http/types.js'

export function str(ctx: RequestContext, key: string): string | undefined {
  const v = ctx.params[key]
  return v === undefined || v === null ? undefined : String(v)
}

export function int(ctx: RequestContext, key: string): number | undefined {
  const v = ctx.params[key]
  if (v === undefined || v === null || v === '') return undefined
  return typeof v === 'number' ? v : Number(v)
}

export function bool(ctx: RequestContext, key: string): boolean | undefined {
  const v = ctx.params[key]
  if (v === undefined || v === null) return undefined
  return v === true || v === 1 || v === '1'
}

export type RouteTable = [Method, string, Handler][]
