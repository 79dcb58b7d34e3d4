/**
 * PVE clients per cluster. diff, status and adopt get the read-only client: a value without write methods,
 * so a write from them cannot compile. apply and run get the full client.
 */
import {
  createPveClient,
  createPveReadOnlyClient,
  type PveClient,
  type PveClientOptions,
  type PveReadOnlyClient,
  type RequestEvent,
} from '@proxops/pve-client'
import type { LiveReader, PveWriter } from '@proxops/planner'
import type { ResolvedCluster, ResolvedConfig } from '../config/types.js'
import type { Logger } from '../log.js'

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
    ...(hooks.onRequest ? { onRequest: (event: RequestEvent) => hooks.onRequest?.(cluster.name, event) } : {}),
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
