/**
 * One API request from raw method/path/headers/body to a rendered response, in pveproxy's order
 * (pve-http-server AnyEvent.pm + pve-manager HTTPServer.pm):
 * method check -> transfer encoding -> /api2/json -> authentication (401, delayed) -> body rules (501/506)
 * -> parameter extraction -> injected faults -> route lookup (501) -> URI/body conflicts -> allowtoken (403)
 * -> proxying to the target node (595 offline, 500 unknown) -> schema validation (400) -> root@pam-only rules
 * -> the model's handler (its PveHttpError rendered like PVE renders a `die`).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import type { ApiMethodInfo, ApiNode } from '../apidoc/load.js'
import { RouteIndex, uriUnescape, type HttpMethod, type RouteMatch } from '../apidoc/route-index.js'
import { validateParams } from '../apidoc/validate.js'
import { WithTotal } from '../api/envelope.js'
import type { FaultState } from '../control/faults.js'
import type { StatsLog } from '../control/stats.js'
import { AuthError, authenticate, type AuthOutcome, type AuthState } from './auth.js'
import { BodyDecodeError, extractParams, mediaType } from './decode.js'
import { renderApiError, renderBare, renderData, type RenderOptions, type SimResponse } from './respond.js'
import { rootOnlyViolation } from './root-only.js'
import { checkApi2Permissions } from '../access/api2-check.js'
import { guestPrivilegeViolation } from '../access/guest-perms.js'
import type { AccessState } from '../access/state.js'
import { filterList, handlerCheck } from '../access/views.js'
import { type Handler, type Route } from './types.js'
import { PveHttpError } from '../model/errors.js'
import type { Caller } from '../model/caller.js'

export interface SimRequest {
  method: string
  /** path and query as sent, e.g. `/api2/json/nodes?x=1` */
  url: string
  headers: Record<string, string | undefined>
  body: Buffer
}

export interface ApiOptions {
  routes: Route[]
  /** the apidoc tree; undefined = schema checks off */
  apidoc: ApiNode[] | undefined
  auth: AuthState
  /** users, roles, ACLs: every route's privilege check (only with the schema, which names them) */
  access: AccessState
  faults: FaultState
  stats: StatsLog
  authFailureDelayMs: number
  messageInBody: boolean
  /** cluster node names; requests proxied to others fail with PVE's hostname lookup error */
  nodes: () => string[]
  clusterName?: string
  currentConfig?: (vmid: number) => Record<string, string> | undefined
  /** the node the clients talk to; calls for other nodes are proxied */
  localNode: string
  /** pveproxy's timeout for proxied calls (PVE: 30 s): injected latency above it turns into 596 while the call completes */
  proxyTimeoutMs: number
  /** the node this endpoint is and its certificate fingerprint: /nodes reports it as that node's ssl_fingerprint */
  endpoint?: { node: string; fingerprint: string }
  log?: (line: string) => void
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE'])
const MAX_POST = 512 * 1024

let refCount = 0
/** how Perl's `ne` sees a decoded value: JSON booleans as 1/0, undef as '', references never equal a string */
function perlString(v: unknown): string {
  if (v === true) return '1'
  if (v === false) return '0'
  if (v === null || v === undefined) return ''
  if (typeof v === 'object') return `REF(${++refCount})`
  return String(v)
}

const truthy = (v: unknown): boolean => v !== undefined && v !== null && v !== 0 && v !== '0' && v !== ''

export class ApiHandler {
  private readonly index: RouteIndex
  private readonly handlers = new Map<string, Handler>()

  constructor(private readonly o: ApiOptions) {
    this.index = o.apidoc ? RouteIndex.fromTree(o.apidoc) : new RouteIndex()
    for (const r of o.routes) {
      this.handlers.set(`${r.method} ${r.path}`, r.handler)
      // without a schema (or for paths it lacks) the model's own routes are still served
      if (!this.index.match(r.method, r.path.replace(/\{[^}]+\}/g, 'x'))?.info)
        this.index.add(r.path, { [r.method]: {} })
    }
    this.index.add('/access/ticket', { POST: ticketInfo(o.apidoc), GET: {} })
    this.index.add('/access/domains', { GET: {} })
  }

