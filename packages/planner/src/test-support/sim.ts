/**
 * The PVE of the planner's unit tests: the simulator's model and HTTP layer run in this process
 * (`createInProcessSimulator`), behind the real client, so observe/execute meet PVE's behaviour without
 * sockets, TLS or a second model written for the tests.
 */
import { createInProcessSimulator, type InProcessSimulator, type InProcessOptions } from '@proxops/pve-sim'
import { createPveClient, type PveClient } from '@proxops/pve-client'

export interface SimPve {
  sim: InProcessSimulator
  /** the real client over the in-process simulator; fits both planner ports */
  client: PveClient
  /** the requests so far, as `METHOD /concrete/path` below /api2/json (for request-budget assertions) */
  requests(): string[]
  close(): Promise<void>
}

export function simPve(options: InProcessOptions = {}): SimPve {
  const sim = createInProcessSimulator({
    taskDurationMs: 10,
    resourcesLagMs: 0,
    authFailureDelayMs: 0,
    log: () => {},
    ...options,
  })
  const client = createPveClient({
    baseUrl: sim.url,
    auth: { type: 'token', tokenId: sim.token.id, secret: sim.token.secret },
    dispatcher: sim.dispatcher,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
  })
  return {
    sim,
    client,
    requests: () => sim.stats.requests.map((r) => `${r.method} ${r.rawPath}`),
    async close() {
      await client.close()
      await sim.close()
    },
  }
}
