/**
 * `sim.control`: the transport faults of this layer (latency, failure bursts, offline nodes, token revocation)
 * together with the model's own controls (task behaviour, locks, drift, inspection; see src/model/index.ts).
 */
import type { SimCluster } from '../sim-cluster.js'
import type { AuthState } from '../http/auth.js'
import type { FailureBurst, FaultState, LatencyRule } from './faults.js'

export type { FailureBurst, LatencyRule, RequestMatcher, FaultMethod } from './faults.js'

type ModelControls = Omit<SimCluster, 'routes' | 'pveVersion' | 'setNodeOnline' | 'failNode'>

export interface TransportControls {
  /** added latency for every request (number) or for matching requests; `setLatency(0)` clears all rules */
  setLatency(rule: number | LatencyRule): void
  /** the next `count` matching requests fail with `status` (5xx JSON error; 595/596/597/599 bare status line) */
  failNext(burst: FailureBurst): void
  /** an offline node: requests proxied to it answer 595 `No route to host`; /nodes and /cluster/resources show it offline */
  setNodeOnline(node: string, online: boolean): void
  /**
   * a node fails (offline as above, its guests stop); HA fences it and recovers its HA guests on other nodes
   * (see SimCluster.failNode); `setNodeOnline(node, true)` brings it back
   */
  failNode(node: string, timing?: { fenceDelayMs?: number; agentLockMs?: number }): void
  /** every request with this token answers 401 `Authentication failed!` from now on (default: the simulator's token) */
  revokeToken(id?: string): void
  /** undo revokeToken */
  restoreToken(id?: string): void
  /** accept another API token (a full-privilege token of its user, created with the user if need be) */
  addToken(token: { id: string; secret: string }): void
  /** clear latency, bursts and offline nodes (model state is left alone) */
  clearFaults(): void
}

export type SimControl = TransportControls &
  ModelControls & {
    /** the model itself, for anything not surfaced here */
    readonly cluster: SimCluster
  }

export function createControl(
  cluster: SimCluster,
  faults: FaultState,
  auth: AuthState,
  defaultTokenId: string,
  onTokenAdded: (id: string) => void = () => {},
): SimControl {
  const token = (id: string | undefined): string => {
    const tid = id ?? defaultTokenId
    if (!auth.tokens.has(tid)) throw new Error(`pve-sim: unknown API token '${tid}'`)
    return tid
  }
  const {
    routes: _routes,
    pveVersion: _v,
    setNodeOnline: modelSetNodeOnline,
    failNode: modelFailNode,
    ...model
  } = cluster
  const transport: TransportControls = {
    setLatency: (rule) => faults.setLatency(rule),
    failNext: (burst) => faults.failNext(burst),
    setNodeOnline(node, online) {
      modelSetNodeOnline(node, online)
      if (online) faults.offlineNodes.delete(node)
      else faults.offlineNodes.add(node)
    },
    failNode(node, timing) {
      modelFailNode(node, timing)
      faults.offlineNodes.add(node)
    },
    revokeToken(id) {
      ;(auth.tokens.get(token(id)) as { revoked: boolean }).revoked = true
    },
    restoreToken(id) {
      ;(auth.tokens.get(token(id)) as { revoked: boolean }).revoked = false
    },
    addToken(t) {
      auth.addToken(t)
      onTokenAdded(t.id)
    },
    clearFaults() {
      for (const n of faults.offlineNodes) modelSetNodeOnline(n, true)
      faults.clear()
    },
  }
  return { ...model, ...transport, cluster }
}