  async handle(req: SimRequest): Promise<SimResponse> {
    const accept = req.headers['accept-encoding'] ?? ''
    const opts: RenderOptions = {
      acceptGzip: /gzip/.test(accept),
      acceptDeflate: /deflate/.test(accept),
      messageInBody: this.o.messageInBody,
    }
    const qi = req.url.indexOf('?')
    const path = qi < 0 ? req.url : req.url.slice(0, qi)
    const query = qi < 0 ? '' : req.url.slice(qi + 1)
    const record = { method: req.method, path, rawPath: path, status: 0, handled: false }
    const res = await this.pipeline(req, path, query, opts, record)
    record.status = res.status
    this.o.stats.record(record)
    return res
  }

  private async pipeline(
    req: SimRequest,
    path: string,
    query: string,
    opts: RenderOptions,
    record: { path: string; rawPath: string; handled: boolean },
  ): Promise<SimResponse> {
    const method = req.method
    if (!METHODS.has(method)) return renderBare(501, `method '${method}' not available`, opts)
    const te = req.headers['transfer-encoding']
    if (te)
      return renderBare(
        501,
        te.toLowerCase() === 'chunked'
          ? 'chunked transfer encoding not supported'
          : `Unknown transfer encoding '${te}'`,
        opts,
      )
    if (!path.startsWith('/api2')) return renderBare(501, `no such file '${path}'`, opts)
    const m = /^\/api2\/+(html|text|json|extjs|png|htmljs|spiceconfig)(\/.*)?$/.exec(path)
    if (!m || m[1] !== 'json') return renderBare(501, 'no such uri', opts)
    const relPath = m[2] ?? '/'
    record.rawPath = relPath
    const route = this.index.match(method as HttpMethod, relPath)
    record.path = route?.template ?? relPath

    // authentication (401s carry no body and are delayed)
    let auth
    try {
      auth = authenticate(this.o.auth, {
        method,
        relPath,
        cookie: req.headers.cookie,
        authorization: req.headers.authorization,
        csrf: req.headers.csrfpreventiontoken,
      })
    } catch (err) {
      if (err instanceof AuthError) return renderBare(401, err.message, opts, this.o.authFailureDelayMs)
      throw err
    }

    const len = Number(req.headers['content-length'] ?? req.body.length)
    if (len > 0) {
      if (method !== 'PUT' && method !== 'POST')
        return renderBare(501, `Unexpected content for method '${method}'`, opts)
      if (len > MAX_POST) return renderBare(501, 'for data too large', opts)
      const ct = req.headers['content-type']
      const mt = mediaType(ct)
      if (mt && mt !== 'application/x-www-form-urlencoded' && mt !== 'application/json') {
        return renderBare(506, `upload 'Content-Type '${ct}' not implemented`, opts)
      }
    }

    let raw: Record<string, unknown>
    try {
      raw = extractParams(method, req.headers['content-type'], req.body, query)
    } catch (err) {
      if (err instanceof BodyDecodeError) return renderBare(500, err.message, opts)
      throw err
    }

    const fault = this.o.faults.decide(method, relPath, route?.template)
    if (fault.failure) {
      if (fault.delayMs > 0) await sleep(fault.delayMs)
      if ('network' in fault.failure)
        return { status: 0, reason: '', headers: {}, body: Buffer.alloc(0), delayMs: 0, network: fault.failure.network }
      const { status, message } = fault.failure
      return status >= 595 ? renderBare(status, message, opts) : renderApiError(status, `${message}\n`, undefined, opts)
    }
    const serve = (): Promise<SimResponse> => this.serve(method, relPath, route, raw, auth, opts, record)
    if (fault.delayMs > 0) {
      // pveproxy gives up on a proxied call after 30 s with 596, while the call itself still completes
      if (fault.delayMs > this.o.proxyTimeoutMs && this.proxied(route, raw)) {
        void sleep(fault.delayMs)
          .then(serve)
          .catch((err: unknown) => this.o.log?.(`pve-sim: late request ${method} ${relPath} failed: ${String(err)}`))
        await sleep(this.o.proxyTimeoutMs)
        return renderBare(596, 'Connection timed out', opts)
      }
      await sleep(fault.delayMs)
    }
    return serve()
  }

