import type { Method, RequestContext, Route } from '../http/types.js'
import type { Caller } from '../model/caller.js'
import { WithTotal } from '../api/envelope.js'

/**
 * Calls route handlers without HTTP: matches a concrete path against the route templates and builds
 * the RequestContext the HTTP layer would. For tests of the model and for tools.
 */
export const ROOT_TOKEN: Caller = { userid: 'root@pam', tokenid: 'proxops', actor: 'root@pam!proxops' }

export function matchRoute(
  routes: Route[],
  method: Method,
  path: string,
): { route: Route; params: Record<string, string> } | undefined {
  const parts = path.split('/')
  for (const route of routes) {
    if (route.method !== method) continue
    const tparts = route.path.split('/')
    if (tparts.length !== parts.length) continue
    const params: Record<string, string> = {}
    let ok = true
    for (let i = 0; i < tparts.length; i++) {
      const t = tparts[i] as string
      const p = parts[i] as string
      if (t.startsWith('{') && t.endsWith('}')) params[t.slice(1, -1)] = decodeURIComponent(p)
      else if (t !== p) {
        ok = false
        break
      }
    }
    if (ok) return { route, params }
  }
  return undefined
}

export async function callRoute(
  routes: Route[],
  method: Method,
  path: string,
  params: Record<string, unknown> = {},
  caller: Caller = ROOT_TOKEN,
): Promise<unknown> {
  const m = matchRoute(routes, method, path)
  if (!m) throw new Error(`no route ${method} ${path}`)
  const ctx: RequestContext = {
    method,
    path,
    template: m.route.path,
    params: { ...params, ...coerce(m.params) },
    caller,
  }
  const out = await m.route.handler(ctx)
  return out instanceof WithTotal ? out.data : out
}

/** path parameters arrive typed as the schema says: vmid is an integer */
function coerce(p: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...p }
  if (p.vmid !== undefined) out.vmid = Number(p.vmid)
  return out
}
