/**
 * PVE clients per cluster. diff, status and adopt get the read-only client: a value without write methods,
 * so a write from them cannot compile. apply and run get the full client.
 */
import {
  createPveClient,
  createPveReadOnlyClient,
  type PveClient,
  type PveClientOptions,
  type ClientNotice,
  type PveReadOnlyClient,
  type RequestEvent,
} from '@proxops/pve-client'
import type { LiveReader, PveWriter } from '@proxops/planner'
import type { ResolvedCluster, ResolvedConfig } from '../config/types.js'
import type { Logger } from '../log.js'
import { noticeLine } from '../render/progress.js'
import type { CliContext } from './context.js'
import type { PinRecorder } from './endpoint-pins.js'

// Type-level contract checks (compile errors, not tests): the read-only client is a LiveReader and has no
// write method; the full client is a PveWriter as well.
type Assert<T extends true> = T
export type ReadOnlySatisfiesLiveReader = Assert<PveReadOnlyClient extends LiveReader ? true : false>
export type ClientSatisfiesPveWriter = Assert<PveClient extends PveWriter & LiveReader ? true : false>
export type ReadOnlyHasNoWrites = Assert<
  Extract<keyof PveReadOnlyClient, Exclude<keyof PveWriter, 'waitTask'>> extends never ? true : false
>

export interface ClientHooks {
  log: Logger
  onRequest?: (cluster: string, event: RequestEvent) => void
  /** retries and long waits as they happen; by default a log line each (a warning for a retry) */
  onNotice?: (notice: ClientNotice) => void
  /** told of every answered read, to pin the endpoint once it worked (runtime/endpoint-pins.ts) */
  pins?: PinRecorder
}

/** The hooks every command's clients get: the command's logger and its endpoint pins. */
export function clientHooks(ctx: CliContext, extra: Omit<ClientHooks, 'log' | 'pins'> = {}): ClientHooks {
  return { log: ctx.log, ...(ctx.pins ? { pins: ctx.pins } : {}), ...extra }
}

/** The default for retries and waits: one log line as it happens (text on a terminal, NDJSON in the daemon). */
function logNotice(log: Logger, cluster: string): (notice: ClientNotice) => void {
  return (notice) =>
    log.log(
      notice.type === 'retry' ? 'warn' : 'info',
      noticeLine(notice)
        .trim()
        .replace(/^(\w+) +/, '$1 '),
      {
        cluster,
        event: notice.type === 'retry' ? 'pve.request.retry' : 'pve.request.waiting',
      },
    )
}

export function clientOptions(cluster: ResolvedCluster, config: ResolvedConfig, hooks: ClientHooks): PveClientOptions {
  const c = cluster.credentials
  return {
    baseUrl: cluster.baseUrl,
    auth:
      c.method === 'token'
        ? { type: 'token', tokenId: c.tokenId, secret: c.secret }
        : { type: 'ticket', username: c.user, password: c.password },
    tls: {
      ...(cluster.tls.caFile ? { ca: cluster.tls.caFile } : {}),
      ...(cluster.tls.fingerprint ? { fingerprint: cluster.tls.fingerprint } : {}),
      ...(cluster.tls.insecure ? { insecure: true } : {}),
    },
    logger: {
      warn: (message, meta) => hooks.log.warn(message, { cluster: cluster.name, ...meta }),
      debug: (message, meta) => hooks.log.debug(message, { cluster: cluster.name, ...meta }),
    },
    onRequest: (event: RequestEvent) => {
      // a read PVE answered: the connection was verified and the credentials accepted, so the endpoint worked
      if (event.method === 'GET' && event.status !== undefined && event.status >= 200 && event.status < 300)
        hooks.pins?.answered(cluster.name)
      hooks.onRequest?.(cluster.name, event)
    },
    onNotice: hooks.onNotice ?? logNotice(hooks.log, cluster.name),
    // a short retry ladder: an unreachable PVE should fail a command in seconds, not minutes
    retry: { retries: 2, baseDelayMs: 250, maxDelayMs: 2000 },
  }
}

export function readOnlyClient(
  cluster: ResolvedCluster,
  config: ResolvedConfig,
  hooks: ClientHooks,
): PveReadOnlyClient {
  return createPveReadOnlyClient(clientOptions(cluster, config, hooks))
}

export function fullClient(cluster: ResolvedCluster, config: ResolvedConfig, hooks: ClientHooks): PveClient {
  return createPveClient(clientOptions(cluster, config, hooks))
}