  /** whether pveproxy forwards this call (to another node, or to the local pvedaemon for protected methods) */
  private proxied(route: RouteMatch | undefined, raw: Record<string, unknown>): boolean {
    const info = route?.info
    if (!info) return false
    if (truthy(info.protected)) return true
    const target = info.proxyto ? (route.pathParams[info.proxyto] ?? raw[info.proxyto]) : undefined
    return typeof target === 'string' && target !== this.o.localNode
  }

  private async serve(
    method: string,
    relPath: string,
    route: RouteMatch | undefined,
    raw: Record<string, unknown>,
    auth: AuthOutcome,
    opts: RenderOptions,
    record: { handled: boolean },
  ): Promise<SimResponse> {
    // PVE names the URI-unescaped path in its messages
    const shownPath = uriUnescape(relPath)
    if (!route?.info) return renderApiError(501, `Method '${method} ${shownPath}' not implemented`, undefined, opts)

    // URI parameters win; a body/query parameter may repeat one only with the same value
    const params: Record<string, unknown> = { ...route.pathParams }
    for (const k of Object.keys(raw).sort()) {
      if (params[k] !== undefined && perlString(params[k]) !== perlString(raw[k])) {
        return renderApiError(
          400,
          'Parameter verification failed.\n',
          { [k]: 'duplicate parameter (already defined in URI) with conflicting values!' },
          opts,
        )
      }
      params[k] = raw[k]
    }

    if (auth.apiToken && route.info.allowtoken !== undefined && !truthy(route.info.allowtoken)) {
      return renderApiError(
        403,
        `Permission check failed (URI '${shownPath}' not available with API token, need proper ticket.\n)\n`,
        undefined,
        opts,
      )
    }

    // check_api2_permissions with the method's apidoc `permissions` entry, before proxying and validation
    if (this.o.apidoc && auth.kind === 'ok' && route.info.name !== undefined) {
      try {
        checkApi2Permissions(this.o.access, route.info.permissions, auth.caller.actor, params)
      } catch (err) {
        if (err instanceof PveHttpError) return this.renderError(err, opts)
        throw err
      }
    }

    if (method === 'POST' && route.template === '/access/ticket') return this.ticket(params, opts)
    // the two GETs pveproxy serves without login: the ticket "dummy" and the realm list of the login form
    if (method === 'GET' && route.template === '/access/ticket') return renderData(null, undefined, opts)
    if (method === 'GET' && route.template === '/access/domains') {
      return renderData(
        [
          { realm: 'pam', type: 'pam', comment: 'Linux PAM standard authentication' },
          { realm: 'pve', type: 'pve', comment: 'Proxmox VE authentication server' },
        ],
        undefined,
        opts,
      )
    }
    if (auth.kind !== 'ok') return renderBare(401, 'No ticket', opts, this.o.authFailureDelayMs)

    // pveproxy forwards `proxyto` methods to the target node before anything is validated
    const proxyto = route.info.proxyto
    if (proxyto && typeof params[proxyto] === 'string') {
      const node = params[proxyto]
      if (!this.o.nodes().includes(node) && node !== 'localhost') {
        return renderApiError(
          500,
          `hostname lookup '${node}' failed - failed to get address info for: ${node}: Name or service not known\n`,
          undefined,
          opts,
        )
      }
      if (this.o.faults.offlineNodes.has(node)) return renderBare(595, 'No route to host', opts)
    }

    const handler = this.handlers.get(`${method} ${route.template}`)
    if (!handler) return renderApiError(501, `Method '${method} ${shownPath}' not implemented`, undefined, opts)

    let checked = params
    if (this.o.apidoc && route.info.parameters) {
      const v = validateParams(route.info.parameters, params)
      if (!v.ok) return renderApiError(400, 'Parameter verification failed.\n', v.errors, opts)
      checked = v.params
    }

    const caller: Caller = auth.caller
    const violation = rootOnlyViolation({
      method,
      template: route.template,
      params: checked,
      caller,
      currentConfig: this.o.currentConfig,
    })
    if (violation) return this.renderError(violation, opts)
    const denied = this.o.apidoc
      ? (guestPrivilegeViolation(this.o.access, {
          method,
          template: route.template,
          params: checked,
          actor: caller.actor,
          currentConfig: this.o.currentConfig,
        }) ?? handlerCheck(this.o.access, caller.actor, method, route.template, checked))
      : undefined
    if (denied) return this.renderError(denied, opts)

    record.handled = true
    try {
      const raw = await handler({
        method: method as HttpMethod,
        path: relPath,
        template: route.template,
        params: checked,
        caller,
      })
      const result = this.o.apidoc ? filterList(this.o.access, caller.actor, method, route.template, checked, raw) : raw
      if (result instanceof WithTotal) return renderData(result.data, result.total, opts)
      return renderData(this.withEndpointFingerprint(method, route.template, result), undefined, opts)
    } catch (err) {
      if (err instanceof PveHttpError) return this.renderError(err, opts)
      const msg = err instanceof Error ? err.message : String(err)
      this.o.log?.(
        `pve-sim: handler ${method} ${route.template} threw: ${err instanceof Error ? (err.stack ?? msg) : msg}`,
      )
      return renderApiError(500, msg.endsWith('\n') ? msg : `${msg}\n`, undefined, opts)
    }
  }

  /** GET /nodes: the endpoint node's ssl_fingerprint is the certificate clients actually see */
  private withEndpointFingerprint(method: string, template: string, result: unknown): unknown {
    const ep = this.o.endpoint
    if (!ep || method !== 'GET' || template !== '/nodes' || !Array.isArray(result)) return result
    return result.map((n: unknown) =>
      n !== null && typeof n === 'object' && (n as { node?: unknown }).node === ep.node
        ? { ...n, ssl_fingerprint: ep.fingerprint }
        : n,
    )
  }

  /** a handler's `die`: 59x pass through without body, everything else as JSON with the message + newline */
  private renderError(err: PveHttpError, opts: RenderOptions): SimResponse {
    if (err.status >= 595) return renderBare(err.status, err.message, opts)
    const msg = err.message.endsWith('\n') ? err.message : `${err.message}\n`
    return renderApiError(err.status, msg, err.errors, opts)
  }

  /** POST /access/ticket (pve-access-control API2/AccessControl.pm create_ticket) */
  private async ticket(params: Record<string, unknown>, opts: RenderOptions): Promise<SimResponse> {
    let p = params
    const info = ticketInfo(this.o.apidoc)
    if (this.o.apidoc && info.parameters) {
      const v = validateParams(info.parameters, params)
      if (!v.ok) return renderApiError(400, 'Parameter verification failed.\n', v.errors, opts)
      p = v.params
    }
    let username = String(p.username ?? '')
    if (p.realm !== undefined && !username.includes('@')) username = `${username}@${String(p.realm)}`
    const password = String(p.password ?? '')
    const userPassword = this.o.access.users.get(username)?.password
    const ok =
      (username === 'root@pam' && password === this.o.auth.rootPassword) ||
      (userPassword !== undefined && password === userPassword) ||
      this.o.auth.verifyTicket(password) === username
    if (!ok) {
      const r = renderApiError(401, 'authentication failure\n', undefined, opts)
      return { ...r, delayMs: this.o.authFailureDelayMs }
    }
    const data: Record<string, unknown> = {
      username,
      ticket: this.o.auth.createTicket(username),
      CSRFPreventionToken: this.o.auth.createCsrf(username),
      // compute_api_permission: what the user may do, per area (root@pam: every privilege of its release)
      cap: this.o.access.apiPermissions(username),
    }
    if (this.o.clusterName) data.clustername = this.o.clusterName
    return renderData(data, undefined, opts)
  }
}

function ticketInfo(apidoc: ApiNode[] | undefined): ApiMethodInfo {
  const access = apidoc?.find((n) => n.path === '/access')
  const node = access?.children?.find((n) => n.path === '/access/ticket')
  return node?.info?.POST ?? { allowtoken: 0 }
}
